"""One object for an agent loop that is not arcmemo's runner: ``arcmemo.open_memory``.

    mem = arcmemo.open_memory("memory.json", roles={"select": SPEC, "abstract": SPEC})
    picked = await mem.select(problem)            # concepts for the problem, and its prompt
    ...                                           # the agent solves it, checks it
    await mem.learn(problem, solution, verified=True)
    mem.record_outcome(picked.concepts, solved=True, task_id=picked.task_id)

A problem is text (any domain) or a task of the benchmark the memory was opened with (an
ARC task with ``benchmark="arc-agi-1"``). The paths are a run's: selection through
:func:`~arcmemo.run.solve_prompt.prepare_prompt` (with its leakage guard: a problem is never
shown what was learned from itself alone), abstraction by the memory format's abstractor,
outcomes through the run's statistics and attribution (:mod:`arcmemo.agent.outcomes`).

Several writers at once, in one process or many: every write takes the memory file's lock,
reloads the file when another writer changed it, applies its change, and writes atomically
(the previous version kept as ``NAME.bak``), so a write never loses another's; it fails at
once while an ``arcmemo run`` holds the memory's writer lock. Reads reload a changed file, and
see a whole memory (writes are atomic). ``learn`` and ``record_outcome`` write as they go;
``save`` writes edits made to :attr:`AgentMemory.memory` directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcmemo.abstraction.base import ABSTRACTORS, create_abstractor
from arcmemo.abstraction.outcome import AbstractionOutcome
from arcmemo.abstraction.pitfall import FailedItem
from arcmemo.agent.outcomes import OutcomeRecord, record_outcome
from arcmemo.benchmarks.base import BENCHMARKS, Benchmark
from arcmemo.benchmarks.jsonl.benchmark import TextBenchmark
from arcmemo.benchmarks.jsonl.data import TextProblem
from arcmemo.core.files import LockHeldError, atomic_write_text, file_lock, held_lock
from arcmemo.core.records import Step
from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import ABSTRACT, AUX, SELECT, for_role
from arcmemo.memory.schema import Memory
from arcmemo.memory.store import MemorySaveError, checked_dump, load_memory
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient, open_model
from arcmemo.run.session import writer_lock_path
from arcmemo.run.solve_prompt import prepare_prompt
from arcmemo.sandbox.text import visible_text
from arcmemo.selection.base import SELECTORS, Selector

# The roles the facade calls a model for (each falls back as in a run: arcmemo.core.roles).
ROLES = (SELECT, ABSTRACT, AUX)


class MemoryBusyError(RuntimeError):
    """A live ``arcmemo run`` is writing this memory (its writer lock is held)."""


class MemoryChangedError(RuntimeError):
    """``save`` of direct edits refused: another writer changed the file since it was read."""


@dataclass
class Selected:
    """What :meth:`AgentMemory.select` chose for a problem.

    The memory is untrusted text (:mod:`arcmemo.memory.untrusted`): the names and the block
    show its control characters and bidirectional overrides escaped (``\\x1b``,
    ``\\u202e``), as every command that prints memory text does; the solve prompt's
    messages drop them, as every prompt does."""

    task_id: str
    concepts: list[str]
    # The memory block to put into the agent's own prompt ("" when nothing was chosen).
    block: str
    # The benchmark's whole solve prompt with that block, for an agent that uses it as is.
    messages: list[Message] = field(default_factory=list)


def text_task_id(problem: str) -> str:
    """A free-text problem's id when none is given: the same text, the same id (so the
    leakage guard recognises it)."""
    return "text-" + hashlib.sha256(problem.encode("utf-8")).hexdigest()[:16]


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)


class AgentMemory:
    """A memory file, a selector, a memory format and the models they call."""

    def __init__(
        self,
        path: Path,
        *,
        models: Mapping[str, ModelClient],
        selector: Selector,
        abstractor: ComponentSpec,
        benchmark: Benchmark[Any],
        domain: str,
        origin: str,
        owned: list[ModelClient],
    ) -> None:
        self.path = path
        self.models = dict(models)
        self.selector = selector
        self.abstractor = abstractor
        self.benchmark = benchmark
        self.domain = domain
        self.origin = origin
        self._owned = owned
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._memory = Memory(domain=domain)
        self._dirty_check: str | None = None
        self._refresh()

    # -- reading ---------------------------------------------------------------------------

    def _refresh(self) -> None:
        stamp = _stamp(self.path)
        if stamp is not None and stamp != self._stamp:
            self._memory = load_memory(self.path)
            self._stamp = _stamp(self.path)
            try:
                self._dirty_check = checked_dump(self._memory, self.path)
            except MemorySaveError:
                # Unsafe text (memory.untrusted): it is read, shown escaped; writes refuse it.
                self._dirty_check = None

    @property
    def memory(self) -> Memory:
        """The memory as last read or written (reloaded when the file changed)."""
        with self._lock:
            self._refresh()
            return self._memory

    def model(self, role: str) -> ModelClient | None:
        """The client of ``role`` (select, abstract, aux), or of the role it falls back to."""
        return for_role(self.models, role)

    def task(self, problem: Any, task_id: str | None = None) -> Any:
        """The benchmark task of ``problem``: text becomes a text problem."""
        if isinstance(problem, str):
            if not problem.strip():
                raise ValueError("the problem is empty")
            return TextProblem(id=task_id or text_task_id(problem), problem=problem)
        return problem

    async def select(self, problem: Any, *, task_id: str | None = None) -> Selected:
        """Choose the memory's entries for ``problem`` with the configured selector."""
        task = self.task(problem, task_id)
        memory = self.memory
        if self.selector.uses_model and self.model(SELECT) is None:
            raise ValueError(f"the {self.selector.name} selector needs a select model (roles=)")
        prepared = await prepare_prompt(
            self.benchmark, task, memory=memory, selector=self.selector, clients=self.models
        )
        return Selected(
            task_id=self.benchmark.task_id(task),
            concepts=[visible_text(n) for n in prepared.selection.selected]
            if prepared.selection
            else [],
            block=visible_text(prepared.concepts),
            messages=prepared.messages,
        )

    def search(self, query: str, *, limit: int = 10) -> list[str]:
        """Names of the concepts whose text holds the most of ``query``'s words (shown
        escaped, as :class:`Selected`'s)."""
        words = {w for w in query.lower().split() if len(w) > 2}
        scored = []
        for concept in self.memory.concepts:
            if concept.retired:
                continue
            text = " ".join(
                [concept.name, concept.description, *concept.cues, *concept.implementation]
            ).lower()
            hits = sum(w in text for w in words)
            if hits:
                scored.append((-hits, concept.name))
        return [visible_text(name) for _, name in sorted(scored)[:limit]]

    # -- writing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Memory]:
        """The newest memory under the file lock; saved atomically when the block ends."""
        with self._lock, file_lock(self.path):
            try:
                with held_lock(
                    writer_lock_path(self.path), holder=f"pid {os.getpid()} ({self.origin})"
                ):
                    pass  # only checks that no live run is writing it
            except LockHeldError as error:
                raise MemoryBusyError(
                    f"{self.path} is being written by a live run ({error.holder})"
                ) from None
            self._refresh()
            yield self._memory
            self._write()

    def _write(self) -> None:
        text = checked_dump(self._memory, self.path)
        atomic_write_text(self.path, text, backup=self.path.exists())
        self._stamp = _stamp(self.path)
        self._dirty_check = text

    async def _writing_async(self) -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        # The locks may wait for another writer: not on the event loop.
        await asyncio.to_thread(stack.enter_context, self._writing())
        return stack

    async def learn(
        self,
        problem: Any,
        solution: str,
        *,
        verified: bool | None,
        feedback: str | None = None,
        task_id: str | None = None,
        origin: str | None = None,
    ) -> AbstractionOutcome | None:
        """Write what ``solution`` teaches into the memory and save it.

        Only a ``verified`` solution is abstracted (as a run writes only what its write
        signal confirms); a failed one (``verified=False``) with ``feedback`` writes a pitfall
        when the memory format's ``pitfalls`` option is on. Otherwise nothing is written and
        None is returned. ``origin`` (default: the memory's) is recorded in the history of
        what the write added."""
        task = self.task(problem, task_id)
        if self.model(ABSTRACT) is None:
            raise ValueError("learning needs an abstract model (roles=)")
        abstractor = create_abstractor(self.abstractor, self.models)
        tid = self.benchmark.task_id(task)
        step = Step(round=0, completion=solution, candidate=solution, verified=verified)
        if verified:
            item = self.benchmark.solved_item(task, step)
            item = item.model_copy(update={"domain": self.domain})
            write = abstractor.abstract
            argument: Any = item
        elif verified is False and feedback and abstractor.writes_pitfalls:
            argument = FailedItem(
                task_id=tid, domain=self.domain, problem=self.benchmark.describe(task),
                attempt=solution, feedback=feedback,
            )  # fmt: skip
            write = abstractor.learn_from_failure  # type: ignore[assignment]
        else:
            return None
        stack = await self._writing_async()
        with stack:
            memory = self._memory
            before = len(memory.history)
            outcome = await write(memory, argument, self.models)
            through = f"through {origin or self.origin}"
            for entry in memory.history[before:]:
                entry.why = f"{entry.why} ({through})" if entry.why else through
        return outcome

    def record_outcome(
        self,
        concepts: list[str],
        *,
        solved: bool,
        task_id: str | None = None,
        outcome_id: str | None = None,
        solution: str | None = None,
        origin: str | None = None,
    ) -> OutcomeRecord:
        """Record that a problem shown ``concepts`` was solved or not, and save it
        (:mod:`arcmemo.agent.outcomes`); the same ``outcome_id`` twice counts once."""
        tid = task_id or outcome_id or f"outcome-{os.urandom(6).hex()}"
        with self._writing() as memory:
            return record_outcome(
                memory, concepts, solved=solved, task_id=tid, outcome_id=outcome_id,
                solution=solution, actor=origin or self.origin,
            )  # fmt: skip

    def save(self) -> None:
        """Write edits made to :attr:`memory` directly (learn and record_outcome already
        saved theirs). Refused when another writer changed the file since it was read: the
        edits would overwrite that writer's."""
        with self._lock, file_lock(self.path):
            if _stamp(self.path) != self._stamp:
                raise MemoryChangedError(
                    f"{self.path} was changed by another writer since it was read; "
                    "reload (open it again) and repeat the edits"
                )
            if self._stamp is None or checked_dump(self._memory, self.path) != self._dirty_check:
                self._write()

    async def aclose(self) -> None:
        """Close the model clients this memory opened (given ones stay open)."""
        for client in {id(c): c for c in self._owned}.values():
            await client.aclose()
        self.benchmark.close()

    async def __aenter__(self) -> AgentMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _spec(given: str | ComponentSpec) -> ComponentSpec:
    """A memory format's spec, its options checked now rather than at the first write."""
    spec = ComponentSpec(name=given) if isinstance(given, str) else given
    return ABSTRACTORS.spec(spec.name, spec.options)


def open_memory(
    path: str | Path,
    *,
    roles: Mapping[str, str | ModelClient] | None = None,
    selector: str | ComponentSpec | None = None,
    memory_format: str | ComponentSpec | None = None,
    benchmark: str | Benchmark[Any] | None = None,
    domain: str | None = None,
    origin: str = "python",
) -> AgentMemory:
    """Open the memory at ``path`` (created on its first write when it does not exist).

    ``roles``: a ``provider:model`` spec or an open client per role (``select``,
    ``abstract``, and ``aux`` which both fall back to). ``selector``: a registered selector,
    by name or with options (default ``llm`` with a select model, else ``all``).
    ``memory_format``: ``ps``, ``oe`` or ``cheatsheet``, by name or with options (default:
    ``ps``). ``benchmark``: what non-text problems are (default
    text only). ``domain``: a new memory's domain (default ``text``). ``origin``: who
    writes, recorded in the history (the MCP server names its client here).
    """
    path = Path(path)
    owned: list[ModelClient] = []
    models: dict[str, ModelClient] = {}
    for role, given in (roles or {}).items():
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}: use {', '.join(ROLES)}")
        if isinstance(given, str):
            client = open_model(given)
            owned.append(client)
            models[role] = client
        else:
            models[role] = given
    has_select = for_role(models, SELECT) is not None
    chosen = SELECTORS.create(selector or ("llm" if has_select else "all"))
    if isinstance(benchmark, str):
        bench: Benchmark[Any] = BENCHMARKS.create(benchmark)
    else:
        bench = benchmark or TextBenchmark()
    existing = load_memory(path).domain if path.exists() else None
    return AgentMemory(
        path,
        models=models,
        selector=chosen,
        abstractor=_spec(memory_format or "ps"),
        benchmark=bench,
        domain=existing or domain or "text",
        origin=origin,
        owned=owned,
    )
