"""The benchmark interface and the records every benchmark's runs produce.

A benchmark differs from another only in four pieces: how it loads tasks, how it renders a
prompt, how it turns a completion into a checked candidate (extraction + train-pair
verification where the benchmark has any), and how it grades attempts against the hidden
labels. Everything else (attempts, retries, memory, concurrency, resume, run files) is the
generic runner's job.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, Field

from arcmemo.models.base import Message, Usage


class PairCheck(BaseModel):
    """The outcome of a candidate on one example whose answer the solver may see."""

    index: int = Field(description="Index of the example (0-based).")
    correct: bool = Field(description="Output equals the expected output.")
    output: Any = Field(default=None, description="What the candidate produced (None on error).")
    error: str | None = Field(default=None, description="Error text when it failed to run.")
    error_kind: str | None = Field(default=None, description="timeout, memory, exception, ...")


class Step(BaseModel):
    """One model call of an attempt (the first try or a retry) and what came of it."""

    round: int = Field(description="0 for the first try, r for the r-th retry.")
    completion: str = Field(description="The model's answer text.")
    reasoning: str | None = Field(default=None, description="Visible reasoning text, if any.")
    candidate: str | None = Field(default=None, description="Extracted program or answer string.")
    parse_error: str | None = Field(default=None, description="Why nothing could be extracted.")
    checks: list[PairCheck] = Field(default_factory=list, description="Train-pair results.")
    verified: bool | None = Field(
        default=None,
        description="True when the candidate passes every example the solver may see; None "
        "when the benchmark has no such signal (AIME).",
    )
    prediction: Any = Field(
        default=None,
        description="What is graded: test output grids (ARC) or the integer answer (AIME).",
    )
    correct: list[bool] | None = Field(
        default=None,
        description="Per test input, whether this step's prediction is right (grading).",
    )
    concepts: list[str] = Field(default_factory=list, description="Concepts shown in the prompt.")
    usage: Usage = Field(default_factory=Usage, description="Tokens of this call.")
    error: str | None = Field(default=None, description="Model-call failure, if the call failed.")


class Attempt(BaseModel):
    """An independent sample: a chain of steps, each retry seeing the previous feedback."""

    index: int
    steps: list[Step] = Field(default_factory=list)
    correct: list[bool] = Field(
        default_factory=list,
        description="Per test input, whether the final step's prediction is right (grading).",
    )


class TaskGrade(BaseModel):
    """How a task scored (computed from hidden labels after solving)."""

    solved: bool
    score: float
    metrics: dict[str, Any] = Field(default_factory=dict)


class Selection(BaseModel):
    """What a selector chose for a task."""

    selector: str
    selected: list[str] = Field(default_factory=list, description="Concept or lesson names.")
    unknown: list[str] = Field(default_factory=list, description="Names that matched nothing.")
    trace: str | None = Field(default=None, description="The selector's reasoning or raw output.")
    usage: Usage = Field(default_factory=Usage)


class TaskResult(BaseModel):
    """One line of ``results.jsonl``."""

    task_id: str
    solved: bool = False
    score: float = 0.0
    attempts: list[Attempt] = Field(default_factory=list)
    selection: Selection | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    tokens: Usage = Field(default_factory=Usage)


TaskT = TypeVar("TaskT")


def solve_messages(domain_prompts: str, concepts: str, task_text: str) -> list[Message]:
    """System instructions, the memory (a cacheable prefix when shared), then the task.

    ``domain_prompts`` is the template folder (``arc``, ``aime``) holding ``system.j2`` and
    ``concepts.j2``.
    """
    from arcmemo import prompting

    messages = [Message(role="system", content=prompting.render(f"{domain_prompts}/system"))]
    if concepts:
        messages.append(
            Message(
                role="user",
                content=prompting.render(f"{domain_prompts}/concepts", concepts=concepts),
                cache_breakpoint=True,
            )
        )
    messages.append(Message(role="user", content=task_text))
    return messages


class TaskSelectionError(ValueError):
    """``--tasks`` named ids that the loaded data does not hold."""


def select_tasks(
    tasks: list[TaskT], task_ids: Sequence[str] | None, limit: int | None
) -> list[TaskT]:
    """Keep the tasks named in ``task_ids`` (in that order), then the first ``limit``.

    Tasks are anything with an ``id`` attribute.
    """
    if task_ids:
        by_id = {task.id: task for task in tasks}  # type: ignore[attr-defined]
        unknown = [tid for tid in task_ids if tid not in by_id]
        if unknown:
            raise TaskSelectionError(f"task ids not found: {', '.join(unknown)}")
        tasks = [by_id[tid] for tid in task_ids]
    return tasks[:limit] if limit is not None else tasks


class Benchmark(abc.ABC, Generic[TaskT]):
    """One problem domain: loader, prompt, candidate checker and grader."""

    name: ClassVar[str]
    domain: ClassVar[str]
    default_retries: ClassVar[int] = 0
    # What confirms a solution for memory writes when --update-signal is not given.
    default_update_signal: ClassVar[str] = "train"

    @abc.abstractmethod
    def load(
        self,
        *,
        split: str | None,
        data: str | None,
        task_ids: Sequence[str] | None,
        limit: int | None,
    ) -> list[TaskT]:
        """Load the tasks to run, in a stable order."""

    @abc.abstractmethod
    def task_id(self, task: TaskT) -> str:
        """The task's id."""

    @abc.abstractmethod
    def describe(self, task: TaskT) -> str:
        """The problem as text for selectors and abstraction (never with hidden labels)."""

    @abc.abstractmethod
    def prompt(self, task: TaskT, *, concepts: str, previous: Step | None) -> list[Message]:
        """The solve prompt; ``previous`` is the last failed step of this attempt, if any."""

    @abc.abstractmethod
    def check(self, task: TaskT, completion: str) -> Step:
        """Extract a candidate and verify it on the visible examples (blocking call)."""

    @abc.abstractmethod
    def grade(self, task: TaskT, attempts: list[Attempt]) -> TaskGrade:
        """Mark ``attempt.correct`` from the hidden labels and score the task."""

    @abc.abstractmethod
    def summarize(self, results: list[TaskResult], attempts: int) -> dict[str, Any]:
        """Run-level metrics for ``summary.json`` (``n_tasks``, ``n_solved``, ``score``, ...)."""

    def close(self) -> None:
        """Release sandboxes or other resources."""


_REGISTRY: dict[str, Callable[..., Benchmark[Any]]] = {}


def register_benchmark(
    name: str,
) -> Callable[[Callable[..., Benchmark[Any]]], Callable[..., Benchmark[Any]]]:
    """Make a benchmark available to ``arcmemo run NAME``."""

    def decorate(factory: Callable[..., Benchmark[Any]]) -> Callable[..., Benchmark[Any]]:
        _REGISTRY[name] = factory
        return factory

    return decorate


def create_benchmark(name: str, **options: Any) -> Benchmark[Any]:
    """Instantiate the benchmark registered as ``name``."""
    # Importing the package registers the built-in benchmarks.
    import arcmemo.benchmarks  # noqa: F401

    if name not in _REGISTRY:
        raise KeyError(f"unknown benchmark {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](**options)


def benchmark_names() -> list[str]:
    """Registered benchmark names."""
    import arcmemo.benchmarks  # noqa: F401

    return sorted(_REGISTRY)
