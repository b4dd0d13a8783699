"""Preparing one solve prompt: leakage guard, selection, the memory view, the benchmark prompt.

One path serves the runner, the dry run and ``arcmemo select``, so what a dry run shows is
what a run sends.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arcmemo.benchmarks.base import Benchmark
from arcmemo.core.records import Selection, Step
from arcmemo.core.roles import SELECT
from arcmemo.library.task import NO_LIBRARY, LibraryScope, TaskLibrary, task_library
from arcmemo.memory.edits import TrackedList, derived
from arcmemo.memory.evidence import active
from arcmemo.memory.relations import index_less
from arcmemo.memory.render import lesson_name
from arcmemo.memory.schema import Concept, Memory
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.selection.base import Selector, render_hint

# What a dry run puts where a model-based selector's choice would go.
SELECTED_AT_RUN_TIME = "(concepts chosen by the selector at run time)"


def _sole_source(sources: Sequence[str]) -> str | None:
    """The task an entry came from when it came from that task alone."""
    # Asked of every concept once per memory version: list.count compares in C, where a
    # generator over the sources cost most of the pass.
    return sources[0] if sources and sources.count(sources[0]) == len(sources) else None


def _sole_sources(concepts: Sequence[Concept]) -> dict[str, set[int]]:
    """Identities of the concepts whose only source is each task, by task id."""
    owned: dict[str, set[int]] = {}
    for concept in concepts:
        task = _sole_source(concept.provenance.sources)
        if task is not None:
            owned.setdefault(task, set()).add(id(concept))
    return owned


def hide_own_concepts(memory: Memory, task_id: str) -> Memory:
    """The memory without entries whose only source is ``task_id`` (leakage guard).

    A memory built from the tasks being evaluated must not hand a task its own solution.
    Which concepts each task owns, and the list without a task's own, are worked out once
    per version of the concept list (a task's retries see the same list, and its index).
    """

    def own(sources: list[str]) -> bool:
        return _sole_source(sources) == task_id

    hidden = derived("concepts by sole source", memory.concepts, _sole_sources).get(task_id)
    if not hidden and not any(own(les.provenance.sources) for les in memory.lessons):
        return memory

    update: dict[str, Any] = {
        "lessons": [les for les in memory.lessons if not own(les.provenance.sources)]
    }
    if hidden:  # else the copy keeps the list itself, and with it the list's index
        gone = hidden

        def without(concepts: Sequence[Concept]) -> TrackedList[Concept]:
            return TrackedList(c for c in concepts if id(c) not in gone)

        kept = derived(f"concepts less task {task_id}'s", memory.concepts, without)
        index_less(memory, gone, kept)  # its index from the memory's: no rebuild per task
        update["concepts"] = kept
    return memory.model_copy(update=update)


def _in_full_numbering(selection: Selection, memory: Memory, visible: Memory) -> Selection:
    """``selection`` with its lesson names numbered as in ``memory``, not in the ``visible``
    copy that hid a task's own lessons (the solve prompt keeps the visible numbers; the
    record and the selection statistics must name the same lessons in the real memory)."""
    if visible is memory or len(visible.lessons) == len(memory.lessons):
        return selection
    shown = {id(lesson) for lesson in visible.lessons}  # the same objects, filtered
    kept = [i for i, lesson in enumerate(memory.lessons) if id(lesson) in shown]
    renumber = {lesson_name(v): lesson_name(i) for v, i in enumerate(kept)}
    return selection.model_copy(
        update={"selected": [renumber.get(name, name) for name in selection.selected]}
    )


def selection_library(
    memory: Memory, task_id: str, selected: Sequence[str], scope: LibraryScope
) -> TaskLibrary:
    """The library a task's prompt shows and its programs import for the ``selected``
    entries: the functions of those non-retired concepts of ``memory``, never the task's own
    (:func:`~arcmemo.library.task.task_library`)."""
    return task_library(hide_own_concepts(active(memory), task_id), task_id, selected, scope)


@dataclass
class PreparedPrompt:
    """A solve prompt and how its memory section was chosen."""

    messages: list[Message]
    selection: Selection | None
    # The memory section shown to the solver ("" without memory).
    concepts: str
    # Dry runs only: the prompts a model-based selector would have sent.
    selection_prompts: list[str] = field(default_factory=list)
    # The memory functions the prompt shows and the task's programs may import.
    library: TaskLibrary = NO_LIBRARY


async def prepare_prompt(
    benchmark: Benchmark[Any],
    task: Any,
    *,
    memory: Memory | None,
    selector: Selector,
    clients: Mapping[str, ModelClient] | None = None,
    previous: Step | None = None,
    preview: bool = False,
    library_scope: LibraryScope = "selected",
    model: ModelClient | None = None,
) -> PreparedPrompt:
    """Select memory entries for ``task`` and render its solve prompt.

    ``clients``: the client of each model role (:mod:`arcmemo.core.roles`) the selector may
    call (it calls its own role's; none given: a selector that calls a model fails).
    ``model`` (deprecated, read until the next release): the select role's client alone.
    ``previous`` is the failed step a retry answers (selectors see its completion).
    With ``preview``, a selector that would call a model is not called: its prompts are
    returned instead and the memory section says it is chosen at run time.
    ``library_scope``: which memory functions the task may import
    (:func:`~arcmemo.memory.task_library.task_library`; never its own).
    """
    if model is not None:
        warnings.warn(
            "prepare_prompt(model=) is deprecated: pass clients={'select': model} (the client "
            "of each model role)",
            DeprecationWarning,
            stacklevel=2,
        )
        clients = {**(clients or {}), SELECT: model}
    selection: Selection | None = None
    concepts = ""
    selection_prompts: list[str] = []
    library = NO_LIBRARY
    if memory is not None:
        task_id = benchmark.task_id(task)
        visible = hide_own_concepts(active(memory), task_id)  # retired: never selected
        problem = benchmark.describe(task)
        selector = selector.offline() if preview else selector
        if preview and selector.uses_model:
            selection_prompts = await selector.preview(visible, problem, task_id=task_id)
            concepts = render_hint(visible, SELECTED_AT_RUN_TIME)
        else:
            # Only a selector that runs code on them gets the visible examples (and the
            # run's sandbox to run it in).
            extra = (
                {"examples": benchmark.examples(task), "sandbox": benchmark.sandbox.get}
                if selector.uses_examples
                else {}
            )
            selection = await selector.select(
                visible,
                problem,
                task_id=task_id,
                clients=clients or {},
                previous_attempt=previous.completion if previous else None,
                **extra,
            )
            concepts = selector.render(visible, selection)
            library = selection_library(memory, task_id, selection.selected, library_scope)
            selection = _in_full_numbering(selection, memory, visible)
    return PreparedPrompt(
        messages=benchmark.prompt(task, concepts=concepts, previous=previous, library=library),
        selection=selection,
        concepts=concepts,
        selection_prompts=selection_prompts,
        library=library,
    )
