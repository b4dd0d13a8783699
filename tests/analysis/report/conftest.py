"""Scripted runs the report tests render: ARC with retries and online memory, a baseline
ARC run to compare with, and an AIME run. Built once per session (each takes seconds)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arcmemo.memory.seeds import load_seed
from arcmemo.run.config import RunConfig
from tests.support.chromium import Browser, find_chromium
from tests.support.paths import FIXTURES
from tests.support.report_runs import (
    AIME_SCRIPT,
    ARC_TASKS,
    CONCEPTS_ANSWER,
    NO_CHROMIUM,
    PSEUDOCODE_ANSWER,
    SELECTION_ANSWER,
    XSS,
    run_scripted,
)


@pytest.fixture(scope="session")
def arc_memory_run(tmp_path_factory: pytest.TempPathFactory, arc_plan: ModuleType) -> Path:
    """ARC, 2 attempts x 2 retries, LLM selection, online memory updated every 2 tasks.

    Every solve answer carries a script tag, to check that model text is escaped.
    """
    base = tmp_path_factory.mktemp("arc-memory")
    memory = base / "memory-in.json"
    load_seed("arc").save(memory)
    plan = arc_plan.PlanScript(arc_plan.build_plan(str(base / "hostile.txt")))

    def respond(messages: list[Any]) -> str:
        text = "\n\n".join(m.content for m in messages)
        if "decide which of them are relevant to this puzzle" in text:  # the selection
            return SELECTION_ANSWER + "\n" + XSS
        if "<pseudocode>" in text:
            return PSEUDOCODE_ANSWER
        if "Abstract the reusable concepts" in text:
            return CONCEPTS_ANSWER
        return plan(messages) + "\n" + XSS + "\n"

    config = RunConfig(
        benchmark="arc-agi-1",
        data=str(FIXTURES / "arc" / "eval"),
        tasks=ARC_TASKS,
        model="scripted:inline",
        attempts=2,
        feedback_rounds=2,
        memory=memory,
        memory_out=base / "memory-out.json",
        selector="llm",
        update="online",
        update_every=2,
        schedule="tasks",  # a snapshot every two tasks, as the tests below count them
        out=base / "run",
    )
    run_scripted(config, respond)
    return config.out


@pytest.fixture(scope="session")
def arc_baseline_run(tmp_path_factory: pytest.TempPathFactory, arc_plan: ModuleType) -> Path:
    """ARC without memory: only bbb1b8b6 right (a loss of the memory run), 66e6c45b wrong."""
    base = tmp_path_factory.mktemp("arc-baseline")
    plan = arc_plan.build_plan(str(base / "hostile.txt"))
    identity = [[arc_plan.IDENTITY], [arc_plan.IDENTITY]]
    plan.update({tid: identity for tid in ("66e6c45b", "00576224", "e345f17b", "ca8de6ea")})
    fill_gaps = "def transform(grid):\n" + arc_plan.FILL_GAPS
    plan["bbb1b8b6"] = [[fill_gaps], [fill_gaps]]
    config = RunConfig(
        benchmark="arc-agi-1",
        data=str(FIXTURES / "arc" / "eval"),
        tasks=ARC_TASKS,
        model="scripted:inline",
        attempts=2,
        feedback_rounds=0,
        out=base / "run",
    )
    run_scripted(config, arc_plan.PlanScript(plan))
    return config.out


@pytest.fixture(scope="session")
def aime_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """AIME with 3 attempts on the three toy problems."""
    base = tmp_path_factory.mktemp("aime")
    config = RunConfig(
        benchmark="aime",
        data=str(FIXTURES / "aime" / "problems.jsonl"),
        model="scripted:inline",
        attempts=3,
        out=base / "run",
    )
    run_scripted(config, AIME_SCRIPT)
    return config.out


@pytest.fixture(scope="session")
def synthetic_400(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic ARC run of 400 tasks with retries (tests/support/synthetic_runs.py)."""
    from tests.support.synthetic_runs import write_run

    return write_run(tmp_path_factory.mktemp("synthetic-400"), 400)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    """A headless Chromium with one page; the test is skipped where none is installed."""
    executable = find_chromium()
    if executable is None:
        pytest.skip(NO_CHROMIUM)
    opened = Browser(executable, tmp_path / "profile")
    try:
        yield opened
    finally:
        opened.close()
