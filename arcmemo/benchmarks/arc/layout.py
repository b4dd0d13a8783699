"""ARC runs laid out as the paper's Tables 4 and 5, and ARC's lines in the report's charts.

One row per setting (a run) and retry depth, columns ``attempt 1 ... attempt n`` (each
attempt index alone: the paper's ``run0 run1 ...``) and ``oracle@1 ... oracle@n`` (mean over
the k-subsets of attempts, the sample std over them in brackets); ``strict`` gives Table 5.
Everything is read from the
summary's ``by_retry`` / ``strict_by_retry`` (:func:`~arcmemo.benchmarks.arc.scoring.run_scores`),
or under the code convention (the published code's) its ``code_by_retry`` /
``code_strict_by_retry`` (a run whose results did not record them shows empty cells and
a note saying so).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arcmemo.benchmarks.arc import scoring
from arcmemo.benchmarks.outputs import (
    Cell,
    Column,
    Convention,
    Curve,
    NotRecordedError,
    OrderRows,
    ScoredRun,
    Table,
    over_tasks,
    padded,
)
from arcmemo.core.records import TaskResult

# The summary key of each table: (convention, strict) -> key.
_BY_RETRY: dict[tuple[Convention, bool], str] = {
    ("text", False): "by_retry",
    ("text", True): "strict_by_retry",
    ("code", False): "code_by_retry",
    ("code", True): "code_strict_by_retry",
}
NOT_RECORDED = "the code convention is not recorded (results.jsonl has no per-step records)"


def has_table(summary: dict[str, Any], *, convention: Convention = "text") -> bool:
    """``by_retry`` is there (and, for the code convention, its key, even when None:
    a summary from before it was written is recomputed from the results)."""
    recorded = convention == "text" or _BY_RETRY[(convention, False)] in summary
    return isinstance(summary.get("by_retry"), dict) and recorded


def recorded(run: ScoredRun, convention: Convention, strict: bool) -> bool:
    """Whether the run's summary has its scores under ``convention`` (strict or not)."""
    return run.summary.get(_BY_RETRY[(convention, strict)]) is not None


def _n_attempts(runs: Sequence[ScoredRun]) -> int:
    return max(int(r.summary.get("n_attempts", r.attempts)) for r in runs)


def depth_cells(
    run: ScoredRun, depth: int, strict: bool, convention: Convention = "text"
) -> dict[str, Any]:
    """The oracle cells at ``depth`` (a depth no attempt reached equals the deepest one; {}
    when not recorded)."""
    by_retry = run.summary.get(_BY_RETRY[(convention, strict)])
    if not by_retry:
        return {}
    return by_retry[str(min(depth, max(int(d) for d in by_retry)))]


def table(
    runs: Sequence[ScoredRun], *, strict: bool = False, convention: Convention = "text"
) -> Table:
    """The paper's Table 4 (Table 5 when ``strict``) for these runs."""
    n = _n_attempts(runs)
    # The paper prints attempt index j as "run j" (run0 is attempt 1): docs/glossary.md.
    columns = [Column(f"attempt {j + 1}", False) for j in range(n)]
    columns += [Column(f"oracle@{k}", True) for k in range(1, n + 1)]
    rows = []
    too_many = False
    for depth in range(max(r.feedback_rounds for r in runs) + 1):
        for run in (r for r in runs if depth <= r.feedback_rounds):
            cells = depth_cells(run, depth, strict, convention)
            singles = (cells.get("oracle@1") or {}).get("subsets") or []
            oracle = [cells.get(f"oracle@{k}") for k in range(1, n + 1)]
            too_many = too_many or any(c and c["subsets"] is None for c in oracle)
            rows.append(
                (
                    [str(depth), run.label],
                    padded([Cell(v) for v in singles], n)
                    + [Cell(c["mean"], c["std"]) if c else Cell(None) for c in oracle],
                )
            )
    notes = [
        f"ARC scores in percent {over_tasks(runs, 'tasks')}"
        + (", strict (one program right on every test input)" if strict else "")
        + ". runJ: attempt J alone. oracle@k: mean over all k-subsets of the attempts "
        "(sample std over them in brackets); oracle@2 is the official score."
    ]
    if convention == "code":
        notes.append(
            "Code convention (the paper's published code and its notebooks): "
            + (
                "at retry depth r an attempt counts when its program at r is right on every "
                "test input and every train pair."
                if strict
                else "at retry depth r a test input counts when any step up to r is right on it."
            )
        )
        notes += [
            f"{run.label}: {NOT_RECORDED}." for run in runs if not recorded(run, convention, strict)
        ]
    if too_many:
        notes.append("No std where an oracle@k has more than 2,000 subsets of attempts.")
    return Table(keys=["feedback rounds", "setting"], columns=columns, rows=rows, notes=notes)


def order_rows(
    runs: Sequence[ScoredRun], *, strict: bool = False, convention: Convention = "text"
) -> OrderRows:
    """Per retry depth and oracle@k, each run's mean."""
    rows = []
    n = _n_attempts(runs)
    for depth in range(max(r.feedback_rounds for r in runs) + 1):
        cells = [depth_cells(r, depth, strict, convention) for r in runs]
        for k in range(1, n + 1):
            values = [(c.get(f"oracle@{k}") or {}).get("mean") for c in cells]
            rows.append(([str(depth), f"oracle@{k}"], values))
    return OrderRows(keys=["feedback rounds", "metric"], rows=rows)


def task_values(
    results: list[TaskResult],
    *,
    attempts: int,
    strict: bool = False,
    convention: Convention = "text",
) -> dict[str, tuple[float, bool]]:
    """Per task, its oracle@min(2, n) at the final retry depth and whether every test input is
    right in some attempt (strict: one attempt right on all), under ``convention``."""
    n = max([attempts, *(scoring.n_attempt_indices(r) for r in results)])
    matrices: dict[str, scoring.Matrix] = {}
    for result in results:
        if convention == "text":
            matrices[result.task_id] = scoring.task_matrix(result, None, n, strict=strict)
            continue
        matrix = scoring.code_matrix(result, None, n, strict=strict)
        if matrix is None:
            raise NotRecordedError(f"task {result.task_id}: {NOT_RECORDED}")
        matrices[result.task_id] = matrix
    return {
        task_id: (
            scoring.task_score(matrix, strict=strict),
            scoring.task_solved(matrix, strict=strict),
        )
        for task_id, matrix in matrices.items()
    }


def final_depth(summary: dict[str, Any]) -> dict[str, Any]:
    """The oracle cells of the final retry depth, or {}."""
    by_retry = summary.get("by_retry")
    if not isinstance(by_retry, dict) or not by_retry:
        return {}
    return by_retry[str(max(int(depth) for depth in by_retry))]


def score_by_retry(summary: dict[str, Any]) -> Curve | None:
    """The run's score metric (oracle@2) after at most r retries, for each depth r."""
    by_retry, metric = summary.get("by_retry"), summary.get("score_metric")
    if not isinstance(by_retry, dict) or not metric:
        return None
    points = [(float(depth), float(cells[metric]["mean"])) for depth, cells in by_retry.items()]
    return Curve("Score by retry depth", "feedback rounds allowed", "score", points, y_max=1.0)


def oracle_points(summary: dict[str, Any]) -> list[tuple[float, float]]:
    """oracle@k at the final retry depth, for each k."""
    return [(float(key.split("@")[1]), float(c["mean"])) for key, c in final_depth(summary).items()]
