"""Solve and retry prompts fitted to the solver's context window (arcmemo.run.prompt_fit): the
parts are cut in the stated order, each only as far as needed, tokens counted as the llm
selector's fitting counts them, and what was cut is said."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any, get_args

import pytest
from click.testing import CliRunner

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark, ArcOptions
from arcmemo.benchmarks.arc.data import ArcPair, ArcTask
from arcmemo.benchmarks.arc.prompt import ANSWER_CUT, PROSE_CUT
from arcmemo.benchmarks.base import NO_CUTS, PromptCuts, PromptRequest
from arcmemo.cli.main import cli
from arcmemo.core.records import (
    Attempt,
    CutPart,
    PairCheck,
    PromptCut,
    PromptFit,
    Selection,
    Step,
    TaskResult,
)
from arcmemo.core.tokens import estimate_tokens
from arcmemo.library.task import TaskLibrary
from arcmemo.memory.schema import LibraryFunction
from arcmemo.models.base import Message
from arcmemo.models.context import answer_room
from arcmemo.models.sending import prompt_tokens
from arcmemo.run.prompt_fit import CUT_ORDER, FittedPrompt, fit_prompt
from tests.support.fake_llm_server import FakeLLMServer, _text_of
from tests.support.library_run import TILE, library_memory
from tests.support.paths import FIXTURES

GRID = [[(r * 3 + c) % 10 for c in range(12)] for r in range(12)]
WRONG = [[0] * 12 for _ in range(12)]
TASK = ArcTask(
    id="fade0001",
    train=[
        ArcPair(input=GRID, output=GRID),
        ArcPair(input=WRONG, output=GRID),
        ArcPair(input=GRID, output=WRONG),
        ArcPair(input=WRONG, output=WRONG),
    ],
    test_inputs=[GRID],
)
PROGRAM = "def transform(grid):\n    return grid * 0\n"
TRACEBACK = (
    'Traceback (most recent call last):\n  File "<program>", line 2, in transform\n'
    "    return grid * 0\nValueError: operands could not be broadcast together\n"
)
PROSE = "I think the rule keeps every cell but paints it black. " * 60
ANSWER = f"{PROSE}\n```python\n{PROGRAM}```\nThat should do it. {PROSE}"
PREVIOUS = Step(
    round=0,
    completion=ANSWER,
    candidate=PROGRAM,
    verified=False,
    checks=[
        *(PairCheck(index=i, correct=False, output=WRONG) for i in range(2)),
        *(
            PairCheck(index=i, correct=False, error=TRACEBACK, error_kind="exception")
            for i in (2, 3)
        ),
    ],
)
HINT = "### Concepts\n" + "- recolor: paint an object another color\n" * 40


def _function(name: str, imported_by: int, tests: int = 0) -> LibraryFunction:
    return LibraryFunction(
        name=name,
        source=f"def {name}(grid):\n    return grid\n",
        signature="(grid: Grid) -> Grid",
        docstring=f"What {name} does, told at length for the listing. " * 4,
        imported_by=[f"task-{i}" for i in range(imported_by)],
        tests=[],
        sources=["earlier"],
    )


LIBRARY = TaskLibrary(
    shown=(_function("used_twice", 2), _function("never_used", 0), _function("used_once", 1))
)


def _text(messages: list[Message]) -> str:
    return "\n".join(m.content for m in messages)


@pytest.fixture(params=["paper", "arcmemo"])
def arc(request: pytest.FixtureRequest) -> ArcBenchmark:
    return ArcBenchmark(ArcOptions(layout=request.param, feedback="completion"))


def _levels(benchmark: ArcBenchmark, request: PromptRequest) -> list[tuple[str, int, str]]:
    """Per cut of CUT_ORDER in turn (the library's functions one by one): its part, the
    estimated tokens of the prompt with it and every cut before, and that prompt."""
    cuts = NO_CUTS
    levels: list[tuple[str, int, str]] = []
    for part in CUT_ORDER:
        if part == "library functions":
            for name in request.library.least_used_first():
                cuts = PromptCuts(
                    **{**cuts.__dict__, "library_functions": (*cuts.library_functions, name)}
                )
                prompt = benchmark.fitted_prompt(TASK, request, cuts)
                levels.append((part, prompt_tokens(prompt), _text(prompt)))
            continue
        field = {"reselected concepts": "reselected", "memory block": "memory_block"}.get(
            part, part.replace(" ", "_")
        )
        cuts = PromptCuts(**{**cuts.__dict__, field: True})
        prompt = benchmark.fitted_prompt(TASK, request, cuts)
        levels.append((part, prompt_tokens(prompt), _text(prompt)))
    return levels


def _window_for(budget: int) -> int:
    """The window whose budget is ``budget`` with one token of room for the answer (so
    that every prompt above the budget is also beyond the window)."""
    assert budget + 1 - answer_room(budget + 1, 1) == budget
    return budget + 1


def _fit(benchmark: ArcBenchmark, request: PromptRequest, window: int) -> tuple[list[str], str]:
    fitted = fit_prompt(
        lambda cuts: benchmark.fitted_prompt(TASK, request, cuts),
        request.library,
        window=window,
        answer_tokens=1,
    )
    return [c.part for c in fitted.cuts], _text(fitted.messages)


def test_a_retry_that_fits_goes_whole(arc: ArcBenchmark) -> None:
    benchmark = arc
    request = PromptRequest(HINT, PREVIOUS, LIBRARY, reselected="")
    full = benchmark.fitted_prompt(TASK, request, NO_CUTS)
    fitted = fit_prompt(
        lambda cuts: benchmark.fitted_prompt(TASK, request, cuts),
        LIBRARY,
        window=_window_for(prompt_tokens(full)),
        answer_tokens=1,
    )
    assert fitted.fit is None and fitted.messages == full
    # Byte for byte what prompt/retry_prompt render: the fitting path is their path.
    assert full == benchmark.retry_prompt(
        TASK, concepts=HINT, reselected="", previous=PREVIOUS, library=LIBRARY
    )


def test_a_retry_is_cut_in_the_stated_order_just_far_enough(arc: ArcBenchmark) -> None:
    benchmark = arc
    request = PromptRequest(HINT, PREVIOUS, LIBRARY, reselected="- newly chosen concept\n" * 30)
    levels = _levels(benchmark, request)
    sizes = [prompt_tokens(benchmark.fitted_prompt(TASK, request, NO_CUTS))]
    sizes += [size for _, size, _ in levels]
    shrinks = [size < before for size, before in zip(sizes[1:], sizes, strict=False)]
    # Every part is in this prompt but arcmemo's layout's memory block: that layout shows
    # the new choice in place of the first block.
    expected = [p for p in CUT_ORDER if benchmark.layout == "paper" or p != "memory block"]
    assert (
        list(dict.fromkeys(p for (p, _, _), s in zip(levels, shrinks, strict=True) if s))
        == expected
    )
    for k, (_, size, text) in enumerate(levels):
        if not shrinks[k]:
            continue
        parts, sent = _fit(benchmark, request, _window_for(size))
        assert sent == text  # exactly this level: nothing cut beyond what fits
        made = (p for (p, _, _), s in zip(levels[: k + 1], shrinks, strict=False) if s)
        assert parts == list(dict.fromkeys(made))


def test_what_each_cut_leaves_in_its_place() -> None:
    benchmark = ArcBenchmark(ArcOptions(layout="paper"))
    request = PromptRequest(HINT, PREVIOUS, LIBRARY)
    grids_cut = _text(benchmark.fitted_prompt(TASK, request, PromptCuts(produced_grids=True)))
    assert "Example 1: a 12x12 grid with 129 of 144 cells unlike the expected output" in grids_cut
    assert PROSE in grids_cut  # the answer itself is still whole
    prose_cut = _text(
        benchmark.fitted_prompt(TASK, request, PromptCuts(produced_grids=True, answer_prose=True))
    )
    assert PROSE not in prose_cut and PROSE_CUT in prose_cut and PROGRAM in prose_cut
    last = PromptCuts(
        produced_grids=True,
        answer_prose=True,
        library_docstrings=True,
        library_functions=("never_used", "used_once", "used_twice"),
        memory_block=True,
        error_tracebacks=True,
        previous_program=True,
    )
    minimal = _text(benchmark.fitted_prompt(TASK, request, last))
    assert "- Example 3: ValueError: operands could not be broadcast together\n" in minimal
    assert "- Example 4: the same error as example 3\n" in minimal and "Traceback" not in minimal
    assert PROGRAM not in minimal and ANSWER_CUT in minimal and HINT.strip() not in minimal
    assert "arcmemo_library" not in minimal
    # Never cut: the puzzle and the instructions of a retry.
    assert "[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]" in minimal and "### New Instructions" in minimal


def test_library_docstrings_go_before_signatures_and_the_least_used_function_first() -> None:
    assert LIBRARY.least_used_first() == ["never_used", "used_once", "used_twice"]
    benchmark = ArcBenchmark(ArcOptions(layout="paper"))
    request = PromptRequest("", None, LIBRARY)
    whole = benchmark.fitted_prompt(TASK, request, NO_CUTS)
    bare = benchmark.fitted_prompt(TASK, request, PromptCuts(library_docstrings=True))
    one_less = benchmark.fitted_prompt(
        TASK, request, PromptCuts(library_docstrings=True, library_functions=("never_used",))
    )
    parts, sent = _fit(benchmark, request, _window_for(prompt_tokens(one_less)))
    assert sent == _text(one_less)
    assert "never_used" not in sent and "`used_once(grid: Grid) -> Grid`" in sent
    assert "told at length" not in sent and "told at length" in _text(whole)
    assert parts == ["library docstrings", "library functions"]
    fitted = fit_prompt(
        lambda cuts: benchmark.fitted_prompt(TASK, request, cuts),
        LIBRARY,
        window=_window_for(prompt_tokens(one_less)),
        answer_tokens=1,
    )
    assert fitted.fit is not None
    assert fitted.fit.cuts[1].detail == "never_used"
    assert fitted.fit.full_tokens == prompt_tokens(whole) > fitted.fit.tokens
    assert fitted.fit.cuts[0].tokens_saved == prompt_tokens(whole) - prompt_tokens(bare)
    # What the programs may import is untouched by the listing's cuts.
    assert (
        request.cut(PromptCuts(library_functions=("never_used",))).library.source == LIBRARY.source
    )


def test_the_memory_block_and_the_program_are_cut_only_to_fit_the_window_itself() -> None:
    benchmark = ArcBenchmark(ArcOptions(layout="paper"))
    request = PromptRequest(HINT, PREVIOUS, TaskLibrary())

    def fit(window: int, answer: int | None) -> FittedPrompt:
        return fit_prompt(
            lambda cuts: benchmark.fitted_prompt(TASK, request, cuts),
            request.library,
            window=window,
            answer_tokens=answer,
        )

    full = prompt_tokens(benchmark.fitted_prompt(TASK, request, NO_CUTS))
    # The whole retry fits the window, not the half of it left beside the answer's room:
    # the grids and the prose go for that room, the memory block and the program stay.
    roomy = fit(full + 1, (full + 1) // 2)
    assert [c.part for c in roomy.cuts] == ["produced grids", "answer prose"]
    assert roomy.fit is not None and roomy.fit.tokens > roomy.fit.budget
    assert HINT.strip() in _text(roomy.messages) and PROGRAM in _text(roomy.messages)
    # A window that not even the minimal retry fits: the minimal one goes (the client then
    # records prompt_too_long), every cut said.
    levels = _levels(benchmark, request)
    tiny = fit(levels[-1][1] - 10, None)
    assert _text(tiny.messages) == levels[-1][2]
    assert [c.part for c in tiny.cuts] == [
        "produced grids",
        "answer prose",
        "memory block",
        "error tracebacks",
        "previous program",
    ]


def test_a_prompt_is_sent_whole_when_the_window_is_unknown() -> None:
    benchmark = ArcBenchmark(ArcOptions())
    request = PromptRequest(HINT, PREVIOUS, LIBRARY)
    fitted = fit_prompt(
        lambda cuts: benchmark.fitted_prompt(TASK, request, cuts),
        LIBRARY,
        window=None,
        answer_tokens=None,
    )
    assert fitted.fit is None and fitted.messages == benchmark.fitted_prompt(TASK, request, NO_CUTS)


# -- in a run: an OpenAI-compatible server on 127.0.0.1, the window declared ---------------

ARC_DIR = FIXTURES / "arc" / "eval"
REASONING = "My reasoning about the rule goes on at length here. "
# Long prose around a program whose outputs (30x30 grids) are wrong on every example.
WORDY_ANSWER = (
    REASONING * 80
    + "```python\nimport numpy as np\n\ndef transform(grid):\n"
    + "    return np.ones((30, 30), dtype=int)\n```\n"
    + REASONING * 20
)


def _run(server: FakeLLMServer, out: Path, *extra: str) -> dict[str, Any]:
    args = ["run", "arc-agi-1", "--data", str(ARC_DIR), "--model", "openai:m"]
    args += ["--base-url", server.openai_base_url, "--out", str(out), "--no-cache"]
    args += ["--attempts", "1", "--max-tokens", "100", *extra]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def _sent(server: FakeLLMServer) -> list[str]:
    """The text of each chat request the server got, in order."""
    chats = [r for r in server.requests if "messages" in r.body]
    return ["\n".join(_text_of(m["content"]) for m in r.body["messages"]) for r in chats]


def _steps(out: Path) -> list[dict[str, Any]]:
    (row,) = [json.loads(line) for line in (out / "results.jsonl").open()]
    steps: list[dict[str, Any]] = row["attempts"][0]["steps"]
    return steps


def _first_prompt_tokens(server: FakeLLMServer, out: Path, *extra: str) -> int:
    """The estimated tokens of a run's first solve prompt, from a run without a window."""
    _run(server, out, "--feedback-rounds", "0", *extra)
    return sum(estimate_tokens(_text_of(m["content"])) for m in _chat_messages(server)[-1])


def _chat_messages(server: FakeLLMServer) -> list[list[dict[str, Any]]]:
    return [r.body["messages"] for r in server.requests if "messages" in r.body]


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-prompt-fit")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.mark.usefixtures("api_key")
def test_a_retry_too_long_for_the_window_is_cut_and_sent(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.state.respond = lambda messages, index: WORDY_ANSWER
        first = _first_prompt_tokens(server, tmp_path / "probe", "--tasks", "66e6c45b")
        # Room for the first prompt and a few hundred tokens of feedback: the whole retry
        # (the first prompt, the answer's 1,100 tokens, two 30x30 grids) is far beyond.
        window = first + 500
        summary = _run(
            server,
            tmp_path / "run",
            "--tasks",
            "66e6c45b",
            "--feedback-rounds",
            "1",
            "--model-arg",
            f"context_window={window}",
        )
        retry = _sent(server)[-1]
    assert summary["prompt_too_long"] == {} and summary["complete"] is True
    assert summary["prompts_cut"] == 1  # the retry, sent cut
    first_try, second = _steps(tmp_path / "run")
    assert first_try["prompt_fit"] is None and second["error"] is None
    fit = second["prompt_fit"]
    assert [c["part"] for c in fit["cuts"]] == ["produced grids", "answer prose"]
    assert fit["tokens"] <= fit["budget"] == window - 100 < fit["full_tokens"]
    assert fit["tokens"] == sum(
        estimate_tokens(_text_of(m["content"])) for m in _chat_messages(server)[-1]
    )
    assert "a 30x30 grid, where the expected output is 4x4" in retry
    assert REASONING not in retry and "return np.ones((30, 30), dtype=int)" in retry


@pytest.mark.usefixtures("api_key")
def test_the_library_block_of_a_solve_prompt_is_fitted_to_the_window(tmp_path: Path) -> None:
    memory = library_memory(tmp_path / "memory.json")
    with_library = ["--tasks", "66e6c45b", "--memory", str(memory), "--select", "all"]
    with_library += ["--library", "all"]
    with FakeLLMServer() as server:
        server.state.respond = lambda messages, index: WORDY_ANSWER
        full = _first_prompt_tokens(server, tmp_path / "probe", *with_library)
        whole = _sent(server)[-1]
        # Just too small for the docstring of tile_mirrored (about 14 tokens).
        window = full - 5 + 100
        _run(
            server,
            tmp_path / "run",
            "--feedback-rounds",
            "0",
            *with_library,
            "--model-arg",
            f"context_window={window}",
        )
        sent = _sent(server)[-1]
    (step,) = _steps(tmp_path / "run")
    assert [c["part"] for c in step["prompt_fit"]["cuts"]] == ["library docstrings"]
    assert TILE.docstring in whole and TILE.docstring not in sent
    assert "`tile_mirrored(grid: Grid) -> Grid`" in sent and "`tile_plain" in sent


def test_a_selection_whose_memory_block_was_cut_was_never_shown() -> None:
    cut = PromptFit(
        context_window=100,
        budget=90,
        full_tokens=150,
        tokens=80,
        cuts=[PromptCut(part="memory block", tokens_saved=70)],
    )
    kept = cut.model_copy(update={"cuts": [PromptCut(part="produced grids", tokens_saved=70)]})

    def result(fit: PromptFit) -> TaskResult:
        step = Step(round=0, completion="an answer", prompt_fit=fit)
        return TaskResult(
            task_id="t",
            attempts=[Attempt(index=0, steps=[step])],
            selection=Selection(selector="all", selected=["corner cells"]),
        )

    assert result(cut).shown == [] and result(cut).answered_variants == set()
    assert result(kept).shown == ["corner cells"] and result(kept).answered_variants == {0}
    fitted = FittedPrompt([], cut)
    assert fitted.shown(["corner cells"], "memory block") == []
    assert fitted.shown(["corner cells"], "reselected concepts") == ["corner cells"]


def test_every_part_but_the_library_functions_is_cut_whole_by_one_flag() -> None:
    from arcmemo.run.prompt_fit import _WHOLE_PART_FLAGS

    parts = set(get_args(CutPart)) - {"library functions"}
    assert set(_WHOLE_PART_FLAGS) == parts
    flags = {f.name for f in fields(PromptCuts) if f.type in (bool, "bool")}
    assert set(_WHOLE_PART_FLAGS.values()) == flags
