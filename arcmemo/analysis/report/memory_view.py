"""The memory section of a run report: what the run added and changed, and what it used."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from arcmemo.analysis.report.links import MemoryIndex
from arcmemo.analysis.report.load import RunData
from arcmemo.memory.evidence import evidence_count, usefulness_key
from arcmemo.memory.schema import Concept, Memory

# (name, link to its entry or None, sources or changed fields)
Change = tuple[str, str | None, list[str]]


def _content(concept: Concept) -> dict[str, Any]:
    data = concept.model_dump(mode="json", exclude={"stats"})
    data["provenance"].pop("updated_at", None)
    return data


@dataclass
class MemoryView:
    """The memory section of a run report."""

    before: tuple[int, int, int] | None
    after: tuple[int, int, int]
    added: list[Change]
    changed: list[Change]
    removed: list[str]
    basis: str
    # (name, link, selections, selections in solved tasks, tasks) per selected name
    usage: list[tuple[str, str | None, int, int, int]]
    # Selections of some entry whose prompt got no answer (left out of usage).
    unanswered: int
    # Prompt variants per task (--variants): each selects on its own.
    variants: int
    memory: Memory
    groups: list[tuple[str, list[Concept]]]
    marks: dict[str, str]
    # (name, link, helpful, unused, harmful, retired) per concept with attribution evidence
    attribution: list[tuple[str, str | None, int, int, int, bool]] = field(default_factory=list)
    # With --cite: (name, link, tasks shown, tasks cited, cited in solved tasks) per entry
    # shown, and the citations of names the prompt did not show (never credited).
    citations: list[tuple[str, str | None, int, int, int]] = field(default_factory=list)
    cited_unshown: int = 0


def _size(memory: Memory) -> tuple[int, int, int]:
    return (len(memory.concepts), len(memory.lessons), len(memory.types))


def concept_groups(concepts: list[Concept]) -> list[tuple[str, list[Concept]]]:
    """Concepts grouped by kind and routine subtype, structures first, by id within."""
    groups: dict[tuple[int, str], list[Concept]] = {}
    for concept in concepts:
        key = (
            (0, "structures")
            if concept.kind == "structure"
            else (1, f"routines: {concept.routine_subtype or 'misc'}")
        )
        groups.setdefault(key, []).append(concept)
    return [(key[1], sorted(groups[key], key=lambda c: c.id)) for key in sorted(groups)]


def _changes_against(
    before: Memory, final: Memory, run_ids: set[str], index: MemoryIndex
) -> tuple[list[Change], list[Change], list[str]]:
    """Added, changed and removed entries: the input memory compared with the last snapshot."""
    added: list[Change] = []
    changed: list[Change] = []
    old = {c.id: c for c in before.concepts}
    for concept in final.concepts:
        sources = sorted(set(concept.provenance.sources) & run_ids)
        if concept.id not in old:
            added.append((concept.name, index.link(concept.name), sources))
            continue
        was, now = _content(old[concept.id]), _content(concept)
        fields = sorted(k for k in now if now[k] != was.get(k))
        if fields:
            changed.append((concept.name, index.link(concept.name), fields))
    removed = sorted(c.name for c in before.concepts if final.find(c.name) is None)
    return added, changed, removed


def _changes_from_history(
    final: Memory, run_ids: set[str], index: MemoryIndex
) -> tuple[list[Change], list[Change]]:
    """Added and changed entries as the history entries of the run's tasks tell them."""
    added: list[Change] = []
    changed: list[Change] = []
    seen: set[str] = set()
    for entry in final.history:
        if entry.task_id not in run_ids or entry.op not in ("add", "merge"):
            continue
        concept = final.find(entry.target)
        name = concept.name if concept else entry.target
        if entry.op == "add" and name not in seen:
            added.append((name, index.link(name), [entry.task_id]))
            seen.add(name)
        elif entry.op == "merge":
            changed.append((name, index.link(name), entry.changes or [f"by {entry.task_id}"]))
    return added, changed


def _usage(
    run: RunData, index: MemoryIndex
) -> tuple[list[tuple[str, str | None, int, int, int]], int]:
    """Per selected name: its link, how many selections chose it and how many of those were
    in solved tasks (with ``--variants`` each prompt variant's selection counts), and in how
    many tasks some selection chose it; and how many selections were left out.

    A selection counts only when the solver answered its prompt, as in the memory's own
    statistics (:attr:`~arcmemo.core.records.TaskResult.shown`): one whose prompt was too long
    for the window or whose call failed was never seen, so it is counted apart."""
    selected: Counter[str] = Counter()
    selected_solved: Counter[str] = Counter()
    tasks: Counter[str] = Counter()
    unanswered = 0
    for result in run.results:
        answered = result.answered_variants
        seen = []
        for variant, selection in result.variant_selection_pairs:
            if variant not in answered:
                unanswered += bool(selection.selected)
                continue
            seen.append(selection)
            for name in selection.selected:
                selected[name] += 1
                selected_solved[name] += result.solved
        tasks.update({name for s in seen for name in s.selected})
    rows = [
        (name, index.link(name), count, selected_solved[name], tasks[name])
        for name, count in sorted(selected.items(), key=lambda item: (-item[1], item[0]))
    ]
    return rows, unanswered


def _citations(
    run: RunData, index: MemoryIndex
) -> tuple[list[tuple[str, str | None, int, int, int]], int]:
    """Per entry shown in an answered prompt (tasks): shown, cited by an answered step, and
    cited in a solved task, most cited first; and how many citations named an entry that
    the step's prompt did not show."""
    shown: Counter[str] = Counter()
    cited: Counter[str] = Counter()
    cited_solved: Counter[str] = Counter()
    unshown = 0
    for result in run.results:
        shown.update(result.shown)
        cited.update(result.cited)
        cited_solved.update(result.cited if result.solved else [])
        unshown += sum(len(s.cited_unshown) for a in result.attempts for s in a.steps)
    rows = [
        (name, index.link(name), count, cited[name], cited_solved[name])
        for name, count in sorted(shown.items(), key=lambda item: (-cited[item[0]], item[0]))
    ]
    return rows, unshown


def _attribution(
    memory: Memory, index: MemoryIndex
) -> list[tuple[str, str | None, int, int, int, bool]]:
    """Helpful / unused / harmful counts of every concept that has any, most useful first."""
    rows = [c for c in memory.concepts if evidence_count(c)]
    return [
        (
            c.name,
            index.link(c.name),
            len(c.stats.helpful),
            len(c.stats.unused),
            len(c.stats.harmful),
            bool(c.retired),
        )
        for c in sorted(rows, key=usefulness_key)
    ]


def memory_view(run: RunData, index: MemoryIndex) -> MemoryView | None:
    final = run.final_memory
    if final is None:
        return None
    run_ids = {r.task_id for r in run.results}
    removed: list[str] = []
    before = run.input_memory if run.input_memory_intact else None
    if before is not None:
        basis = "input memory compared with the last snapshot"
        added, changed, removed = _changes_against(before, final, run_ids, index)
    else:
        basis = "history entries written by this run's tasks"
        added, changed = _changes_from_history(final, run_ids, index)
    marks = {a[1][1:]: "added" for a in added if a[1]} | {
        c[1][1:]: "changed" for c in changed if c[1]
    }
    usage, unanswered = _usage(run, index)
    cites = run.config is not None and run.config.cite
    citations, cited_unshown = _citations(run, index) if cites else ([], 0)
    return MemoryView(
        before=_size(before) if before is not None else None,
        after=_size(final),
        added=added,
        changed=changed,
        removed=removed,
        basis=basis,
        usage=usage,
        unanswered=unanswered,
        variants=max((1 + len(r.variant_selections) for r in run.results), default=1),
        memory=final,
        groups=concept_groups(final.concepts),
        marks=marks,
        attribution=_attribution(final, index),
        citations=citations,
        cited_unshown=cited_unshown,
    )
