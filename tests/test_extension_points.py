"""A component registered from outside the package is usable from the CLI and recorded.

The toy benchmark below lives only in this module: registering it is all it takes to run
it with ``arcmemo run``, write memory from it with ``arcmemo abstract``, draw it with
``arcmemo report``, lay its runs out with ``arcmemo table``, export them with
``arcmemo export`` and name its splits in ``arcmemo run --help``, each through its own
hooks. A toy selector with an option shows the same for selectors.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from pydantic import BaseModel, ConfigDict

from arcmemo.benchmarks.base import (
    BENCHMARKS,
    Benchmark,
    BenchmarkDataError,
    RunDefaults,
    select_tasks,
)
from arcmemo.benchmarks.outputs import (
    Cell,
    Column,
    Curve,
    Exporter,
    OrderRows,
    ScoredRun,
    Table,
)
from arcmemo.cli.main import cli
from arcmemo.core.records import Attempt, CheckResult, Selection, Step, TaskGrade, TaskResult
from arcmemo.library.task import NO_LIBRARY, TaskLibrary
from arcmemo.memory.schema import Concept, Lesson, Memory, Solution
from arcmemo.models.base import Message
from arcmemo.models.client import ModelClient
from arcmemo.selection.base import SELECTORS, Selector
from tests.support.report_pages import task_section


class Sum(BaseModel):
    id: str
    a: int
    b: int
    total: int  # the hidden label


class SumsBenchmark(Benchmark[Sum]):
    """Add two numbers (a test benchmark)."""

    name = "toy-sums"
    domain = "toy"
    defaults = RunDefaults(feedback_rounds=0, write_signal="consistency", selector="all")
    headline_metrics = ("score", "exact")

    def load(
        self,
        *,
        split: str | None,
        data: str | None,
        task_ids: Sequence[str] | None,
        limit: int | None,
    ) -> list[Sum]:
        if data is None:
            raise BenchmarkDataError("toy-sums needs --data FILE")
        records = json.loads(Path(data).read_text())
        return select_tasks([Sum.model_validate(r) for r in records], task_ids, limit)

    def task_id(self, task: Sum) -> str:
        return task.id

    def describe(self, task: Sum) -> str:
        return f"What is {task.a} + {task.b}?"

    def prompt(
        self,
        task: Sum,
        *,
        concepts: str,
        previous: Step | None,
        library: TaskLibrary = NO_LIBRARY,
    ) -> list[Message]:
        text = (concepts + "\n\n" if concepts else "") + self.describe(task)
        return [Message(role="user", content=text)]

    def check(self, task: Sum, completion: str, library: TaskLibrary = NO_LIBRARY) -> CheckResult:
        words = completion.split()
        value = int(words[-1]) if words and words[-1].lstrip("-").isdigit() else None
        return CheckResult(candidate=completion.strip(), prediction=value)

    def judge(self, task: Sum, prediction: Any) -> list[bool]:
        return [prediction == task.total]

    def grade(self, task: Sum, attempts: list[Attempt]) -> TaskGrade:
        right = sum(all(a.correct) for a in attempts)
        return TaskGrade(solved=right > 0, score=right / max(len(attempts), 1))

    def summarize(self, results: list[TaskResult], attempts: int) -> dict[str, Any]:
        scores = [r.score for r in results]
        return {
            "score": sum(scores) / len(scores) if scores else 0.0,
            "exact": sum(r.solved for r in results),
        }

    # Its own table, chart, export and --split help: nothing outside this module knows it.

    task_noun = "sums"

    def has_table(self, summary: dict[str, Any]) -> bool:
        return "exact" in summary

    def table(self, runs: Sequence[ScoredRun], *, strict: bool) -> Table:
        rows = [
            ([r.label], [Cell(r.summary["score"]), Cell(r.summary["exact"] / 100)]) for r in runs
        ]
        columns = [Column("sum score", False), Column("exact (hundreds)", False)]
        return Table(keys=["adder"], columns=columns, rows=rows, notes=["Toy sums table."])

    def order_rows(self, runs: Sequence[ScoredRun], *, strict: bool) -> OrderRows:
        return OrderRows(
            keys=["metric"], rows=[(["sum score"], [r.summary["score"] for r in runs])]
        )

    def report_curves(self, summary: dict[str, Any], results: list[TaskResult]) -> list[Curve]:
        points = [(float(i), r.score or 0.0) for i, r in enumerate(results)]
        return [Curve("Sum score by task position", "position", "score", points, y_max=1.0)]

    exporters = (
        Exporter(
            name="sums-csv",
            help="RUN's sums as CSV (a toy exporter).",
            default_file="sums.csv",
            label="sum tables",
            runs="toy-sums",
            write=lambda results: "".join(
                f"{r.task_id},{r.attempts[0].steps[-1].prediction}\n" for r in results
            ),
        ),
    )

    @classmethod
    def split_help(cls) -> str:
        return "no splits, give --data SUMS.json"


class EveryNth(BaseModel):
    model_config = ConfigDict(extra="forbid")
    every: int = 1


class EveryNthSelector(Selector):
    """Every n-th lesson (a test selector)."""

    name = "toy-every"

    def __init__(self, options: EveryNth) -> None:
        self.every = options.every

    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        clients: Mapping[str, ModelClient],
        previous_attempt: str | None = None,
    ) -> Selection:
        names = [f"lesson {i}" for i in range(0, len(memory.lessons), self.every)]
        return Selection(selector=self.name, selected=names)


SCRIPT = """\
"Reconstruct how someone": "<thought_process>\\n- o 1: a sum\\n- t 1: add\\n</thought_process>"
"situation/suggestion pairs": "```yaml\\n- situation: adding\\n  suggestion: count on\\n```"
"What is 2 + 3?":
  - "It is 5"
  - "It is 5"
"What is 4 + 4?":
  - "It is 8"
  - "I think 9"
"What is 1 + 1?":
  - "It is 3"
  - "It is 3"
"""


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    BENCHMARKS.register("toy-sums")(SumsBenchmark)
    SELECTORS.register("toy-every", options=EveryNth)(EveryNthSelector)
    yield
    BENCHMARKS.unregister("toy-sums")
    SELECTORS.unregister("toy-every")


@pytest.fixture
def toy_files(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "sums.json"
    data.write_text(
        json.dumps(
            [
                {"id": "s1", "a": 2, "b": 3, "total": 5},
                {"id": "s2", "a": 4, "b": 4, "total": 8},
                {"id": "s3", "a": 1, "b": 1, "total": 2},
            ]
        )
    )
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    return data, script


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], env={"COLUMNS": "300"})


def test_a_registered_benchmark_runs_abstracts_and_reports(
    tmp_path: Path, toy_files: tuple[Path, Path]
) -> None:
    data, script = toy_files
    memory = tmp_path / "memory.json"
    Memory(domain="toy").save(memory)
    run = tmp_path / "run"
    result = invoke(
        "run", "toy-sums", "--data", data, "--model", f"scripted:{script}",
        "--memory", memory, "--out", run, "--format", "oe",
        "--select", "toy-every", "--select-arg", "every=2",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_tasks"] == 3 and summary["exact"] == 2
    assert summary["score"] == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert "exact" in result.output  # the benchmark's headline metric is shown
    config = json.loads((run / "config.json").read_text())
    assert config["benchmark"] == {"name": "toy-sums", "options": {}}
    assert config["selector"] == {"name": "toy-every", "options": {"every": 2}}
    # The benchmark's own defaults were resolved and saved.
    assert config["feedback_rounds"] == 0 and config["write_signal"]["name"] == "consistency"

    written = invoke(
        "abstract", "--from", run, "--memory", memory, "--format", "oe",
        "--write-signal", "consistency", "--model", f"scripted:{script}",
    )  # fmt: skip
    assert written.exit_code == 0, written.output
    grown = Memory.load(memory)
    # The consistency signal confirms a strict majority, right or wrong: s1 (5, 5) and
    # s3 (3, 3), not s2 (8, 9).
    assert set(grown.solutions) == {"s1", "s3"} and grown.lessons

    page = tmp_path / "report.html"
    drawn = invoke("report", run, "--out", page)
    assert drawn.exit_code == 0, drawn.output
    html = page.read_text()
    opened = task_section(html, "s1")  # a task's details are packed until it is opened
    assert "s1" in html and "What is 2 + 3?" in opened and "It is 5" in opened


def test_a_registered_benchmark_gets_its_table_chart_export_and_split_help(
    tmp_path: Path, toy_files: tuple[Path, Path]
) -> None:
    data, script = toy_files
    runs = []
    for label, seed in (("first", None), ("second", "1")):
        order = ["--order-seed", seed] if seed else []
        args = ["--data", data, "--model", f"scripted:{script}", "--out", tmp_path / label]
        ran = invoke("run", "toy-sums", *args, *order)
        assert ran.exit_code == 0, ran.output
        runs.append(tmp_path / label)

    table = invoke("table", *runs, "--paired")
    assert table.exit_code == 0, table.output
    assert "| adder | sum score | exact (hundreds) |" in table.output
    assert "| first | 50.00 | 2.00 |" in table.output and "- Toy sums table." in table.output
    assert "Paired comparison first − second on 3 tasks (per-task score" in table.output
    orders = invoke("table", *runs, "--over-orders")
    assert orders.exit_code == 0, orders.output
    assert "| sum score | 50.00 (0.00) | 50.00 | 50.00 |" in orders.output
    assert "toy-sums scores in percent over 3 sums" in orders.output
    strict = invoke("table", *runs, "--strict")
    assert strict.exit_code == 1 and "--strict is for ARC runs" in strict.output

    exported = invoke("export", "sums-csv", runs[0])
    assert exported.exit_code == 0, exported.output
    assert (runs[0] / "sums.csv").read_text() == "s1,5\ns2,8\ns3,3\n"
    assert "sums-csv" in invoke("export", "--help").output
    refused = invoke("export", "submission", runs[0])
    assert refused.exit_code == 1
    assert "a toy-sums run; ARC Prize submissions are for arc-agi runs" in refused.output
    arc_only = invoke("export", "sums-csv", tmp_path)  # not a run directory at all
    assert arc_only.exit_code == 1 and "Traceback" not in arc_only.output

    page = tmp_path / "report.html"
    drawn = invoke("report", runs[0], "--compare", runs[1], "--out", page)
    assert drawn.exit_code == 0, drawn.output
    html = page.read_text()
    assert html.count(">Sum score by task position</text>") == 1
    assert ">oracle@k vs k</text>" not in html  # its own curves replace the default one

    # Joined as one line; click may break a line after a hyphen ("toy-" / "sums").
    help_text = " ".join(invoke("run", "--help").output.split()).replace("- ", "-")
    assert "toy-sums: no splits, give --data SUMS.json" in help_text
    assert "arc-agi-1: training | evaluation | val100, default evaluation" in help_text


def test_unknown_names_and_options_are_one_line_errors(
    tmp_path: Path, toy_files: tuple[Path, Path]
) -> None:
    data, script = toy_files
    memory = tmp_path / "memory.json"
    Memory(domain="toy").save(memory)
    base = ["run", "toy-sums", "--data", str(data), "--model", f"scripted:{script}"]
    wrong = invoke(*base, "--select", "toy-evry")
    assert wrong.exit_code != 0
    assert "did you mean 'toy-every'" in wrong.output
    bad = invoke(*base, "--select", "toy-every", "--select-arg", "often=3", "--memory", memory)
    assert bad.exit_code == 1
    assert "selector 'toy-every': often: Extra inputs are not permitted" in bad.output
    assert "Traceback" not in bad.output


def test_run_help_lists_registered_components() -> None:
    result = invoke("run", "--help")
    assert result.exit_code == 0
    assert "toy-sums" in result.output and "Add two numbers" in result.output
    assert "toy-every" in result.output and "every=1" in result.output


def test_the_documented_example_registers_a_selector_the_cli_accepts(tmp_path: Path) -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "extending.md").read_text()
    code = page.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/extending.md", "exec"), {})
    try:
        spec = SELECTORS.spec("first", {"n": "5"})
        assert spec.options == {"n": 5}
        memory = Memory(domain="toy")
        selection = asyncio.run(SELECTORS.create(spec).select(memory, "p", task_id="t", clients={}))
        assert selection.selector == "first" and selection.selected == []
    finally:
        SELECTORS.unregister("first")


@pytest.mark.parametrize("name", SELECTORS.names())
def test_every_selector_that_calls_a_model_previews_its_prompts(name: str) -> None:
    # A dry run shows and counts these prompts instead of calling the model.
    selector = SELECTORS.create(name)
    memory = Memory(
        concepts=[Concept(name="rotate grid", kind="routine")],
        lessons=[Lesson(situation="a grid turns", suggestion="rotate it")],
        cheatsheet="Rotate when unsure.",
        solutions={"older": Solution(program="def transform(g):\n    return g\n", problem="p")},
    )
    prompts = asyncio.run(selector.preview(memory, "a problem", task_id="t"))
    assert bool(prompts) == selector.uses_model
