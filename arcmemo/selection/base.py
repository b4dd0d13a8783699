"""The selector interface: which memory entries a task's solve prompt shows in full.

Selectors are registered in :data:`SELECTORS` (``--select NAME``, ``--select-arg k=v``);
each declares its options model. A selector also renders the memory section of the solve
prompt: the chosen entries inside the hint block of the memory's format
(``prompts/<domain>/hints/<format>.j2``, else ``prompts/hints/<format>.j2``), which explains
how to read and use them. Lesson and cheatsheet memories get their own blocks, with nothing
of the program-synthesis format in them.
"""

from __future__ import annotations

import abc
import inspect
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, Field

from arcmemo.core import prompting
from arcmemo.core.records import Selection
from arcmemo.core.registry import ComponentSpec, Registry
from arcmemo.core.resources import data_dir
from arcmemo.core.roles import SELECT, for_role
from arcmemo.memory.paper_view import render_paper
from arcmemo.memory.render import SOLVE_BUDGET_TOKENS, lesson_name
from arcmemo.memory.schema import Memory
from arcmemo.models.client import ModelClient

if TYPE_CHECKING:
    from arcmemo.sandbox import Sandbox

# The name of a memory format (a registered abstractor, arcmemo.abstraction.ABSTRACTORS).
MemoryFormat = str
# A task's visible input/output pairs (ARC's train pairs), for selectors that run code on them.
Examples = Sequence[tuple[Any, Any]]
# The run's sandbox (--sandbox), opened on the first call: a selector that runs code on the
# examples runs it there unless its own options name another sandbox.
RunSandbox = Callable[[], "Sandbox"]
_DOMAIN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def memory_format(memory: Memory) -> MemoryFormat:
    """What a memory holds: concepts (``ps``), else lessons (``oe``), else a cheatsheet."""
    if memory.concepts:
        return "ps"
    return "oe" if memory.lessons else "cheatsheet"


def hint_template(domain: str, fmt: MemoryFormat) -> str:
    """The hint template of ``fmt`` for ``domain`` (the generic one when it has none)."""
    own = f"{domain}/hints/{fmt}.j2"
    if _DOMAIN.match(domain) and (data_dir("prompts") / own).is_file():
        return own
    return f"hints/{fmt}.j2"


def render_hint(
    memory: Memory,
    body: str,
    *,
    everything: bool = False,
    description: str = "",
    fmt: MemoryFormat | None = None,
) -> str:
    """``body`` (rendered memory entries) inside the hint block of ``fmt`` (default: the
    memory's format); empty when there is nothing to show."""
    if not body.strip():
        return ""
    return prompting.render(
        hint_template(memory.domain, fmt or memory_format(memory)),
        memory=body.rstrip(),
        everything=everything,
        description=description.strip(),
    )


def every_name(memory: Memory) -> list[str]:
    """The name of every entry of ``memory``: its concepts', then its lessons'."""
    names = [c.name for c in memory.concepts]
    return names + [lesson_name(i) for i in range(len(memory.lessons))]


class MemoryViewOptions(BaseModel):
    """Options of selectors that show a concept memory: which view of it they show."""

    view: prompting.PromptStructure = prompting.structure_option(
        "How an ARC concept memory is shown. paper (the default): the published code's "
        "view, arcmemo.memory.paper_view (its sections and typed lines, no relation lines or "
        "types arcmemo declared), in the solve hint prompts/arc/hints/paper.j2 (the selected "
        "concepts in full, every other by title; with all, every concept in full) and, for "
        "the llm selector, the selection prompt prompts/selection/paper.j2 (introduction, the "
        "field guide and its advice, the memory, instructions, the puzzle last). arcmemo: "
        "arcmemo's views (types first, relation lines, parameter descriptions) in "
        "prompts/<domain>/hints/ps.j2 and prompts/selection/select.j2. Over a budget the "
        "paper's view raises the usage threshold and cuts other titles, most used kept. "
        "Other domains' concept memories (the published code has no prompts for them), "
        "lesson and cheatsheet memories are shown the arcmemo way either way.",
    )


class SolveViewOptions(MemoryViewOptions):
    """Options of selectors whose solve prompt shows the memory's solve view."""

    solve_budget_tokens: int | None = Field(
        default=SOLVE_BUDGET_TOKENS,
        ge=1,
        description="Exact cap (estimated tokens) on the memory section of the solve "
        "prompt: the selected entries first, then other titles most useful first, the rest "
        "counted; None = every title.",
    )


def warn_if_empty(selection: Selection, why: str | None = None) -> Selection:
    """``selection`` with a warning when it chose nothing from a non-empty memory (callers
    of model-based selectors only): ``why`` (a failure), else the names that resolved to
    nothing, else that the answer named none."""
    if selection.selected:
        return selection
    if why is None:
        why = (
            f"no name resolved ({', '.join(selection.unknown)})"
            if selection.unknown
            else "the answer named no entry"
        )
    return selection.model_copy(
        update={"warning": f"the {selection.selector} selection chose nothing: {why}"}
    )


# Where a previewed prompt would hold the model's earlier answer (Selector.preview).
EARLIER_ANSWER = "(the model's earlier answer goes here)"


class Selector(abc.ABC):
    """Picks memory entries for one task.

    :meth:`select` is given the run's client of each model role (``clients``, by role
    name: :mod:`arcmemo.core.roles`); a selector that calls a model calls the select role's
    (:meth:`client`: a role left out calls its fallback's).
    """

    name: ClassVar[str]  # set by the registry: the name it is registered under
    # True when select() calls a model (the run then needs the selector's model).
    uses_model: ClassVar[bool] = False
    # True when select() takes the task's visible examples (``examples=``, an Examples) and
    # the run's sandbox (``sandbox=``, a RunSandbox); a selector's options may turn it on
    # (the llm selector's behaviour pre-filter).
    uses_examples: bool = False
    # Cap on the solve view (SolveViewOptions sets it from the selector's options).
    solve_budget_tokens: int | None = None
    # The view of a concept memory it shows (MemoryViewOptions sets it from the selector's
    # options); a selector without that option shows arcmemo's, as before the option existed.
    view: prompting.PromptStructure = "arcmemo"

    @abc.abstractmethod
    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        clients: Mapping[str, ModelClient],
        previous_attempt: str | None = None,
    ) -> Selection:
        """Choose entries of ``memory`` for ``problem`` (``previous_attempt`` on retries),
        calling the select role's client of ``clients`` (:meth:`client`) if it calls a
        model."""

    def client(self, clients: Mapping[str, ModelClient]) -> ModelClient:
        """The select role's client in ``clients`` (else its fallback's); a one-line error
        when none is given."""
        found = for_role(clients, SELECT)
        if found is None:
            raise ValueError(f"the {self.name} selector needs a model (the {SELECT} role's)")
        return found

    async def preview(self, memory: Memory, problem: str, *, task_id: str) -> list[str]:
        """The prompts one selection would send to the model, in order (dry runs count and
        show them); a prompt built from an earlier answer holds :data:`EARLIER_ANSWER`
        where that answer goes. Empty when no model would be called."""
        if self.uses_model:
            raise NotImplementedError(f"{type(self).__name__} calls a model but has no preview")
        return []

    def offline(self) -> Selector:
        """This selector as a dry run uses it: calling no remote service besides the model
        (which :meth:`preview` stands in for)."""
        return self

    def shows_paper_view(self, memory: Memory) -> bool:
        """Whether ``memory`` is shown in the paper's view: the selector's ``view`` is paper
        and the memory holds ARC concepts, the only memories the paper's prompts were
        written for."""
        return self.view == "paper" and memory.domain == "arc" and memory_format(memory) == "ps"

    def render(self, memory: Memory, selection: Selection) -> str:
        """The memory section of the solve prompt for ``selection`` (its hint block)."""
        if self.shows_paper_view(memory):
            return render_paper_hint(memory, selection.selected, self.solve_budget_tokens)
        body = memory.render(
            "solve", selected=selection.selected, budget_tokens=self.solve_budget_tokens
        )
        return render_hint(memory, body)


def render_paper_hint(
    memory: Memory,
    selected: Sequence[str],
    budget_tokens: int | None = None,
    *,
    everything: bool = False,
) -> str:
    """The paper's solve hint (``prompts/arc/hints/paper.j2``) over the paper's solve view
    of ``memory`` with ``selected`` in full (``everything``: every entry is)."""
    body = render_paper(memory, selected, budget_tokens=budget_tokens)
    return prompting.render("arc/hints/paper", memory=body, everything=everything)


class SelectorRegistry(Registry[Selector]):
    """The selectors' registry: a selector written for ``select(..., model=)`` (a client
    picked by its caller, before selectors took ``clients``) is built adapted, with a
    DeprecationWarning, for one release."""

    def create(self, spec: ComponentSpec | str, **context: Any) -> Selector:
        return _adapted_model_keyword(super().create(spec, **context))


def _adapted_model_keyword(selector: Selector) -> Selector:
    """``selector`` itself, or (when its ``select`` takes ``model=`` and no ``clients=``)
    with a ``select`` of the current interface that passes its role's client as ``model``."""
    parameters = inspect.signature(type(selector).select).parameters
    if "clients" in parameters or "model" not in parameters:
        return selector
    warnings.warn(
        f"selector {selector.name!r} ({type(selector).__qualname__}) takes select(..., "
        "model=); selectors now take clients= (the client of each model role) and call "
        "the select role's (Selector.client). model= is adapted until the next release.",
        DeprecationWarning,
        stacklevel=3,
    )
    old_select = selector.select

    async def select(
        memory: Memory, problem: str, *, clients: Mapping[str, ModelClient], **rest: Any
    ) -> Selection:
        model = for_role(clients, SELECT)
        return await old_select(memory, problem, model=model, **rest)  # type: ignore[call-arg]

    vars(selector)["select"] = select  # this instance only; its class stays as written
    return selector


SELECTORS: Registry[Selector] = SelectorRegistry(
    "selector",
    modules={
        "llm": "arcmemo.selection.llm",
        "embedding": "arcmemo.selection.embedding",
        "all": "arcmemo.selection.simple",
        "none": "arcmemo.selection.simple",
        "describe": "arcmemo.selection.describe",
        "dcrs": "arcmemo.selection.dcrs",
        "behaviour": "arcmemo.selection.behaviour",
    },
)
