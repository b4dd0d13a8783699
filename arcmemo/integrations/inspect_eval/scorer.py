"""The scorer: each sample's metrics as the benchmark computes them for a run of one task
(oracle@k and strict for ARC, pass@k and maj@k for AIME); inspect's mean over samples is
then the run's value, as in arcmemo's summary."""

from __future__ import annotations

import json

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from arcmemo.core.records import TaskResult
from arcmemo.integrations.inspect_eval.context import EvalContext
from arcmemo.integrations.inspect_eval.solver import RESULT_KEY

# Summary values that are not a per-task figure to average (counts are n_*).
NOT_MEANS = frozenset({"score_retry_depth"})


def sample_metrics(context: EvalContext, result: TaskResult) -> dict[str, float]:
    """The benchmark's run metrics over this one result, the numeric ones."""
    values = context.benchmark.summarize([result], context.config.attempts)
    return {
        key: float(value)
        for key, value in values.items()
        if isinstance(value, int | float)
        and not isinstance(value, bool)
        and key not in NOT_MEANS
        and not key.startswith("n_")
    }


@scorer(metrics={"*": [mean(), stderr()]})
def arcmemo_scorer(context: EvalContext) -> Scorer:
    """Score a sample from the result :func:`arcmemo_solver` left in its metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        result = TaskResult.model_validate(state.metadata[RESULT_KEY])
        metrics = sample_metrics(context, result)
        predictions = [a.steps[-1].prediction if a.steps else None for a in result.attempts]
        return Score(
            value=metrics,
            answer=json.dumps(predictions)[:2000],
            explanation=(
                f"solved={result.solved} score={result.score}"
                + (f" error={result.error}" if result.error else "")
            ),
            metadata={"solved": result.solved, "metrics": result.metrics},
        )

    return score
