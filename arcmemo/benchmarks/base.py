"""The benchmark interface and its registry.

A benchmark holds everything that is particular to one problem domain: how tasks load, how a
prompt is rendered, how a completion becomes a checked candidate (extraction, and
verification on the visible examples where the domain has any), which failed step earns a
feedback round, how a prediction is judged against the hidden labels, what a run reports,
what abstraction receives from a solved step, how the report draws a task and charts a run,
how ``arcmemo table`` lays runs out, what ``arcmemo export`` writes, its splits, and the run
settings that suit it. Everything else (attempts, feedback rounds, memory, concurrency, resume, run
files, rendering tables and charts) is generic, so a new benchmark is one module (plus its
prompt templates, checked when it registers) registered in :data:`BENCHMARKS`.
"""

from __future__ import annotations

import abc
import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from arcmemo.benchmarks.outputs import (
    Convention,
    Curve,
    Exporter,
    OrderRows,
    ScoredRun,
    Table,
)
from arcmemo.core.records import Attempt, CheckResult, SolvedItem, Step, TaskGrade, TaskResult
from arcmemo.core.registry import ComponentSpec, NoOptions, Registry, RegistryError
from arcmemo.core.spellings import RUN_CONFIG_FIELDS, renamed_fields
from arcmemo.library.task import NO_LIBRARY, TaskLibrary
from arcmemo.models.base import Message

if TYPE_CHECKING:
    from arcmemo.sandbox import Sandbox


class BenchmarkDataError(ValueError):
    """Task data that cannot be used; the message names the file and the place in it."""


class TaskSelectionError(BenchmarkDataError):
    """``--tasks`` named ids that the loaded data does not hold."""


class RunDefaults(BaseModel):
    """Run settings a benchmark suggests when the user gives none."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    feedback_rounds: int = Field(default=0, ge=0, description="Feedback rounds per attempt.")
    write_signal: str = Field(default="train", description="What confirms a solution.")
    selector: str = Field(default="llm", description="Selector when a memory is given.")

    @model_validator(mode="before")
    @classmethod
    def _current_spellings(cls, values: Any) -> Any:
        return renamed_fields(values, RUN_CONFIG_FIELDS)


class RunMetrics(BaseModel):
    """The benchmark's part of ``summary.json``, as its ``summarize`` returns it.

    A benchmark declares its own subclass as :attr:`Benchmark.metrics_model`; keys it does
    not declare are kept as they are (flat aliases such as ``oracle@2`` or ``pass@3``), and
    only the keys ``summarize`` gave are written back (a declared key it left out, such as
    ``score`` of a run without labels, stays out of the file).
    """

    model_config = ConfigDict(extra="allow")

    score: float | None = Field(default=None, description="The run's headline number (0..1).")


class SharedSandbox:
    """One sandbox for all of a benchmark's checks, created on first use.

    Checks run on worker threads; the lock makes concurrent first checks share one sandbox
    instead of each starting its own.
    """

    def __init__(self, spec: ComponentSpec | None = None) -> None:
        self.spec = spec or ComponentSpec(name="bwrap")
        self._sandbox: Sandbox | None = None
        self._lock = threading.Lock()

    def get(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                from arcmemo.sandbox import SANDBOXES

                self._sandbox = SANDBOXES.create(self.spec)
            return self._sandbox

    def close(self) -> None:
        with self._lock:
            sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            sandbox.close()


@dataclass(frozen=True)
class PromptCuts:
    """Parts of a prompt left out to fit the model's context window. Which, and in what
    order, :mod:`arcmemo.run.prompt_fit` decides; a benchmark makes those its prompts hold."""

    produced_grids: bool = False
    answer_prose: bool = False
    library_docstrings: bool = False
    reselected: bool = False
    library_functions: tuple[str, ...] = ()
    memory_block: bool = False
    error_tracebacks: bool = False
    previous_program: bool = False


NO_CUTS = PromptCuts()


@dataclass(frozen=True)
class PromptRequest:
    """What one solve or retry prompt shows before anything is cut: the memory block, the
    failed step a retry answers, the library, and a retry's newly selected block (None:
    the prompt does not select again, as :meth:`Benchmark.prompt`)."""

    concepts: str
    previous: Step | None = None
    library: TaskLibrary = NO_LIBRARY
    reselected: str | None = None

    def cut(self, cuts: PromptCuts) -> PromptRequest:
        """The request less the parts every benchmark's prompt holds that ``cuts`` name:
        the memory block, the reselected block and the library listing (its functions
        stay importable: only the prompt stops naming them)."""
        reselected = self.reselected
        if reselected is not None and cuts.reselected:
            reselected = ""
        return PromptRequest(
            concepts="" if cuts.memory_block else self.concepts,
            previous=self.previous,
            library=self.library.trimmed(
                cuts.library_functions, docstrings=not cuts.library_docstrings
            ),
            reselected=reselected,
        )


TaskT = TypeVar("TaskT")
F = TypeVar("F", bound=Callable[..., Any])


def solve_messages(domain_prompts: str, concepts: str, task_text: str) -> list[Message]:
    """System instructions, the memory (a cacheable prefix when shared), then the task.

    ``domain_prompts`` is the template folder (``arc``, ``aime``) holding ``system.j2`` and
    ``concepts.j2``.
    """
    from arcmemo.core import prompting

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


@dataclass(frozen=True)
class DataOrigin:
    """Where a benchmark's tasks are read from (:meth:`Benchmark.data_origin`)."""

    path: str | None = None
    version: str | None = None


def tasks_sha256(benchmark: Benchmark[Any], tasks: list[Any]) -> str:
    """sha256 of the tasks' content (:meth:`Benchmark.task_content`), in the given order."""
    digest = hashlib.sha256()
    for task in tasks:
        content = json.dumps(benchmark.task_content(task), sort_keys=True, separators=(",", ":"))
        digest.update(content.encode() + b"\n")
    return digest.hexdigest()


class Benchmark(abc.ABC, Generic[TaskT]):
    """One problem domain: loader, prompt, checker, judge, metrics and report view."""

    name: ClassVar[str]  # set by the registry: the name it is registered under
    # The prompt folder under prompts/ and the memory domain ("arc", "aime").
    domain: ClassVar[str]
    defaults: ClassVar[RunDefaults] = RunDefaults()
    # Keys of summarize() that `arcmemo run` shows in its summary table, in order.
    headline_metrics: ClassVar[tuple[str, ...]] = ("score",)
    # The prompt templates (under prompts/, without .j2) the benchmark renders; registering
    # checks that each exists.
    templates: ClassVar[tuple[str, ...]] = ()
    # True when check() runs model-written programs (the run then opens the sandbox first,
    # so a missing isolation layer fails before any model call is paid for).
    uses_sandbox: ClassVar[bool] = False
    # The type of what summarize() returns (summary.json validates its metrics with it).
    metrics_model: ClassVar[type[RunMetrics]] = RunMetrics
    # Identifiers the benchmark imposes on every solution (the entry point it calls, the
    # harness's own names): attribution never counts them as evidence that a concept was used.
    entry_points: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self, options: BaseModel | None = None, *, sandbox: SharedSandbox | None = None
    ) -> None:
        self.options = options or NoOptions()
        # Benchmarks that run programs take them to this sandbox; the others never open it.
        self.sandbox = sandbox or SharedSandbox()
        # What load() found in the data that a reader of the run's numbers must know (a
        # repaired file, dropped characters), one line each: a run records them among
        # summary.json's warnings and shows them with its final numbers.
        self.data_warnings: list[str] = []

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

    def data_origin(self, *, split: str | None, data: str | None) -> DataOrigin:
        """What :meth:`load` reads for ``split`` / ``data``: the file or folder (resolved) and
        the version of a packaged set, recorded in ``config.json`` so that the report reloads
        the same tasks from another shell. Default: ``data`` itself."""
        return DataOrigin(path=str(Path(data).expanduser().resolve()) if data else None)

    def task_content(self, task: TaskT) -> Any:
        """The task as JSON data for the run's dataset hash: a pydantic task's fields but
        ``source`` (where it was read from, which differs between machines)."""
        if isinstance(task, BaseModel):
            return task.model_dump(mode="json", exclude={"source"})
        return repr(task)

    def find_tasks(self, task_ids: Sequence[str]) -> list[TaskT]:
        """The tasks with these ids from the benchmark's own data, wherever they are."""
        return self.load(split=None, data=None, task_ids=task_ids, limit=None)

    @abc.abstractmethod
    def task_id(self, task: TaskT) -> str:
        """The task's id."""

    @abc.abstractmethod
    def describe(self, task: TaskT) -> str:
        """The problem as text for selectors and abstraction (never with hidden labels)."""

    def examples(self, task: TaskT) -> list[tuple[Any, Any]]:
        """The task's visible input/output pairs, for selectors that run library code on
        them (``--select behaviour``); none by default."""
        return []

    @abc.abstractmethod
    def prompt(
        self,
        task: TaskT,
        *,
        concepts: str,
        previous: Step | None,
        library: TaskLibrary = NO_LIBRARY,
    ) -> list[Message]:
        """The solve prompt; ``previous`` is the last failed step of this attempt, if any;
        ``library`` the memory functions the task's programs may import (a benchmark whose
        answers are no programs ignores it)."""

    def retry_prompt(
        self,
        task: TaskT,
        *,
        concepts: str,
        reselected: str,
        previous: Step,
        library: TaskLibrary = NO_LIBRARY,
    ) -> list[Message]:
        """A retry's prompt when its memory entries were chosen again: ``concepts`` is the
        first try's memory block, ``reselected`` the new one (default: the new block in place
        of the first, as :meth:`prompt` shows it)."""
        return self.prompt(task, concepts=reselected, previous=previous, library=library)

    def fitted_prompt(self, task: TaskT, request: PromptRequest, cuts: PromptCuts) -> list[Message]:
        """``request``'s prompt (:meth:`prompt`, or :meth:`retry_prompt` when it selected
        again) with ``cuts`` made. Default: the cuts of :meth:`PromptRequest.cut`; a
        benchmark whose prompts hold more (ARC's grids and previous answer) overrides it."""
        request = request.cut(cuts)
        if request.reselected is None:
            return self.prompt(
                task, concepts=request.concepts, previous=request.previous, library=request.library
            )
        if request.previous is None:
            raise ValueError("a prompt that selected again answers a previous step")
        return self.retry_prompt(
            task,
            concepts=request.concepts,
            reselected=request.reselected,
            previous=request.previous,
            library=request.library,
        )

    @abc.abstractmethod
    def check(self, task: TaskT, completion: str, library: TaskLibrary = NO_LIBRARY) -> CheckResult:
        """Extract a candidate and verify it on the visible examples (blocking call); its
        program may import ``library``'s functions."""

    def wants_feedback(self, step: Step) -> bool:
        """Whether ``step`` earns a feedback round (while retries are left), judged only from
        what the solver may see (default: it failed its visible examples)."""
        return step.verified is False

    @abc.abstractmethod
    def judge(self, task: TaskT, prediction: Any) -> list[bool]:
        """Per hidden test input, whether ``prediction`` is right (a missing one is wrong)."""

    @abc.abstractmethod
    def grade(self, task: TaskT, attempts: list[Attempt]) -> TaskGrade:
        """Score a task from its judged attempts (``Attempt.correct`` is filled in)."""

    @abc.abstractmethod
    def summarize(self, results: list[TaskResult], attempts: int) -> dict[str, Any]:
        """Run-level metrics for ``summary.json`` (``score`` and the domain's own)."""

    def solved_item(self, task: TaskT, step: Step) -> SolvedItem:
        """What abstraction receives from a confirmed step (default: the worked answer)."""
        return SolvedItem(
            task_id=self.task_id(task),
            domain=self.domain,
            problem=self.describe(task),
            solution=step.completion,
            reasoning=step.reasoning,
        )

    def close(self) -> None:
        """Release the sandbox or other resources."""
        self.sandbox.close()

    # -- the run report (arcmemo report); without these, the report's generic task view -----

    # Summary keys the report's overview shows, in order; None: score and headline_metrics.
    report_metrics: ClassVar[tuple[str, ...] | None] = None

    def report_template(self) -> str | None:
        """Jinja source of this benchmark's report page, or None for the generic view.

        It extends ``report.html.j2`` (in :mod:`arcmemo.analysis.report`) and overrides the task
        blocks that template lists; the data of :meth:`report_task` is ``t.view`` there and
        that of :meth:`report_step` is ``s.view``.
        """
        return None

    def report_task(self, task: TaskT | None, result: TaskResult) -> dict[str, Any]:
        """Plain data for this task's report section (``task`` None: it was not reloaded)."""
        return {}

    def report_step(self, task: TaskT | None, step: Step) -> dict[str, Any]:
        """Plain data for one step of the task's report section."""
        return {}

    def report_curves(self, summary: dict[str, Any], results: list[TaskResult]) -> list[Curve]:
        """This run's lines in the report's charts (default: oracle@k from the attempts)."""
        return [attempts_oracle_curve(results)]

    # -- arcmemo table (arcmemo.analysis.tables renders; without these, no table) -------------

    # What the table's numbers are averaged over, in its notes.
    task_noun: ClassVar[str] = "tasks"
    # The runs --strict is for and what it means there (None: no strict scores), for the
    # refusal of --strict elsewhere: "ARC runs (one program right on every test input)".
    strict_scores: ClassVar[str | None] = None
    # The runs --convention code is for and what it means there (None: the benchmark has
    # only the text convention), as strict_scores: "ARC runs (any step up to ...)". The
    # table hooks below get ``convention`` only when it is "code", so a benchmark
    # without code-convention scores may leave the argument out of its hooks.
    code_scores: ClassVar[str | None] = None

    def has_table(self, summary: dict[str, Any], *, convention: Convention = "text") -> bool:
        """Whether ``summary`` holds what :meth:`table` reads under ``convention`` (else it
        is recomputed)."""
        return False

    def table(
        self, runs: Sequence[ScoredRun], *, strict: bool, convention: Convention = "text"
    ) -> Table:
        """The table of comparable runs (each :meth:`has_table`; ``strict`` only when the
        benchmark has strict scores, ``convention`` "code" only when it has those)."""
        raise NotImplementedError(f"{self.name} has no table layout")

    def order_rows(
        self, runs: Sequence[ScoredRun], *, strict: bool, convention: Convention = "text"
    ) -> OrderRows:
        """Per metric, each run's value, for one setting over several task orders."""
        raise NotImplementedError(f"{self.name} has no table layout over orders")

    def task_values(
        self,
        results: list[TaskResult],
        *,
        attempts: int,
        strict: bool,
        convention: Convention = "text",
    ) -> dict[str, tuple[float, bool]]:
        """Per task, ``(score, solved)`` for the paired comparison (default: the recorded
        score and solved of the scored tasks)."""
        return {r.task_id: (r.score, r.solved) for r in results if r.score is not None}

    def paired_metric(self, *, strict: bool, convention: Convention = "text") -> str:
        """What :meth:`task_values` compares, in the comparison's heading."""
        return "per-task score"

    def paired_solved(self, *, attempts: int, strict: bool) -> str:
        """What "solved" (the second value of :meth:`task_values`, which McNemar's test
        counts) means for runs of ``attempts`` attempts, in the comparison's McNemar line."""
        return "the task's recorded solved"

    # -- arcmemo export ---------------------------------------------------------------------

    exporters: ClassVar[tuple[Exporter, ...]] = ()

    # -- help texts (arcmemo run --help) ----------------------------------------------------

    # The split loaded when none is given (None: a split, --data or --tasks is required).
    default_split: ClassVar[str | None] = None
    # False for a benchmark with one set of tasks (game24): a run that names no split, data
    # or tasks runs it. True: such a run is refused rather than loading default_split.
    needs_task_choice: ClassVar[bool] = True

    @classmethod
    def split_help(cls) -> str:
        """The splits ``--split`` takes, for the help text."""
        return "a named split"


def attempts_oracle_curve(results: list[TaskResult]) -> Curve:
    """oracle@k for k = 1.. from the attempts: the fraction of tasks with an attempt among the
    first k right on every test input."""

    def pass_at(k: int) -> float:
        if not results:
            return 0.0
        right = sum(any(a.correct and all(a.correct) for a in r.attempts[:k]) for r in results)
        return right / len(results)

    k = max((len(r.attempts) for r in results), default=0)
    return oracle_curve([(float(j), pass_at(j)) for j in range(1, k + 1)])


def oracle_curve(points: list[tuple[float, float]]) -> Curve:
    return Curve("oracle@k vs k", "k (attempts)", "score", points, y_max=1.0)


class BenchmarkRegistry(Registry[Benchmark[Any]]):
    """The benchmarks' registry: a benchmark whose prompt templates are missing is refused
    when it registers, not at its first prompt."""

    def register(
        self,
        name: str,
        *,
        options: type[BaseModel] = NoOptions,
        summary: str | None = None,
        cls: type[Benchmark[Any]] | None = None,
    ) -> Callable[[F], F]:
        decorate = super().register(name, options=options, summary=summary, cls=cls)

        def checked(factory: F) -> F:
            component = cls if cls is not None else factory
            if isinstance(component, type) and issubclass(component, Benchmark):
                check_templates(name, component)
            return decorate(factory)

        return checked

    def classes(self) -> list[tuple[str, type[Benchmark[Any]]]]:
        """Every registered benchmark class by name (built-ins imported)."""
        return [
            (entry.name, entry.registered_class)
            for entry in self.entries()
            if entry.registered_class is not None
        ]


def check_templates(name: str, cls: type[Benchmark[Any]]) -> None:
    """Refuse ``cls`` when a template it names in ``templates`` is not under prompts/."""
    from arcmemo.core.resources import data_dir

    folder = data_dir("prompts")
    for template in cls.templates:
        if not (folder / f"{template}.j2").is_file():
            raise RegistryError(
                f"benchmark {name!r} ({cls.__module__}.{cls.__qualname__}): its prompt "
                f"template prompts/{template}.j2 does not exist"
            )


def per_benchmark(text: Callable[[type[Benchmark[Any]]], str]) -> str:
    """``text`` of each registered benchmark after the names it holds for, for help texts:
    ``"aime: 0; arc-agi-1, arc-agi-2: 2"``."""
    names: dict[str, list[str]] = {}
    for name, cls in BENCHMARKS.classes():
        names.setdefault(text(cls), []).append(name)
    return "; ".join(f"{', '.join(owners)}: {said}" for said, owners in names.items())


def code_runs() -> str:
    """The runs that have code-convention scores and what those are, from the
    registered benchmarks (as :func:`strict_runs`)."""
    said = dict.fromkeys(s for _, cls in BENCHMARKS.classes() if (s := cls.code_scores))
    return " and ".join(said)


def strict_runs() -> str:
    """The runs that have strict scores and what those are, from the registered benchmarks
    (``"ARC runs (one program right on every test input)"``)."""
    said = dict.fromkeys(s for _, cls in BENCHMARKS.classes() if (s := cls.strict_scores))
    return " and ".join(said)


BENCHMARKS: BenchmarkRegistry = BenchmarkRegistry(
    "benchmark",
    modules={
        "arc-agi-1": "arcmemo.benchmarks.arc",
        "arc-agi-2": "arcmemo.benchmarks.arc",
        "aime": "arcmemo.benchmarks.aime",
        "jsonl": "arcmemo.benchmarks.jsonl",
        "game24": "arcmemo.benchmarks.game24",
    },
)
