"""ARC scores: oracle@k in closed form against enumeration, hand-computed multi-test cases,
strict against plain, retry depths, and the run-level summary keys."""

from __future__ import annotations

import random
import statistics
from itertools import combinations

import pytest

from arcmemo.benchmarks.arc import scoring
from arcmemo.benchmarks.arc.scoring import (
    Matrix,
    oracle_at_k,
    oracle_cells,
    run_scores,
    task_matrix,
    task_score,
    task_solved,
)
from arcmemo.core.records import Attempt, Step, TaskResult

T, F = True, False


def enumerated(correct: Matrix, k: int, *, strict: bool = False) -> float:
    """oracle@k by its definition: the credit of every k-subset of attempts, averaged."""
    tests = range(len(correct[0]))
    credits = []
    for subset in combinations(correct, k):
        if strict:
            credits.append(float(any(row and all(row) for row in subset)))
        else:
            credits.append(sum(any(row[t] for row in subset) for t in tests) / len(tests))
    return statistics.fmean(credits)


def random_matrix(rng: random.Random, attempts: int, tests: int) -> Matrix:
    return [[rng.random() < 0.4 for _ in range(tests)] for _ in range(attempts)]


@pytest.mark.parametrize("strict", [False, True])
def test_closed_form_equals_enumeration(strict: bool) -> None:
    rng = random.Random(7)
    for _ in range(300):
        n, tests = rng.randint(1, 6), rng.randint(1, 3)
        matrix = random_matrix(rng, n, tests)
        for k in range(1, n + 1):
            assert oracle_at_k(matrix, k, strict=strict) == pytest.approx(
                enumerated(matrix, k, strict=strict)
            ), (matrix, k)


@pytest.mark.parametrize("strict", [False, True])
def test_run_level_mean_is_the_mean_over_subsets(strict: bool) -> None:
    rng = random.Random(11)
    matrices = [random_matrix(rng, 5, rng.randint(1, 3)) for _ in range(40)]
    cells = oracle_cells(matrices, 5, strict=strict)
    assert sorted(cells) == [f"oracle@{k}" for k in range(1, 6)]
    for k in range(1, 6):
        cell = cells[f"oracle@{k}"]
        by_subset = [
            statistics.fmean(enumerated([m[a] for a in subset], k, strict=strict) for m in matrices)
            for subset in combinations(range(5), k)
        ]
        assert cell["subsets"] == pytest.approx(by_subset)
        assert cell["mean"] == pytest.approx(statistics.fmean(by_subset))
        assert cell["std"] == (pytest.approx(statistics.stdev(by_subset)) if k < 5 else None)


# The issue's case: 3 tasks, one with 2 test inputs, 3 attempts.
ISSUE_CASE = [
    [[T], [F], [F]],  # only attempt 0 is right
    [[F], [F], [T]],  # only attempt 2
    [[F, F], [F, F], [T, T]],  # only attempt 2, on both test inputs
]


def test_oracle_at_2_on_the_issue_case() -> None:
    cells = oracle_cells(ISSUE_CASE, 3, strict=False)
    # Pair (0, 1) alone, what the old `score` reported, is 1/3; the paper's oracle@2 is the
    # mean over the pairs (0, 1), (0, 2), (1, 2): (1/3 + 1 + 2/3) / 3 = 2/3.
    assert cells["oracle@2"]["subsets"] == pytest.approx([1 / 3, 1, 2 / 3])
    assert cells["oracle@2"]["mean"] == pytest.approx(2 / 3)
    assert cells["oracle@2"]["std"] == pytest.approx(1 / 3)
    # Attempts alone (the paper's runs): 1/3, 0, 2/3.
    assert cells["oracle@1"]["subsets"] == pytest.approx([1 / 3, 0, 2 / 3])
    assert cells["oracle@1"]["mean"] == pytest.approx(1 / 3)
    assert cells["oracle@1"]["std"] == pytest.approx(1 / 3)
    assert cells["oracle@3"] == {"mean": pytest.approx(1.0), "std": None, "subsets": [1.0]}


def test_half_points_on_two_test_inputs_and_strict() -> None:
    split = [[T, F], [F, T], [F, F]]  # two attempts, each right on one test input
    assert oracle_at_k(split, 1) == pytest.approx(1 / 3)  # (1/2 + 1/2 + 0) / 3
    assert oracle_at_k(split, 2) == pytest.approx(2 / 3)  # pairs: 1, 1/2, 1/2
    assert oracle_at_k(split, 3) == 1.0
    # Strict: no single program is right on both test inputs.
    assert [oracle_at_k(split, k, strict=True) for k in (1, 2, 3)] == [0.0, 0.0, 0.0]
    whole = [[F, F], [T, T], [F, F]]
    assert [oracle_at_k(whole, k, strict=True) for k in (1, 2, 3)] == pytest.approx(
        [1 / 3, 2 / 3, 1.0]
    )
    assert task_solved(split) and not task_solved(split, strict=True)
    assert task_solved(whole, strict=True)


def test_strict_and_plain_run_scores_differ() -> None:
    matrices = [[[T, F], [F, T], [F, F]], [[T], [F], [T]]]
    plain, strict = oracle_cells(matrices, 3, strict=False), oracle_cells(matrices, 3, strict=True)
    assert plain["oracle@2"]["mean"] == pytest.approx((2 / 3 + 1) / 2)
    assert strict["oracle@2"]["mean"] == pytest.approx((0 + 1) / 2)
    assert plain["oracle@3"]["mean"] == 1.0 and strict["oracle@3"]["mean"] == 0.5


def test_task_score_is_oracle_at_two_or_one() -> None:
    assert task_score([[F], [F], [T]]) == pytest.approx(2 / 3)
    assert task_score([[T, F], [F, F]]) == 0.5  # two attempts: the official pair
    assert task_score([[T]]) == 1.0  # one attempt: oracle@1
    assert task_score([]) == 0.0
    assert not task_solved([])


def test_attempts_must_agree_on_the_number_of_test_inputs() -> None:
    with pytest.raises(ValueError, match="number of test inputs"):
        oracle_at_k([[T], [T, F]], 1)


def _attempt(index: int, *rounds: list[bool]) -> Attempt:
    steps = [Step(round=r, completion="", correct=c) for r, c in enumerate(rounds)]
    return Attempt(index=index, steps=steps, correct=rounds[-1] if rounds else [])


def _result(task_id: str, *attempts: Attempt) -> TaskResult:
    return TaskResult(task_id=task_id, attempts=list(attempts))


def test_an_attempt_counts_by_its_program_after_at_most_r_retries() -> None:
    result = _result(
        "t",
        _attempt(0, [F, F], [T, F], [T, T]),  # fixed over two retries
        _attempt(1, [F, T]),  # verified on the first try: keeps its program
        Attempt(index=2, correct=[F, F]),  # the call failed: no steps
    )
    assert task_matrix(result, 0, 3) == [[F, F], [F, T], [F, F]]
    assert task_matrix(result, 1, 3) == [[T, F], [F, T], [F, F]]
    assert task_matrix(result, 2, 3) == task_matrix(result, 9, 3) == [[T, T], [F, T], [F, F]]
    assert task_matrix(result, None, 4)[-1] == [F, F]  # a missing attempt is wrong


def test_run_scores_keys_by_retry_depth() -> None:
    results = [
        _result("a", _attempt(0, [F], [T]), _attempt(1, [F], [F]), _attempt(2, [T])),
        _result("b", _attempt(0, [F, T]), _attempt(1, [F, F], [T, F]), _attempt(2, [F, F])),
    ]
    summary = run_scores(results, attempts=3)
    assert set(summary["by_retry"]) == set(summary["strict_by_retry"]) == {"0", "1"}
    depth0, depth1 = summary["by_retry"]["0"], summary["by_retry"]["1"]
    # depth 0: a = [[F], [F], [T]], b = [[F, T], [F, F], [F, F]]
    assert depth0["oracle@1"]["subsets"] == pytest.approx([0.25, 0, 0.5])
    # depth 1: a = [[T], [F], [T]], b = [[F, T], [T, F], [F, F]]
    assert depth1["oracle@1"]["subsets"] == pytest.approx([0.75, 0.25, 0.5])
    assert depth1["oracle@2"]["subsets"] == pytest.approx([1.0, 0.75, 0.75])
    assert summary["strict_by_retry"]["1"]["oracle@2"]["subsets"] == pytest.approx([0.5, 0.5, 0.5])
    assert summary["score"] == pytest.approx(2.5 / 3)
    assert summary["strict_score"] == pytest.approx(0.5)
    assert summary["score_metric"] == "oracle@2" and summary["score_retry_depth"] == 1
    assert summary["n_attempts"] == 3
    assert [summary[f"oracle@{k}"] for k in (1, 2, 3)] == pytest.approx([0.5, 2.5 / 3, 1.0])
    assert "oracle" not in summary and "score_by_retry" not in summary


def test_run_score_is_the_mean_of_task_scores() -> None:
    rng = random.Random(3)
    results = [
        _result(f"t{i}", *(_attempt(a, *random_matrix(rng, 2, 2)) for a in range(4)))
        for i in range(30)
    ]
    summary = run_scores(results, attempts=4)
    finals = [[a.correct for a in r.attempts] for r in results]
    assert summary["score"] == pytest.approx(statistics.fmean(task_score(m) for m in finals))
    assert summary["strict_score"] == pytest.approx(
        statistics.fmean(task_score(m, strict=True) for m in finals)
    )


def test_one_attempt_scores_oracle_at_one() -> None:
    summary = run_scores([_result("a", _attempt(0, [T, F]))], attempts=1)
    assert summary["score_metric"] == "oracle@1" and summary["score"] == 0.5
    assert summary["by_retry"]["0"]["oracle@1"] == {"mean": 0.5, "std": None, "subsets": [0.5]}


def test_no_std_above_the_subset_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    matrices = [[[T], [F], [F]]]
    monkeypatch.setattr(scoring, "MAX_SUBSETS", 2)
    cells = oracle_cells(matrices, 3, strict=False)
    assert cells["oracle@1"] == {"mean": pytest.approx(1 / 3), "std": None, "subsets": None}
    assert cells["oracle@3"]["subsets"] == [1.0]  # one subset: still listed


def test_sixteen_attempts_have_a_std_only_where_subsets_are_few() -> None:
    rng = random.Random(5)
    matrices = [random_matrix(rng, 16, rng.randint(1, 2)) for _ in range(400)]
    cells = oracle_cells(matrices, 16, strict=False)
    assert cells["oracle@8"]["std"] is None and cells["oracle@8"]["subsets"] is None
    assert cells["oracle@2"]["std"] is not None and len(cells["oracle@2"]["subsets"]) == 120
    assert cells["oracle@16"]["mean"] == pytest.approx(
        statistics.fmean(oracle_at_k(m, 16) for m in matrices)
    )


def test_more_attempts_than_a_machine_word_has_bits() -> None:
    rng = random.Random(9)
    matrices = [random_matrix(rng, 70, 2) for _ in range(5)]
    singles = oracle_cells(matrices, 70, strict=False)["oracle@1"]["subsets"]
    assert singles == pytest.approx(
        [statistics.fmean(oracle_at_k([m[a]], 1) for m in matrices) for a in range(70)]
    )


def test_run_scores_of_no_tasks() -> None:
    summary = run_scores([], attempts=2)
    assert summary["score"] == 0.0 and summary["strict_score"] == 0.0
    assert summary["by_retry"] == {} and summary["strict_by_retry"] == {}
