"""Shaping loaded runs into what the report templates show.

Everything here is plain data (numbers, strings, grids of cell marks); the templates escape
every string, so model-written text can never become markup.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from arcmemo.benchmarks.base import Step, TaskResult
from arcmemo.memory.ontology import Concept, Memory, concept_id
from arcmemo.memory.render import lesson_name
from arcmemo.report import plots
from arcmemo.report.load import RunData

# -- small helpers ---------------------------------------------------------------------------


def anchor(prefix: str, name: str) -> str:
    """An HTML id built from any string (task ids and names may hold any character)."""
    return f"{prefix}-{re.sub(r'[^A-Za-z0-9_-]', '_', name)}"


def percent(value: Any) -> str:
    return f"{100 * value:.1f}%" if isinstance(value, int | float) else "–"


def as_grid(value: Any) -> list[list[int]] | None:
    """``value`` as a rectangular grid of ints, or None when it is not one."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(row, list) for row in value):
        return None
    width = len(value[0])
    if width == 0 or any(len(row) != width for row in value):
        return None
    if not all(isinstance(c, int) and not isinstance(c, bool) for row in value for c in row):
        return None
    return value


@dataclass
class GridView:
    """A grid to draw: rows of (color, differs-from-expected) cells."""

    rows: list[list[tuple[int, bool]]]
    shape: str
    n_diff: int = 0
    note: str = ""


def grid_view(value: Any, expected: Any = None) -> GridView | None:
    """Draw ``value``, marking cells that differ from ``expected`` (when given)."""
    grid = as_grid(value)
    if grid is None:
        return None
    truth = as_grid(expected)
    rows: list[list[tuple[int, bool]]] = []
    n_diff = 0
    for r, row in enumerate(grid):
        cells = []
        for c, cell in enumerate(row):
            differs = truth is not None and (
                r >= len(truth) or c >= len(truth[0]) or truth[r][c] != cell
            )
            n_diff += differs
            cells.append((cell, differs))
        rows.append(cells)
    shape = f"{len(grid)}×{len(grid[0])}"
    note = ""
    if truth is not None and (len(truth), len(truth[0])) != (len(grid), len(grid[0])):
        note = f"shape {shape}, expected {len(truth)}×{len(truth[0])}"
    return GridView(rows=rows, shape=shape, n_diff=n_diff, note=note)


# -- memory links ----------------------------------------------------------------------------


class MemoryIndex:
    """Resolves concept and lesson names to the anchors of their entries in the report."""

    def __init__(self, memory: Memory | None) -> None:
        self.ids: set[str] = set()
        self.names: dict[str, str] = {}
        self.lessons: set[str] = set()
        if memory is not None:
            self.ids = {c.id for c in memory.concepts}
            self.names = {c.id: c.name for c in memory.concepts}
            self.lessons = {concept_id(lesson_name(i)) for i in range(len(memory.lessons))}

    def link(self, name: str) -> str | None:
        key = concept_id(name)
        if key in self.ids or key in self.lessons:
            return "#" + anchor("mem", key)
        return None

    def links(self, names: list[str]) -> list[tuple[str, str | None]]:
        return [(name, self.link(name)) for name in names]

    def titled_links(self, keys: list[str]) -> list[tuple[str, str | None]]:
        """Links for concept ids (as abstraction records them), shown by concept name."""
        return [(self.names.get(concept_id(key), key), self.link(key)) for key in keys]


# -- tasks -----------------------------------------------------------------------------------


def task_status(result: TaskResult) -> str:
    if result.error is not None:
        return "error"
    if result.solved:
        return "solved"
    return "partial" if result.score > 0 else "unsolved"


@dataclass
class CheckView:
    index: int
    correct: bool
    error: str | None
    output: GridView | None
    expected: GridView | None


@dataclass
class PredictionView:
    index: int
    correct: bool | None
    produced: GridView | None
    expected: GridView | None
    raw: str


@dataclass
class StepView:
    round: int
    final: bool
    step: Step
    passed: int
    checks: list[CheckView]
    predictions: list[PredictionView]
    concepts: list[tuple[str, str | None]]
    verdict: str


@dataclass
class AttemptView:
    index: int
    correct: list[bool]
    steps: list[StepView]


@dataclass
class TaskView:
    """One task's section and table row."""

    id: str
    anchor: str
    result: TaskResult
    status: str
    n_steps: int
    max_round: int
    tokens: int
    cost: float | None
    train: list[tuple[GridView | None, GridView | None]] = field(default_factory=list)
    tests: list[tuple[GridView | None, GridView | None]] = field(default_factory=list)
    problem: str | None = None
    answer: Any = None
    attempts: list[AttemptView] = field(default_factory=list)
    selected: list[tuple[str, str | None]] = field(default_factory=list)
    written: list[tuple[str, str | None]] = field(default_factory=list)
    abstraction_notes: list[str] = field(default_factory=list)
    compare_scores: list[float | None] = field(default_factory=list)


def _step_verdict(step: Step) -> str:
    if step.error:
        return "model call failed"
    if step.parse_error:
        return "nothing extracted"
    if step.verified is True:
        return "passes all train pairs"
    if step.verified is False:
        return f"passes {sum(c.correct for c in step.checks)}/{len(step.checks)} train pairs"
    return "answer extracted"


def _arc_step(task: Any, step: Step, final: bool, index: MemoryIndex) -> StepView:
    checks = []
    for check in step.checks:
        expected = (
            task.train[check.index].output if task and check.index < len(task.train) else None
        )
        checks.append(
            CheckView(
                index=check.index,
                correct=check.correct,
                error=check.error,
                output=grid_view(check.output, expected),
                expected=grid_view(expected),
            )
        )
    predictions = []
    produced = step.prediction if isinstance(step.prediction, list) else []
    n_tests = len(task.test_outputs) if task else len(produced)
    for t in range(n_tests):
        value = produced[t] if t < len(produced) else None
        expected = task.test_outputs[t] if task else None
        predictions.append(
            PredictionView(
                index=t,
                correct=step.correct[t] if step.correct and t < len(step.correct) else None,
                produced=grid_view(value, expected),
                expected=grid_view(expected),
                raw="" if value is None or as_grid(value) else json.dumps(value)[:500],
            )
        )
    return StepView(
        round=step.round,
        final=final,
        step=step,
        passed=sum(c.correct for c in step.checks),
        checks=checks,
        predictions=predictions,
        concepts=index.links(step.concepts),
        verdict=_step_verdict(step),
    )


def _plain_step(step: Step, final: bool, index: MemoryIndex) -> StepView:
    return StepView(
        round=step.round,
        final=final,
        step=step,
        passed=0,
        checks=[],
        predictions=[],
        concepts=index.links(step.concepts),
        verdict=_step_verdict(step),
    )


def task_views(run: RunData, index: MemoryIndex) -> list[TaskView]:
    """A view per result, in the run's order."""
    written: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {}
    for outcome in run.abstraction:
        written.setdefault(outcome.task_id, []).extend(outcome.written)
        notes.setdefault(outcome.task_id, []).extend(
            [f"conflict: {c}" for c in outcome.conflicts]
            + [f"{f.stage} failed: {f.error}" for f in outcome.failures]
        )
    views = []
    for result in run.results:
        task = run.tasks.get(result.task_id)
        steps = [s for a in result.attempts for s in a.steps]
        view = TaskView(
            id=result.task_id,
            anchor=anchor("task", result.task_id),
            result=result,
            status=task_status(result),
            n_steps=len(steps),
            max_round=max((s.round for s in steps), default=0),
            tokens=result.tokens.prompt_tokens + result.tokens.completion_tokens,
            cost=run.cost_by_task.get(result.task_id),
            selected=index.links(result.selection.selected) if result.selection else [],
            written=index.titled_links(written.get(result.task_id, [])),
            abstraction_notes=notes.get(result.task_id, []),
        )
        arc = run.domain == "arc"
        if arc and task is not None:
            view.train = [(grid_view(p.input), grid_view(p.output)) for p in task.train]
            view.tests = [
                (grid_view(i), grid_view(o))
                for i, o in zip(task.test_inputs, task.test_outputs, strict=True)
            ]
        if run.domain == "aime" and task is not None:
            view.problem = task.problem
            view.answer = task.answer
        elif "answer" in result.metrics:
            view.answer = result.metrics["answer"]
        for attempt in result.attempts:
            last = len(attempt.steps) - 1
            view.attempts.append(
                AttemptView(
                    index=attempt.index,
                    correct=attempt.correct,
                    steps=[
                        _arc_step(task, s, i == last, index)
                        if arc
                        else _plain_step(s, i == last, index)
                        for i, s in enumerate(attempt.steps)
                    ],
                )
            )
        views.append(view)
    return views


# -- summary ---------------------------------------------------------------------------------

_RATE_KEYS = (
    ("score", "score"),
    ("strict_score", "strict score"),
    ("pass@1", "pass@1"),
    ("avg@k", "avg@k"),
    ("pass@k", "pass@k"),
    ("maj@k", "maj@k"),
    ("no_answer_rate", "no answer"),
)


def summary_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The headline numbers of a run, formatted, in a fixed order."""
    rows: list[tuple[str, str]] = []
    if "n_tasks" in summary:
        rows.append(("tasks", str(summary["n_tasks"])))
    if "n_solved" in summary:
        rows.append(("solved", str(summary["n_solved"])))
    for key, label in _RATE_KEYS:
        if key in summary:
            name = label.replace("@k", f"@{summary['k']}") if "k" in summary else label
            rows.append((name, percent(summary[key])))
    for k, value in (summary.get("oracle") or {}).items():
        rows.append((f"oracle@{k}", percent(value)))
    if "n_errors" in summary:
        rows.append(("errors", str(summary["n_errors"])))
    tokens = summary.get("tokens")
    if isinstance(tokens, dict):
        for key in ("prompt", "completion", "reasoning", "cached"):
            if key in tokens:
                rows.append((f"{key} tokens", f"{tokens[key]:,}"))
    if "cost_usd" in summary:
        cost = summary["cost_usd"]
        rows.append(("cost", f"${cost:.4f}" if isinstance(cost, int | float) else "unknown"))
    for key, label in (("calls", "model calls"), ("cache_hits", "cache hits")):
        if key in summary:
            rows.append((label, str(summary[key])))
    if "wall_seconds" in summary:
        rows.append(("wall time", f"{summary['wall_seconds']:.1f} s"))
    return rows


def config_rows(run: RunData) -> list[tuple[str, str]]:
    if run.config is None:
        return []
    rows = []
    for key, value in run.config.model_dump(mode="json").items():
        text = value if isinstance(value, str) else json.dumps(value)
        rows.append((key, text))
    return rows


# -- memory ----------------------------------------------------------------------------------


def _content(concept: Concept) -> dict[str, Any]:
    data = concept.model_dump(mode="json", exclude={"stats"})
    data["provenance"].pop("updated_at", None)
    return data


@dataclass
class MemoryView:
    """The memory section of a run report."""

    before: tuple[int, int, int] | None
    after: tuple[int, int, int]
    added: list[tuple[str, str | None, list[str]]]
    changed: list[tuple[str, str | None, list[str]]]
    removed: list[str]
    basis: str
    usage: list[tuple[str, str | None, int, int]]
    memory: Memory
    groups: list[tuple[str, list[Concept]]]
    marks: dict[str, str]


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


def memory_view(run: RunData, index: MemoryIndex) -> MemoryView | None:
    final = run.final_memory
    if final is None:
        return None
    run_ids = {r.task_id for r in run.results}
    added: list[tuple[str, str | None, list[str]]] = []
    changed: list[tuple[str, str | None, list[str]]] = []
    removed: list[str] = []
    before = run.input_memory if run.input_memory_intact else None
    if before is not None:
        basis = "input memory compared with the last snapshot"
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
    else:
        basis = "history entries written by this run's tasks"
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
    selected: Counter[str] = Counter()
    selected_solved: Counter[str] = Counter()
    for result in run.results:
        if result.selection is None:
            continue
        for name in result.selection.selected:
            selected[name] += 1
            selected_solved[name] += result.solved
    usage = [
        (name, index.link(name), count, selected_solved[name])
        for name, count in sorted(selected.items(), key=lambda item: (-item[1], item[0]))
    ]
    marks = {a[1][1:]: "added" for a in added if a[1]} | {
        c[1][1:]: "changed" for c in changed if c[1]
    }
    return MemoryView(
        before=_size(before) if before is not None else None,
        after=_size(final),
        added=added,
        changed=changed,
        removed=removed,
        basis=basis,
        usage=usage,
        memory=final,
        groups=concept_groups(final.concepts),
        marks=marks,
    )


# -- plots -----------------------------------------------------------------------------------


def _pass_at(run: RunData, k: int) -> float:
    """Fraction of tasks with a fully right attempt among the first ``k`` (AIME oracle)."""
    if not run.results:
        return 0.0
    right = sum(any(a.correct and all(a.correct) for a in r.attempts[:k]) for r in run.results)
    return right / len(run.results)


def _oracle_points(run: RunData) -> list[tuple[float, float]]:
    oracle = run.summary.get("oracle")
    if isinstance(oracle, dict) and oracle:
        return [(float(k), float(v)) for k, v in oracle.items()]
    k = max((len(r.attempts) for r in run.results), default=0)
    return [(float(j), _pass_at(run, j)) for j in range(1, k + 1)]


def _memory_growth(run: RunData) -> list[tuple[float, float]]:
    points: list[tuple[float, float]] = []
    if run.input_memory is not None and run.input_memory_intact:
        points.append((0.0, float(len(run.input_memory.concepts) + len(run.input_memory.lessons))))
    for number, snapshot in enumerate(run.snapshots, 1):
        points.append((float(number), float(len(snapshot.concepts) + len(snapshot.lessons))))
    return points


def plot_list(runs: list[RunData], tasks: list[TaskView]) -> list[Markup]:
    """The report's charts (comparison series when several runs are given)."""
    charts: list[Markup] = []
    by_retry = [
        plots.Series(
            r.label, [(float(k), float(v)) for k, v in r.summary["score_by_retry"].items()]
        )
        for r in runs
        if isinstance(r.summary.get("score_by_retry"), dict) and r.summary["score_by_retry"]
    ]
    if by_retry:
        charts.append(
            plots.line_chart(
                by_retry,
                title="Score by retry depth",
                x_label="retries allowed",
                y_label="score",
                y_max=1.0,
            )
        )
    oracle = [plots.Series(r.label, _oracle_points(r)) for r in runs]
    oracle = [s for s in oracle if s.points]
    if oracle:
        charts.append(
            plots.line_chart(
                oracle, title="oracle@k vs k", x_label="k (attempts)", y_label="score", y_max=1.0
            )
        )
    if tasks:
        charts.append(
            plots.bar_chart(
                [t.id for t in tasks],
                [float(t.tokens) for t in tasks],
                title="Tokens per task (green: solved)",
                x_label="task",
                y_label="tokens",
                highlight=[t.result.solved for t in tasks],
            )
        )
    costs = [t.cost for t in tasks]
    if any(c for c in costs):
        charts.append(
            plots.bar_chart(
                [t.id for t in tasks],
                [c or 0.0 for c in costs],
                title="Cost per task (USD)",
                x_label="task",
                y_label="USD",
                highlight=[t.result.solved for t in tasks],
            )
        )
    growth = [plots.Series(r.label, _memory_growth(r)) for r in runs if r.snapshots]
    if growth:
        charts.append(
            plots.line_chart(
                growth, title="Memory size over batches", x_label="batch", y_label="entries"
            )
        )
    return charts


# -- comparison ------------------------------------------------------------------------------


@dataclass
class Comparison:
    """The main run against one other run."""

    label: str
    wins: list[str]
    losses: list[str]
    both: list[str]
    neither: list[str]
    only_here: list[str]
    only_there: list[str]


def compare(main: RunData, other: RunData) -> Comparison:
    """Per-task wins (better score here) and losses (better there) on the shared tasks."""
    here, there = main.result_by_id, other.result_by_id
    shared = [tid for tid in here if tid in there]
    return Comparison(
        label=other.label,
        wins=[t for t in shared if here[t].score > there[t].score],
        losses=[t for t in shared if here[t].score < there[t].score],
        both=[t for t in shared if here[t].solved and there[t].solved],
        neither=[t for t in shared if here[t].score == there[t].score == 0],
        only_here=[t for t in here if t not in there],
        only_there=[t for t in there if t not in here],
    )
