"""The registered inspect tasks ``arcmemo/arc_agi_1``, ``arcmemo/arc_agi_2`` and
``arcmemo/aime``: each builds arcmemo's run config from its task arguments (``-T``), one
sample per benchmark task, arcmemo's solver and scorer.

What maps to what: inspect's ``--model`` is arcmemo's solver, the model roles ``aux``,
``select`` and ``abstract`` (``--model-role select=openai/NAME``) arcmemo's roles of those
names, falling back as arcmemo's do (select and abstract to aux, aux to the solver);
``attempts`` are arcmemo's attempts per task inside one inspect sample (inspect's word for
a dataset entry) (what oracle@k and
pass@k are over), while inspect's ``--epochs`` repeats the whole sample and averages its
scores.
"""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from arcmemo.core.spellings import INSPECT_TASK_ARGS, renamed_fields
from arcmemo.integrations.inspect_eval.context import INSPECT_MODEL, open_context
from arcmemo.integrations.inspect_eval.scorer import arcmemo_scorer
from arcmemo.integrations.inspect_eval.solver import arcmemo_solver
from arcmemo.run.config import RunConfig


def _ids(tasks: str | list[str] | None) -> list[str] | None:
    """``-T tasks=a,b`` arrives as one string; from Python a list works too."""
    if tasks is None or isinstance(tasks, list):
        return tasks
    return [t.strip() for t in str(tasks).split(",") if t.strip()]


def arcmemo_task(benchmark: str, **args: Any) -> Task:
    """An inspect task running arcmemo's loop on ``benchmark`` with the settings ``args``
    (RunConfig's fields and names; ``select`` is the selector). A retired argument name is
    read as its new one, with a warning."""
    given = {k: v for k, v in args.items() if v is not None}
    given = renamed_fields(given, INSPECT_TASK_ARGS, warn=_warn_retired)
    fields = {"selector" if k == "select" else k: v for k, v in given.items()}
    if "tasks" in fields:
        fields["tasks"] = _ids(fields["tasks"])
    out = fields.pop("out", None) or tempfile.mkdtemp(prefix="arcmemo-inspect-")
    config = RunConfig(benchmark=benchmark, model=INSPECT_MODEL, out=Path(out), **fields)
    context = open_context(config)
    samples = [
        Sample(
            id=task_id,
            input=context.benchmark.describe(item),
            metadata={"benchmark": benchmark, "task_id": task_id},
        )
        for task_id, item in context.tasks.items()
    ]
    return Task(
        dataset=MemoryDataset(samples, name=benchmark),
        solver=arcmemo_solver(context),
        scorer=arcmemo_scorer(context),
        metadata={
            "arcmemo_config": context.config.model_dump(mode="json"),
            "arcmemo_data": context.provenance.model_dump(mode="json"),
        },
    )


def _warn_retired(message: str) -> None:
    warnings.warn(f"arcmemo task argument {message}", FutureWarning, stacklevel=3)


def _registered(benchmark: str, name: str, summary: str) -> Callable[..., Task]:
    """The inspect task ``arcmemo/NAME`` on ``benchmark``; its parameters are the ``-T``
    arguments (None: arcmemo's default, the benchmark's where it has one)."""

    @task(name=name)
    def make(
        split: str | None = None,
        tasks: str | None = None,
        data: str | None = None,
        limit: int | None = None,
        memory: str | None = None,
        memory_out: str | None = None,
        update: str | None = None,
        select: str | None = None,
        memory_format: str | None = None,
        attempts: int | None = None,
        feedback_rounds: int | None = None,
        reselect: bool | None = None,
        sandbox: str | None = None,
        out: str | None = None,
        # Retired names of memory_format and feedback_rounds (core.spellings), still read.
        format: str | None = None,
        retries: int | None = None,
    ) -> Task:
        return arcmemo_task(benchmark, **{k: v for k, v in locals().items() if k in TASK_ARGS})

    make.__doc__ = summary
    return make


TASK_ARGS = frozenset(
    [
        "split",
        "tasks",
        "data",
        "limit",
        "memory",
        "memory_out",
        "update",
        "select",
        "memory_format",
        "attempts",
        "feedback_rounds",
        "reselect",
        "sandbox",
        "out",
        *INSPECT_TASK_ARGS,
    ]
)

arc_agi_1 = _registered(
    "arc-agi-1",
    "arc_agi_1",
    "ARC-AGI-1: the model writes transform(grid), run in arcmemo's sandbox; scores oracle@k "
    "and strict (every test input right in one attempt).",
)
arc_agi_2 = _registered("arc-agi-2", "arc_agi_2", "ARC-AGI-2, as arc_agi_1.")
aime = _registered(
    "aime", "aime", "AIME: a boxed integer answer; scores pass@k and maj@k over attempts."
)
