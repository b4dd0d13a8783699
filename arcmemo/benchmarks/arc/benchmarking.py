"""A finished ARC run as the ARC Prize's arc-agi-benchmarking submission directory.

One ``<task_id>.json`` per task: a list over its test inputs of ``{"attempt_1": ATTEMPT,
"attempt_2": ATTEMPT}``, an attempt being ``{"answer": grid, "metadata": {model, provider,
start_timestamp, end_timestamp, choices, kwargs, usage, cost, task_id, pair_index, test_id}}``
(that repository's ``schemas.Attempt``). Its scorer credits a test input when one of its
attempts equals the expected grid and averages per task, then over tasks: for a run of one
or two attempts that is exactly the run's ``score`` (oracle@min(2, n)).

Which attempts are submitted follows the Kaggle export (:mod:`arcmemo.benchmarks.arc.export`):
distinct grids of train-verified final programs first, then the others; when fewer than two
distinct grids exist, the remaining attempts fill in with what they predicted (``[]`` for
nothing, as the scorer counts an empty answer). An attempt is a chain of steps (first try and
retries): its metadata spans them, each step's completion one choice, usage and cost summed.
The run records cost per completion as one figure; its split into prompt and completion cost
follows the price table's rates for those tokens (all of it is completion cost when the table
does not price the model), and an unknown cost (an unpriced model) is written as 0.
"""

from __future__ import annotations

import json
from typing import Any

from arcmemo.benchmarks.arc.data import as_grid_or_none
from arcmemo.benchmarks.arc.export import n_test_inputs, ranked_candidates
from arcmemo.benchmarks.base import BenchmarkDataError
from arcmemo.benchmarks.outputs import ExportedRun, Exporter
from arcmemo.core.records import Attempt, TaskResult
from arcmemo.models.base import Usage
from arcmemo.models.prices import PriceTable

ATTEMPTS = 2  # the ARC Prize's attempts per test input


class ExportError(BenchmarkDataError):
    """A run the format cannot be written from; the message names what is missing."""


def _answer(attempt: Attempt, test_index: int) -> list[list[int]] | list[Any]:
    prediction = attempt.steps[-1].prediction
    predictions = prediction if isinstance(prediction, list) else []
    grid = as_grid_or_none(predictions[test_index]) if test_index < len(predictions) else None
    return grid if grid is not None else []


def chosen_attempts(result: TaskResult, test_index: int) -> list[Attempt]:
    """The (at most two) attempts submitted for test input ``test_index``."""
    chosen = [attempt for _, attempt in ranked_candidates(result, test_index)][:ATTEMPTS]
    rest = [a for a in result.attempts if a.steps and all(a is not c for c in chosen)]
    return [*chosen, *rest][:ATTEMPTS]


def _cost(run: ExportedRun, usage: Usage, total: float, prices: PriceTable) -> dict[str, Any]:
    price = prices.price_for(run.model)
    prompt = completion = None
    if price is not None:
        completion = price.cost_usd(Usage(completion_tokens=usage.completion_tokens))
        priced = price.cost_usd(usage)
        if completion is not None and priced:
            completion = total * completion / priced
    if completion is None:
        completion = total
    prompt = total - completion
    return {
        "prompt_cost": prompt,
        "completion_cost": completion,
        "reasoning_cost": None,
        "total_cost": total,
    }


def _metadata(
    run: ExportedRun, test_id: str, result: TaskResult, attempt: Attempt, test_index: int,
    prices: PriceTable,
) -> dict[str, Any]:  # fmt: skip
    steps = attempt.steps
    started, finished = steps[0].started_at, steps[-1].finished_at
    if started is None or finished is None:
        raise ExportError(
            f"task {result.task_id}: results.jsonl records no call times for attempt "
            f"{attempt.index} (a run written before steps recorded them); run it again"
        )
    usage = sum((s.usage for s in steps), Usage())
    total = sum(s.cost_usd or 0.0 for s in steps)
    provider, _, model = run.model.partition(":")
    reasoning = [s.reasoning for s in steps if s.reasoning]
    return {
        "model": model,
        "provider": provider,
        "start_timestamp": started,
        "end_timestamp": finished,
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": s.completion}}
            for i, s in enumerate(steps)
        ],
        "reasoning_content": "\n\n".join(reasoning) if reasoning else None,
        "kwargs": run.sampling,
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {
                "cache_creation_tokens": usage.cache_write_tokens,
                "cache_read_tokens": usage.cached_tokens,
            },
            "completion_tokens_details": {
                "reasoning_tokens": usage.reasoning_tokens,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "cost": _cost(run, usage, total, prices),
        "task_id": result.task_id,
        "pair_index": test_index,
        "test_id": test_id,
    }


def task_file(run: ExportedRun, result: TaskResult, prices: PriceTable) -> list[dict[str, Any]]:
    """One task's submission: per test input, its attempts by key."""
    pairs = []
    for index in range(n_test_inputs(result)):
        pairs.append(
            {
                f"attempt_{number}": {
                    "answer": _answer(attempt, index),
                    "metadata": _metadata(run, run.name, result, attempt, index, prices),
                }
                for number, attempt in enumerate(chosen_attempts(result, index), start=1)
            }
        )
    return pairs


def submission_files(run: ExportedRun) -> dict[str, str]:
    """``<task_id>.json`` per task of the run."""
    prices = PriceTable.load()
    return {
        f"{result.task_id}.json": json.dumps(task_file(run, result, prices)) + "\n"
        for result in run.results
    }


ARC_AGI_BENCHMARKING = Exporter(
    name="arc-agi-benchmarking",
    help="RUN's attempts as an arc-agi-benchmarking submission directory (the ARC Prize's "
    "scorer): one TASK_ID.json per task with two attempts per test input and each attempt's "
    "model, times, usage, cost and completions.",
    default_file="arc-agi-benchmarking",
    label="arc-agi-benchmarking submissions",
    runs="arc-agi",
    write_files=submission_files,
)
