"""Continual test-time learning: grow the memory between batches of a run.

After each batch, every task whose solution is confirmed by the run's write signal is
abstracted into the memory, selection statistics are updated, and the memory is
snapshotted in the run directory and saved (atomically) to ``--memory-out`` or
``--memory``. Later batches, and retries (which reselect), read the grown memory.

Write signals: ``train`` (a program that passes every train pair: ARC), ``consistency``
(an answer given by a majority of the attempts: AIME), ``oracle`` (the hidden test labels,
which leaks them: only for reproducing published numbers, and flagged as such).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from arcmemo.abstraction.base import AbstractionOutcome, Failure, SolvedItem, create_abstractor
from arcmemo.benchmarks.base import Benchmark, Step, TaskResult
from arcmemo.config import RunConfig
from arcmemo.files import atomic_write_text
from arcmemo.memory.ontology import Memory, concept_id
from arcmemo.memory.render import lesson_name
from arcmemo.memory.store import dump_memory
from arcmemo.models.client import ModelCallError, ModelClient
from arcmemo.runner import Runner


def confirmed_step(result: TaskResult, signal: str) -> Step | None:
    """The step whose solution the write signal confirms, or None."""
    finals = [a.steps[-1] for a in result.attempts if a.steps]
    if signal == "train":
        return next((s for s in finals if s.verified), None)
    if signal == "oracle":
        return next((s for s in finals if s.correct and all(s.correct)), None)
    if signal == "consistency":
        answers = [s.prediction for s in finals if s.prediction is not None]
        if not answers:
            return None
        counts = Counter(json.dumps(a, sort_keys=True) for a in answers)
        top, votes = counts.most_common(1)[0]
        if votes * 2 <= len(result.attempts):
            return None
        return next(s for s in finals if json.dumps(s.prediction, sort_keys=True) == top)
    raise ValueError(f"unknown write signal {signal!r}")


def solved_item(benchmark: Benchmark[Any], task: Any, step: Step) -> SolvedItem:
    """The abstraction input for a confirmed step: the program (ARC) or the worked answer."""
    program = benchmark.domain == "arc" and step.candidate
    return SolvedItem(
        task_id=benchmark.task_id(task),
        domain=benchmark.domain,
        problem=benchmark.describe(task),
        solution=step.candidate if program and step.candidate else step.completion,
        reasoning=step.reasoning,
    )


def record_selection_stats(memory: Memory, result: TaskResult, confirmed: bool) -> None:
    """Count each entry shown in full for the task (first selection and reselections on
    retries), and whether the task's solution was confirmed by the write signal."""
    names = list(result.selection.selected) if result.selection else []
    for attempt in result.attempts:
        for step in attempt.steps:
            names += [n for n in step.concepts if n not in names]
    lessons = {concept_id(lesson_name(i)): les for i, les in enumerate(memory.lessons)}
    for name in names:
        entry = memory.find(name) or lessons.get(concept_id(name))
        if entry is None:
            continue
        entry.stats.selected += 1
        entry.stats.selected_solved += confirmed


class ContinualUpdater:
    """The runner's after-batch hook for ``--update online``."""

    def __init__(
        self, config: RunConfig, benchmark: Benchmark[Any], runner: Runner, model: ModelClient
    ) -> None:
        if runner.memory is None:
            raise ValueError("online updates need a memory (--memory)")
        self.config = config
        self.benchmark = benchmark
        self.runner = runner
        self.model = model
        self.abstractor = create_abstractor(config.memory_format, actor=model.spec)
        self.rundir = runner.rundir
        self.processed_path = self.rundir.memory_dir / "processed.json"
        self.processed: list[str] = (
            json.loads(self.processed_path.read_text()) if self.processed_path.exists() else []
        )

    @property
    def memory(self) -> Memory:
        assert self.runner.memory is not None
        return self.runner.memory

    async def after_batch(self, done: list[tuple[Any, TaskResult]]) -> None:
        """Abstract confirmed solutions of ``done`` (skipping tasks already processed)."""
        fresh = [(t, r) for t, r in done if r.task_id not in self.processed]
        if not fresh:
            return
        outcomes: list[AbstractionOutcome] = []
        for task, result in fresh:
            step = confirmed_step(result, self.config.update_signal)
            record_selection_stats(self.memory, result, step is not None)
            if step is None:
                continue
            item = solved_item(self.benchmark, task, step)
            try:
                outcomes.append(await self.abstractor.abstract(self.memory, item, self.model))
            except ModelCallError as error:
                # The run goes on; the failure is recorded like any unusable answer.
                failure = Failure(stage="model call", error=str(error))
                outcomes.append(
                    AbstractionOutcome(
                        task_id=item.task_id, format=self.abstractor.name, failures=[failure]
                    )
                )
        self.processed += [r.task_id for _, r in fresh]
        self._persist(outcomes)

    def _persist(self, outcomes: list[AbstractionOutcome]) -> None:
        # Snapshot, then the processed list: a crash between the two redoes the batch's
        # abstraction from the previous snapshot, never skips it.
        memory_dir = self.rundir.memory_dir
        memory_dir.mkdir(parents=True, exist_ok=True)
        number = len(list(memory_dir.glob("batch-*.json")))
        atomic_write_text(memory_dir / f"batch-{number:04d}.json", dump_memory(self.memory))
        target = self.config.memory_out or self.config.memory
        if target is not None:
            self.memory.save(target)
        with open(self.rundir.path / "abstraction.jsonl", "a", encoding="utf-8") as handle:
            for outcome in outcomes:
                handle.write(outcome.model_dump_json() + "\n")
        atomic_write_text(self.processed_path, json.dumps(self.processed) + "\n")
