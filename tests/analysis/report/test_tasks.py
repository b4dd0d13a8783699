"""Task views: statuses, and the generic view of a benchmark that defines no report hooks.

The toy benchmark below lives only in this module and defines none of the report hooks; its
run still renders: the problem text, and per step what was extracted, what was graded and
whether it was right, with the completion collapsed and model text escaped.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from arcmemo.analysis.report import build_report, load_run
from arcmemo.analysis.report.tasks import step_verdict, task_status
from arcmemo.benchmarks.base import BENCHMARKS, Benchmark, select_tasks
from arcmemo.core.records import (
    Attempt,
    CheckResult,
    PromptCut,
    PromptFit,
    Step,
    TaskGrade,
    TaskResult,
)
from arcmemo.library.task import NO_LIBRARY, TaskLibrary
from arcmemo.models.base import Message
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import run_benchmark
from tests.support.report_pages import task_section
from tests.support.report_runs import XSS, scripted_client

ESCAPED_XSS = "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;"


def test_task_status() -> None:
    assert task_status(TaskResult(task_id="a", solved=True, score=1.0)) == "solved"
    assert task_status(TaskResult(task_id="a", score=0.5)) == "partial"
    assert task_status(TaskResult(task_id="a")) == "unsolved"
    assert task_status(TaskResult(task_id="a", solved=True, error="rate limited")) == "error"


def test_a_steps_verdict_says_what_its_prompt_lost_to_the_window() -> None:
    """A prompt cut to fit is named with its cuts; one that no cut could fit says it was never
    sent, not that the model call failed."""
    fit = PromptFit(
        context_window=8192, budget=6144, full_tokens=9300, tokens=6000,
        cuts=[
            PromptCut(part="produced grids", tokens_saved=2100),
            PromptCut(part="answer prose", tokens_saved=1200),
        ],
    )  # fmt: skip
    cut = Step(round=1, completion="x", verified=False, checks=[], prompt_fit=fit)
    assert step_verdict(cut) == (
        "passes 0/0 train pairs · cut to fit the 8,192-token window: "
        "produced grids (2,100 tokens), answer prose (1,200 tokens)"
    )
    too_long = Step(
        round=1, completion="", error="prompt too long", error_kind="prompt_too_long",
        prompt_fit=fit,
    )  # fmt: skip
    assert step_verdict(too_long).startswith("not sent: the prompt is too long")
    failed = Step(round=1, completion="", error="HTTP 500", error_kind="server")
    assert step_verdict(failed) == "model call failed"


class Word(BaseModel):
    id: str
    word: str


@BENCHMARKS.register("toy-report-reverse")
class ReverseBenchmark(Benchmark[Word]):
    """Spell a word backwards (a test benchmark without report hooks)."""

    name = "toy-report-reverse"
    domain = "toy"
    headline_metrics = ("score", "exact")

    def load(
        self,
        *,
        split: str | None,
        data: str | None,
        task_ids: Sequence[str] | None,
        limit: int | None,
    ) -> list[Word]:
        records = json.loads(Path(data or "").read_text())
        return select_tasks([Word.model_validate(r) for r in records], task_ids, limit)

    def task_id(self, task: Word) -> str:
        return task.id

    def describe(self, task: Word) -> str:
        return f"Spell {task.word!r} backwards."

    def prompt(
        self,
        task: Word,
        *,
        concepts: str,
        previous: Step | None,
        library: TaskLibrary = NO_LIBRARY,
    ) -> list[Message]:
        return [Message(role="user", content=self.describe(task))]

    def check(self, task: Word, completion: str, library: TaskLibrary = NO_LIBRARY) -> CheckResult:
        lines = [line for line in completion.splitlines() if line.startswith("ANSWER:")]
        if not lines:
            return CheckResult(parse_error="no ANSWER line")
        candidate = lines[-1].removeprefix("ANSWER:").strip()
        return CheckResult(candidate=candidate, prediction=candidate.lower())

    def judge(self, task: Word, prediction: Any) -> list[bool]:
        return [prediction == task.word[::-1]]

    def grade(self, task: Word, attempts: list[Attempt]) -> TaskGrade:
        right = sum(all(a.correct) for a in attempts)
        return TaskGrade(solved=right > 0, score=right / max(len(attempts), 1))

    def summarize(self, results: list[TaskResult], attempts: int) -> dict[str, Any]:
        scores = [r.score for r in results]
        return {
            "score": sum(scores) / len(scores) if scores else 0.0,
            "exact": sum(r.solved for r in results),
        }


SCRIPT = {
    "'abc'": ["ANSWER: cba", f"I think {XSS}\nANSWER: abc"],
    "'xy'": ["no idea", "ANSWER: YX"],
}


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("toy")
    data = base / "words.json"
    data.write_text(json.dumps([{"id": "w1", "word": "abc"}, {"id": "w2", "word": "xy"}]))
    config = RunConfig(
        benchmark="toy-report-reverse",
        data=str(data),
        model="scripted:inline",
        attempts=2,
        out=base / "run",
    )
    asyncio.run(run_benchmark(config, models={"solver": scripted_client(SCRIPT, config.out)}))
    return config.out


def test_a_benchmark_without_report_hooks_gets_the_generic_view(toy_run: Path) -> None:
    run = load_run(toy_run)
    assert run.benchmark is not None and run.benchmark.name == "toy-report-reverse"
    assert set(run.tasks) == {"w1", "w2"} and run.notes == []
    page = build_report(toy_run)
    cards = page[page.index('id="summary-cards"') :]
    assert '<div class="v">50.0%</div><div class="k">score</div>' in cards
    assert '<div class="v">2</div><div class="k">exact</div>' in cards  # a count, as is
    first = task_section(page, "w1")
    assert '<h4>problem</h4><pre class="problem">Spell &#39;abc&#39; backwards.</pre>' in first
    # each step: what was extracted, what was graded, whether it was right
    assert '<pre class="candidate">cba</pre>' in first
    assert '<p>answer: <b>cba</b> · <span class="ok">test 1 ✓</span>' in first
    assert '<p>answer: <b>abc</b> · <span class="bad">test 1 ✗</span>' in first
    assert (
        '<span class="ok">right ✓</span>' in first and '<span class="bad">wrong ✗</span>' in first
    )
    # the final answer of each attempt, in a table
    answers = first[first.index('<table class="data answers">') :]
    assert "<td>1</td><td>cba</td><td>cba</td>" in answers
    assert "<details><summary>completion" in first
    second = task_section(page, "w2")
    assert "no ANSWER line" in second
    assert "<td>2</td><td>YX</td><td>yx</td>" in second  # candidate, then prediction
    # no benchmark-specific pieces, model text escaped
    opened = first + second
    assert '<table class="grid"' not in opened and "train pairs" not in opened
    assert XSS not in page and XSS not in opened and ESCAPED_XSS in first
    assert re.findall(r'<tr data-task="([^"]+)" data-status="([^"]+)">', page) == [
        ("w1", "solved"),
        ("w2", "solved"),
    ]
