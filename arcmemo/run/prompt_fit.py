"""Fitting a solve or retry prompt to the solver's context window by cutting its parts in a
stated order.

A prompt is fitted when the model's window is known (``--model-arg context_window=N``, the
server's report, or the packaged table: :meth:`ModelClient.context_window`). It aims at the
window less the room kept for the answer (:func:`~arcmemo.models.context.answer_room`, as
the llm selector's own prompt does) and counts tokens the same way
(:func:`~arcmemo.core.tokens.estimate_tokens`). A prompt within that budget goes whole; else the
parts of :data:`CUT_ORDER` are cut one after another, each only where the prompt holds it,
until it fits; those of :data:`WINDOW_ONLY` only while the prompt does not fit the window
itself (an answer with less room beats a prompt without its memory or its program). Where
not even every cut brings it within the window, the smallest prompt goes and the model
client records the task ``prompt_too_long``, which now means that the minimal prompt (the
puzzle, the instructions and, on a retry, the errors of the previous program) could not
fit. What was cut is recorded on the step (:class:`~arcmemo.core.records.PromptFit`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, get_args

from arcmemo.benchmarks.base import NO_CUTS, PromptCuts
from arcmemo.core.records import CutPart, PromptCut, PromptFit
from arcmemo.library.task import TaskLibrary
from arcmemo.models.base import Message
from arcmemo.models.context import answer_room
from arcmemo.models.sending import prompt_tokens

# The order parts are cut in (records.CutPart), what the model can best spare first:
# 1. the grids the previous program produced: each costs as much as an output grid, the
#    expected outputs are already among the examples above, and a one-line summary (shape,
#    cells unlike the expected) keeps the fact and the size of each miss;
# 2. the previous answer's prose outside the program: the program is the hypothesis the
#    feedback is about, the reasoning that led to it is the longest and least needed part;
# 3. the library's docstrings: names and typed signatures still say what each does;
# 4. the concepts a retry selected again: a second opinion on top of the first block;
# 5. library functions from the listing, least used first
#    (TaskLibrary.least_used_first): they stay importable, only the prompt stops naming
#    them; the listing goes before the memory block, which describes the same concepts;
# 6. the memory block: advice, where the puzzle is the task;
# 7. the errors' tracebacks: each error keeps its last line (the exception and its
#    message), and one that repeats an earlier example's names that example; the frames
#    only say where in the program it failed;
# 8. the previous program: last, since without it a retry is a fresh try told its errors.
# Never cut: the puzzle's grids, the instructions, what each error was.
CUT_ORDER: tuple[CutPart, ...] = get_args(CutPart)  # the Literal names them in this order
# Cut only while the prompt does not fit the window at all, never for the answer's room:
# these change what the solver is told (the memory it is shown, what its program was),
# where the cuts before them drop repetition or detail.
WINDOW_ONLY: frozenset[CutPart] = frozenset(
    {"memory block", "error tracebacks", "previous program"}
)


@dataclass(frozen=True)
class FittedPrompt:
    """A prompt as sent, and what was cut from it (None: it went whole)."""

    messages: list[Message]
    fit: PromptFit | None = None

    @property
    def cuts(self) -> list[PromptCut]:
        return self.fit.cuts if self.fit is not None else []

    def shown(self, selected: list[str], block: CutPart) -> list[str]:
        """The ``selected`` entries as the prompt shows them: none where ``block``, the part
        that lists them, was cut (then the solver never saw them: no evidence about them)."""
        return [] if any(cut.part == block for cut in self.cuts) else selected


def _cut_steps(library: TaskLibrary) -> Iterator[tuple[CutPart, PromptCuts, str]]:
    """Each cut of :data:`CUT_ORDER` in turn, as the cuts made so far, with its detail;
    the library's functions one at a time."""
    cuts = NO_CUTS
    for part in CUT_ORDER:
        if part == "library functions":
            for name in library.least_used_first():
                cuts = replace(cuts, library_functions=(*cuts.library_functions, name))
                yield part, cuts, name
            continue
        cuts = _cut(cuts, part)
        yield part, cuts, ""


# The PromptCuts flag that cuts each part whole (the library's functions go one by one).
_WHOLE_PART_FLAGS: dict[CutPart, str] = {
    "produced grids": "produced_grids",
    "answer prose": "answer_prose",
    "library docstrings": "library_docstrings",
    "reselected concepts": "reselected",
    "memory block": "memory_block",
    "error tracebacks": "error_tracebacks",
    "previous program": "previous_program",
}


def _cut(cuts: PromptCuts, part: CutPart) -> PromptCuts:
    """``cuts`` and the whole of ``part`` (any part but the library's functions)."""
    flag: dict[str, Any] = {_WHOLE_PART_FLAGS[part]: True}
    return replace(cuts, **flag)


def _with_cut(made: list[PromptCut], part: CutPart, detail: str, saved: int) -> list[PromptCut]:
    """``made`` and one more cut; the library's functions as one entry naming them all."""
    if made and part == "library functions" and made[-1].part == part:
        last = made[-1]
        merged = PromptCut(
            part=part, detail=f"{last.detail}, {detail}", tokens_saved=last.tokens_saved + saved
        )
        return [*made[:-1], merged]
    return [*made, PromptCut(part=part, detail=detail, tokens_saved=saved)]


def fit_prompt(
    render: Callable[[PromptCuts], list[Message]],
    library: TaskLibrary,
    *,
    window: int | None,
    answer_tokens: int | None,
) -> FittedPrompt:
    """The prompt ``render`` makes, cut to fit ``window`` with room for an answer of
    ``answer_tokens`` (see the module docstring); ``library`` is the one it lists."""
    full = render(NO_CUTS)
    if window is None:
        return FittedPrompt(full)
    budget = window - answer_room(window, answer_tokens)
    full_tokens = prompt_tokens(full)
    if full_tokens <= budget:
        return FittedPrompt(full)
    current, tokens = full, full_tokens
    made: list[PromptCut] = []
    for part, cuts, detail in _cut_steps(library):
        if part in WINDOW_ONLY and tokens < window:
            break  # it fits the window: what is left is worth more than the answer's room
        candidate = render(cuts)
        size = prompt_tokens(candidate)
        if size >= tokens:
            continue  # the prompt holds none of that part
        current, made = candidate, _with_cut(made, part, detail, tokens - size)
        tokens = size
        if tokens <= budget:
            break
    if not made:
        return FittedPrompt(full)
    fit = PromptFit(
        context_window=window, budget=budget, full_tokens=full_tokens, tokens=tokens, cuts=made
    )
    return FittedPrompt(current, fit)
