"""The memory loop end to end with scripted models, on real ARC-AGI-1 evaluation tasks.

A bootstrap run solves three tasks (two right, one wrong), its verified solutions are
abstracted into a seeded memory, and an online run on four more tasks selects from that
memory, solves, and grows it batch by batch. The tests read what the scripted model was
shown (selection and solve prompts) and what the run wrote (memory, snapshots, logs).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from arcmemo.cli.run import summary_table_rows
from arcmemo.core.records import Attempt, Step, TaskResult
from arcmemo.core.registry import RegistryError
from arcmemo.core.roles import ABSTRACT
from arcmemo.memory.schema import Concept, Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.memory.store import dump_memory
from arcmemo.models.base import ProviderError, RetryDecision
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.models.structured import OutputError, load_yaml_block
from arcmemo.run.bootstrap import abstract_into, items_from_run
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.pipeline import run_benchmark
from arcmemo.signals.base import WRITE_SIGNALS
from tests.support.arc_solutions import CORNERS, CORNERS_CONCEPT, MIRROR_TILES, QUADRANTS
from tests.support.paths import FIXTURES
from tests.support.scripted_models import loop_model

lm = loop_model()


BOOTSTRAP_TASKS = ["66e6c45b", "00576224", "68b67ca3"]
ONLINE_TASKS = ["66e6c45b", "0c786b71", "e345f17b", "bbb1b8b6"]

TILING_CONCEPTS = lm.yaml_block(
    """
- name: mirror tiling
  kind: routine
  routine_subtype: grid manipulation
  description: tile the input, mirroring every other row of tiles
  parameters:
    - name: tile
      type: grid
    - name: repeats
      type: dimensions
  output_type: grid
  cues: [the output is a whole multiple of the input size]
  implementation: [stack copies with np.hstack and flip alternate rows of tiles]
- name: tile grid
  cues: [copies of the input appear side by side]
"""
)
QUADRANT_CONCEPTS = lm.yaml_block(
    """
- name: mirror tiling
  cues: [the output is made of mirrored copies of the input]
- name: quadrant mirroring
  kind: routine
  routine_subtype: grid manipulation
  description: build a 2x2 block of the grid and its mirror images
  parameters:
    - name: grid
      type: grid
  output_type: grid
  cues: [the output is twice the input size in both directions]
  implementation: [hstack the grid with its left-right mirror, then vstack with the flip]
"""
)
OVERLAY_CONCEPT = lm.yaml_block(
    """
- name: overlay halves
  kind: structure
  description: two halves of the input that are compared cell by cell
  cues: [the output is half as wide as the input]
"""
)


def scripted(model: Any, name: str) -> ModelClient:
    """A model client (no response cache) answering through ``model``."""
    return ModelClient(ScriptedProvider.from_script(model, model=name))


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


def arc_config(out: Path, tasks: list[str], **fields: Any) -> RunConfig:
    defaults: dict[str, Any] = {
        "benchmark": "arc-agi-1",
        "split": "evaluation",
        "tasks": tasks,
        "model": "scripted:solver",
        "attempts": 1,
        "feedback_rounds": 0,
        "out": out,
    }
    return RunConfig(**(defaults | fields))


# -- the full loop ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    """Bootstrap a memory from a scripted run, then run online on four new tasks."""
    root = tmp_path_factory.mktemp("loop")
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def recording_replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        replaced.append((str(src), str(dst)))
        real_replace(src, dst, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ARCMEMO_CACHE_DIR", str(root / "cache"))
        patch.setattr(os, "replace", recording_replace)

        # 1. bootstrap: a run without memory, then abstraction of its verified solutions
        boot_model = lm.LoopModel(
            answers={
                ("solve", "66e6c45b"): lm.program_answer(CORNERS),
                ("solve", "00576224"): lm.program_answer(MIRROR_TILES),
                ("solve", "68b67ca3"): lm.program_answer(lm.IDENTITY),
                ("concepts", "66e6c45b"): CORNERS_CONCEPT,
                ("concepts", "00576224"): TILING_CONCEPTS,
            },
            arc_ids=BOOTSTRAP_TASKS,
        )
        boot_run = root / "boot-run"
        boot_summary = asyncio.run(
            run_benchmark(
                arc_config(boot_run, BOOTSTRAP_TASKS),
                models={"solver": scripted(boot_model, "bootstrap")},
            )
        )
        memory_path = root / "memory.json"
        load_seed("arc").save(memory_path)
        items = items_from_run(boot_run, "train")

        async def abstract() -> Any:
            client = scripted(boot_model, "bootstrap")
            try:
                return await abstract_into(
                    memory_path, items, {ABSTRACT: client}, memory_format="ps"
                )
            finally:
                await client.aclose()

        boot_outcomes = asyncio.run(abstract())
        bootstrapped = memory_path.read_bytes()

        # 2. online: select, solve, write after every task
        model = lm.LoopModel(
            answers={
                ("select", "66e6c45b"): "```yaml\n- mirror tiling\n- move center to corners\n```",
                ("select", "0c786b71"): (
                    "The quadrants are mirrored copies.\n```yaml\n- Mirror Tilings\n"
                    "- rotate grid: the top-left quadrant is turned\n- move centre to corners\n```"
                ),
                ("select", "e345f17b"): "```yaml\n- quadrant mirroring\n- color criteria\n```",
                ("select", "bbb1b8b6"): "```yaml\n- tile grid\n```",
                ("solve", "66e6c45b"): lm.program_answer(CORNERS),
                ("solve", "0c786b71"): lm.program_answer(QUADRANTS),
                ("solve", "e345f17b"): lm.program_answer(lm.memorizing_program("e345f17b")),
                ("solve", "bbb1b8b6"): lm.program_answer(lm.IDENTITY),
                ("concepts", "66e6c45b"): lm.yaml_block(
                    "- name: move center to corners\n"
                    "  cues: [only the corners of the output are colored]"
                ),
                ("concepts", "0c786b71"): QUADRANT_CONCEPTS,
                ("concepts", "e345f17b"): OVERLAY_CONCEPT,
            },
            arc_ids=ONLINE_TASKS,
        )
        run_dir = root / "online-run"
        memory_out = root / "final.json"
        config = arc_config(
            run_dir,
            ONLINE_TASKS,
            memory=memory_path,
            memory_out=memory_out,
            selector="llm",
            update="online",
            update_every=1,
            feedback_rounds=1,
        )
        summary = asyncio.run(
            run_benchmark(
                config,
                models={"solver": scripted(model, "solver"), "aux": scripted(model, "abstractor")},
            )
        )
    yield SimpleNamespace(
        root=root,
        boot_model=boot_model,
        boot_summary=boot_summary,
        boot_outcomes=boot_outcomes,
        items=items,
        memory_path=memory_path,
        bootstrapped=bootstrapped,
        model=model,
        run_dir=run_dir,
        memory_out=memory_out,
        summary=summary,
        final=Memory.load(memory_out),
        replaced=replaced,
    )


def results(run_dir: Path) -> dict[str, TaskResult]:
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    return {r.task_id: r for r in (TaskResult.model_validate_json(line) for line in lines)}


def test_bootstrap_abstracts_only_train_verified_solutions(loop: SimpleNamespace) -> None:
    assert loop.boot_summary["n_solved"] == 2
    # (in the order the run finished them)
    assert sorted(item.task_id for item in loop.items) == ["00576224", "66e6c45b"]
    assert all("def transform(grid)" in item.solution for item in loop.items)
    memory = Memory.load(loop.memory_path)
    assert set(memory.solutions) == {"66e6c45b", "00576224"}
    assert memory.solutions["00576224"].summary == "rule of task 00576224"
    corners = memory.find("move center to corners")
    assert corners is not None and corners.provenance.sources == ["66e6c45b"]
    assert corners.provenance.authors == ["scripted:bootstrap"]
    tile = memory.find("tile grid")  # a seed concept extended by name
    assert tile is not None and tile.provenance.sources == ["seed", "00576224"]
    assert "copies of the input appear side by side" in tile.cues
    assert not any(o.failures for o in loop.boot_outcomes)
    # the second abstraction saw the first one's concept in the memory view
    first, second = loop.boot_model.of("concepts")
    assert first.task_id != second.task_id
    first_name = "move center to corners" if first.task_id == "66e6c45b" else "mirror tiling"
    assert first_name not in first.prompt
    assert first_name in second.prompt


def test_solve_prompt_shows_selected_concepts_in_full_and_the_rest_by_title(
    loop: SimpleNamespace,
) -> None:
    (solve,) = loop.model.of("solve", "0c786b71")
    prompt = solve.prompt
    memory = Memory.load(loop.memory_path)
    for name in ("mirror tiling", "rotate grid", "move center to corners"):
        concept = memory.find(name)
        assert concept is not None
        assert f"- concept: {concept.name}\n" in prompt
        for line in concept.cues + concept.implementation:
            assert f"    - {line}\n" in prompt
    others = " ".join(
        line for line in prompt.splitlines() if line.startswith("- other concepts:")
    )  # one such line per section
    for name in ("reflect grid", "tile grid", "extract objects"):
        assert name in others
        assert f"- concept: {name}\n" not in prompt
    assert "copies of the input appear side by side" not in prompt  # tile grid's cue


def test_llm_selection_resolves_names_and_records_unknown(loop: SimpleNamespace) -> None:
    found = results(loop.run_dir)
    selection = found["0c786b71"].selection
    assert selection is not None and selection.selector == "llm"
    assert selection.selected == ["mirror tiling", "rotate grid", "move center to corners"]
    assert selection.unknown == []
    assert "'move centre to corners' matched to 'move center to corners'" in (selection.trace or "")
    assert found["0c786b71"].attempts[0].steps[0].concepts == selection.selected


def test_leakage_guard_hides_a_tasks_own_concepts_from_it_only(loop: SimpleNamespace) -> None:
    (own,) = loop.model.of("select", "66e6c45b")
    assert "move center to corners" not in own.prompt
    assert "mirror tiling" in own.prompt
    (other,) = loop.model.of("select", "0c786b71")
    assert "move center to corners" in other.prompt  # by name: used once so far
    (solve,) = loop.model.of("solve", "66e6c45b")
    assert "move center to corners" not in solve.prompt
    selection = results(loop.run_dir)["66e6c45b"].selection
    assert selection is not None
    assert selection.selected == ["mirror tiling"]
    assert selection.unknown == ["move center to corners"]


def test_later_tasks_and_retries_select_from_the_grown_memory(loop: SimpleNamespace) -> None:
    (third,) = loop.model.of("select", "e345f17b")
    assert "quadrant mirroring" in third.prompt  # written after task 2
    (first,) = loop.model.of("select", "66e6c45b")
    assert "quadrant mirroring" not in first.prompt
    retried = loop.model.of("select", "bbb1b8b6")
    assert len(retried) == 2  # the retry reselects
    assert "# Your Previous Attempt" not in retried[0].prompt  # the paper's selection prompt
    assert "# Your Previous Attempt" in retried[1].prompt
    assert "overlay halves" in retried[0].prompt


def test_online_update_writes_train_verified_solutions_with_provenance(
    loop: SimpleNamespace,
) -> None:
    final = loop.final
    assert set(final.solutions) == {"66e6c45b", "00576224", "0c786b71", "e345f17b"}
    quadrant = final.find("quadrant mirroring")
    assert quadrant is not None
    assert quadrant.provenance.sources == ["0c786b71"]
    assert quadrant.provenance.authors == ["scripted:abstractor"]
    tiling = final.find("mirror tiling")
    assert tiling is not None
    assert tiling.provenance.sources == ["00576224", "0c786b71"]
    assert tiling.provenance.authors == ["scripted:bootstrap", "scripted:abstractor"]
    assert "the output is made of mirrored copies of the input" in tiling.cues
    overlay = final.find("overlay halves")  # passes train, fails test: still written
    assert overlay is not None and overlay.provenance.sources == ["e345f17b"]
    # the task that failed its train pairs wrote nothing
    assert not any("bbb1b8b6" in c.provenance.sources for c in final.concepts)
    assert not any(h.task_id == "bbb1b8b6" for h in final.history)


def test_history_records_each_write_with_task_and_model(loop: SimpleNamespace) -> None:
    history = [h for h in loop.final.history if h.task_id == "0c786b71"]
    assert [(h.op, h.target) for h in history] == [
        ("merge", "mirror-tiling"),
        ("add", "quadrant-mirroring"),
    ]
    assert {h.actor for h in history} == {"scripted:abstractor"}
    assert history[0].changes == ["cues: +1"]
    boot = [h for h in loop.final.history if h.task_id == "00576224"]
    assert [(h.op, h.target, h.actor) for h in boot] == [
        ("add", "mirror-tiling", "scripted:bootstrap"),
        ("merge", "tile-grid", "scripted:bootstrap"),
    ]


def test_selection_statistics_count_selected_and_selected_solved(loop: SimpleNamespace) -> None:
    stats = {c.name: (c.stats.selected, c.stats.selected_solved) for c in loop.final.concepts}
    assert stats["mirror tiling"] == (2, 2)
    assert stats["rotate grid"] == (1, 1)
    assert stats["move center to corners"] == (1, 1)  # hidden from its own task
    assert stats["quadrant mirroring"] == (1, 1)  # its task passed train (the signal)
    assert stats["color criteria"] == (1, 1)
    assert stats["tile grid"] == (1, 0)  # selected for the task that failed train
    assert stats["reflect grid"] == (0, 0)


def test_snapshots_processed_list_and_abstraction_log(loop: SimpleNamespace) -> None:
    memory_dir = loop.run_dir / "memory"
    snapshots = sorted(p.name for p in memory_dir.glob("batch-*.json"))
    # the passes schedule: four batches of first tries, then one of retries (bbb1b8b6)
    assert snapshots == [f"batch-{i:04d}.delta.json" for i in range(5)]
    schedule = json.loads((loop.run_dir / "schedule.json").read_text())
    assert [(b["pass_number"], b["task_ids"]) for b in schedule["batches"]] == [
        *((0, [task]) for task in ONLINE_TASKS),
        (1, ["bbb1b8b6"]),
    ]
    rundir = RunDirectory(loop.run_dir)
    grown = [rundir.snapshot_memory(memory_dir / name) for name in snapshots]
    assert [m.find("quadrant mirroring") is not None for m in grown] == [
        False,
        True,
        True,
        True,
        True,
    ]
    assert [m.find("overlay halves") is not None for m in grown] == [False, False, True, True, True]
    # statistics count a task once its result is final (bbb1b8b6: after its retry)
    assert [m.find("tile grid").stats.selected for m in grown] == [0, 0, 0, 0, 1]  # type: ignore[union-attr]
    assert Memory.load(memory_dir / "initial.json") == Memory.load(loop.memory_path)
    commit = json.loads((memory_dir / "processed.json").read_text())
    assert commit["batch"] == 4 and commit["snapshot"] == "batch-0004.delta.json"
    assert commit["processed"] == ONLINE_TASKS
    written = {
        task: (w["attempt"], w["round"], w["right"]) for task, w in commit["written"].items()
    }
    assert written == {
        "66e6c45b": (0, 0, True),
        "0c786b71": (0, 0, True),
        "e345f17b": (0, 0, False),
    }
    assert json.loads((loop.run_dir / "task_order.json").read_text()) == ONLINE_TASKS
    log = [
        json.loads(line) for line in (loop.run_dir / "abstraction.jsonl").read_text().splitlines()
    ]
    assert [entry["task_id"] for entry in log] == ["66e6c45b", "0c786b71", "e345f17b"]
    assert log[1]["written"] == ["mirror-tiling", "quadrant-mirroring"]
    assert all(entry["format"] == "ps" and entry["failures"] == [] for entry in log)


def test_memory_out_is_the_last_snapshot_written_atomically(loop: SimpleNamespace) -> None:
    last = RunDirectory(loop.run_dir).snapshot_memory(
        loop.run_dir / "memory" / "batch-0004.delta.json"
    )
    assert loop.memory_out.read_text() == dump_memory(last)
    # --memory-out leaves the memory the run read untouched
    assert loop.memory_path.read_bytes() == loop.bootstrapped
    renames = [src for src, dst in loop.replaced if dst == str(loop.memory_out)]
    assert len(renames) == 5  # one atomic rename per batch
    assert all(Path(src).parent == loop.memory_out.parent for src in renames)
    assert loop.memory_out.with_name("final.json.bak").exists()
    assert not list(loop.memory_out.parent.glob(".final.json.*"))


def test_summary_of_a_train_signal_run_does_not_leak(loop: SimpleNamespace) -> None:
    assert loop.summary["leaks_test_labels"] is False
    assert loop.summary["n_tasks"] == 4 and loop.summary["n_solved"] == 2
    config = json.loads((loop.run_dir / "config.json").read_text())
    assert config["write_signal"]["name"] == "train"


# -- the write signal --------------------------------------------------------------------------


@pytest.mark.parametrize("signal", ["train", "oracle"])
def test_write_signal_train_keeps_test_failures_oracle_does_not(
    tmp_path: Path, signal: str
) -> None:
    memory_path = tmp_path / "memory.json"
    load_seed("arc").save(memory_path)
    tasks = ["0c786b71", "e345f17b", "bbb1b8b6"]
    model = lm.LoopModel(
        answers={
            ("solve", "0c786b71"): lm.program_answer(QUADRANTS),
            ("solve", "e345f17b"): lm.program_answer(lm.memorizing_program("e345f17b")),
            ("solve", "bbb1b8b6"): lm.program_answer(lm.IDENTITY),
            ("concepts", "0c786b71"): QUADRANT_CONCEPTS.replace(
                "- name: mirror tiling\n", "- name: tile grid\n"
            ),
            ("concepts", "e345f17b"): OVERLAY_CONCEPT,
            ("concepts", "bbb1b8b6"): lm.yaml_block("- name: leaked\n  kind: structure"),
        },
        arc_ids=tasks,
    )
    config = arc_config(
        tmp_path / "run",
        tasks,
        memory=memory_path,
        selector="none",
        update="online",
        update_every=2,
        write_signal=signal,
    )
    summary = asyncio.run(run_benchmark(config, models={"solver": scripted(model, "solver")}))
    memory = Memory.load(memory_path)  # no --memory-out: the memory file itself grows
    written = {"0c786b71", "e345f17b"} if signal == "train" else {"0c786b71"}
    assert set(memory.solutions) == written
    assert {h.task_id for h in memory.history if h.task_id not in (None, "seed")} == written
    assert memory.find("leaked") is None
    assert (memory.find("overlay halves") is not None) == (signal == "train")
    assert {c.task_id for c in model.of("pseudocode")} == written
    assert summary["leaks_test_labels"] is (signal == "oracle")
    on_disk = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert on_disk["leaks_test_labels"] is (signal == "oracle")
    commit = json.loads((tmp_path / "run" / "memory" / "processed.json").read_text())
    assert commit["processed"] == tasks and set(commit["written"]) == written
    precision = summary["write_precision"]
    assert (precision["signal"], precision["written"]) == (signal, len(written))
    assert precision["right"] == 1  # 0c786b71; e345f17b passes train only
    train = precision["by_signal"]["train"]
    assert (train["confirmed"], train["right"], train["precision"]) == (2, 1, 0.5)
    assert "oracle" not in precision["by_signal"]  # it reads the labels


def _aime_step(answer: int | None) -> Step:
    return Step(round=0, completion=f"\\boxed{{{answer}}}", prediction=answer)


def _aime_result(*answers: int | None) -> TaskResult:
    return TaskResult(
        task_id="p",
        attempts=[Attempt(index=i, steps=[_aime_step(a)]) for i, a in enumerate(answers)],
    )


def test_consistency_signal_needs_a_strict_majority() -> None:
    step = WRITE_SIGNALS.create("consistency").confirmed_step(_aime_result(7, 5, 5))
    assert step is not None and step.prediction == 5
    assert WRITE_SIGNALS.create("consistency").confirmed_step(_aime_result(5, 7)) is None
    assert WRITE_SIGNALS.create("consistency").confirmed_step(_aime_result(5, 7, 9)) is None
    assert WRITE_SIGNALS.create("consistency").confirmed_step(_aime_result(5, None, None)) is None
    assert WRITE_SIGNALS.create("consistency").confirmed_step(_aime_result(None, None)) is None
    # AIME steps carry no train verification: the train signal never confirms them
    assert WRITE_SIGNALS.create("train").confirmed_step(_aime_result(5, 5)) is None
    with pytest.raises(RegistryError, match="unknown write signal 'vibes'"):
        WRITE_SIGNALS.create("vibes")


def test_aime_online_run_writes_majority_answers_only(tmp_path: Path) -> None:
    data = FIXTURES / "aime" / "problems.jsonl"
    memory_path = tmp_path / "aime-memory.json"
    Memory(domain="aime").save(memory_path)
    problems = {"toy-1": "Find $2 + 3$.", "toy-2": "number of positive divisors of $2^{15}$"}
    lessons = lm.yaml_block(
        "- situation: a sum of two small integers is asked\n"
        "  suggestion: add them directly\n"
        "- situation: 'the answer must be given as an integer: check the range'\n"
        "  suggestion: box the integer"
    )
    model = lm.LoopModel(
        answers={
            ("solve", "toy-1"): ["2 + 3 = 5, so \\boxed{5}", "It is \\boxed{5}"],
            ("solve", "toy-2"): ["\\boxed{16}", "\\boxed{32}"],
            ("lessons", "toy-1"): lessons,
            ("lessons", "toy-2"): lessons,
        },
        problems=problems,
    )
    config = RunConfig(
        benchmark="aime",
        data=str(data),
        tasks=["toy-1", "toy-2"],
        model="scripted:solver",
        attempts=2,
        memory=memory_path,
        selector="none",
        update="online",
        update_every=2,
        write_signal="consistency",
        memory_format="oe",
        out=tmp_path / "run",
    )
    summary = asyncio.run(run_benchmark(config, models={"solver": scripted(model, "solver")}))
    memory = Memory.load(memory_path)
    assert set(memory.solutions) == {"toy-1"}
    assert [les.situation for les in memory.lessons] == [
        "a sum of two small integers is asked",
        "the answer must be given as an integer: check the range",
    ]
    assert all(les.provenance.sources == ["toy-1"] for les in memory.lessons)
    assert all(les.provenance.authors == ["scripted:solver"] for les in memory.lessons)
    (lesson_call,) = model.of("lessons")
    assert lesson_call.task_id == "toy-1"
    assert "\\boxed{5}" in lesson_call.prompt  # the majority answer's worked solution
    assert summary["leaks_test_labels"] is False


# -- robustness ---------------------------------------------------------------------------------


def test_malformed_abstraction_output_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    memory_path = tmp_path / "memory.json"
    load_seed("arc").save(memory_path)
    tasks = ["0c786b71", "66e6c45b"]
    broken = [
        "```yaml\n- name: [unclosed\n```",
        lm.yaml_block(
            "- name: quadrant mirroring\n  kind: routine\n  parameters: 3\n"
            "- name: quadrant structure\n  kind: structure\n  cues: [four mirrored quadrants]"
        ),
    ]
    model = lm.LoopModel(
        answers={
            ("solve", "0c786b71"): lm.program_answer(QUADRANTS),
            ("solve", "66e6c45b"): lm.program_answer(CORNERS),
            ("concepts", "0c786b71"): broken,
            ("concepts", "66e6c45b"): CORNERS_CONCEPT,
        },
        arc_ids=tasks,
    )
    config = arc_config(
        tmp_path / "run",
        tasks,
        memory=memory_path,
        selector="none",
        update="online",
        update_every=1,
    )
    summary = asyncio.run(run_benchmark(config, models={"solver": scripted(model, "solver")}))
    assert summary["n_tasks"] == 2
    log = [
        json.loads(line)
        for line in (tmp_path / "run" / "abstraction.jsonl").read_text().splitlines()
    ]
    assert [entry["task_id"] for entry in log] == ["0c786b71", "66e6c45b"]
    (failure,) = log[0]["failures"]
    assert failure["stage"] == "concepts"
    assert failure["error"].startswith("item 1: parameters: expected a list")
    assert failure["raw"] == broken
    assert log[0]["written"] == ["quadrant-structure"]  # the valid item of the last answer
    repair = model.of("concepts", "0c786b71")[1]
    assert repair.repair
    with pytest.raises(OutputError) as first_error:
        load_yaml_block(broken[0])
    assert f"Your answer could not be used: {first_error.value}" in repair.last
    memory = Memory.load(memory_path)
    assert memory.find("move center to corners") is not None
    assert memory.find("quadrant mirroring") is None
    structure = memory.find("quadrant structure")
    assert structure is not None and structure.provenance.sources == ["0c786b71"]
    assert log[1]["written"] == ["move-center-to-corner"]


@dataclass
class FailingStage:
    """``model``, except that calls of ``stage`` fail with HTTP 500 while ``failing``."""

    model: Any
    stage: str
    failing: bool = True

    def __call__(self, messages: list[Any]) -> str:
        if self.failing and lm.stage_of(messages) == self.stage:
            raise ProviderError("HTTP 500: internal server error", status=500)
        return str(self.model(messages))


def test_failed_writes_are_abstract_errors_and_a_rerun_writes_them(tmp_path: Path) -> None:
    memory_path = tmp_path / "memory.json"
    load_seed("arc").save(memory_path)
    tasks = ["0c786b71", "66e6c45b"]
    model = lm.LoopModel(
        answers={
            ("solve", "0c786b71"): lm.program_answer(QUADRANTS),
            ("solve", "66e6c45b"): lm.program_answer(CORNERS),
            ("concepts", "0c786b71"): QUADRANT_CONCEPTS,
            ("concepts", "66e6c45b"): CORNERS_CONCEPT,
        },
        arc_ids=tasks,
    )
    aux = FailingStage(model, "concepts")
    config = arc_config(
        tmp_path / "run",
        tasks,
        memory=memory_path,
        selector="none",
        update="online",
        update_every=1,
    )
    summary = asyncio.run(
        run_benchmark(
            config, models={"solver": scripted(model, "solver"), "aux": scripted(aux, "aux")}
        )
    )
    assert summary["complete"] is False
    error = summary["errors"]["abstract"]
    assert (error["count"], error["task"]) == (2, "0c786b71")
    assert error["first"].startswith("model call: ") and "HTTP 500" in error["first"]
    precision = summary["write_precision"]
    assert (precision["confirmed"], precision["written"], precision["right"]) == (2, 0, 0)
    assert Memory.load(memory_path).find("move center to corners") is None
    commit = RunDirectory(tmp_path / "run").read_commit()
    assert commit is not None and set(commit.unwritten) == set(tasks) and not commit.written

    aux.failing = False
    solves = len(model.of("solve"))
    again = asyncio.run(
        run_benchmark(
            config, models={"solver": scripted(model, "solver"), "aux": scripted(aux, "aux")}
        )
    )
    assert len(model.of("solve")) == solves  # the tasks are not solved again
    assert again["complete"] is True and again["errors"] == {}
    assert (again["write_precision"]["confirmed"], again["write_precision"]["written"]) == (2, 2)
    memory = Memory.load(memory_path)
    assert memory.find("move center to corners") is not None
    assert memory.find("quadrant mirroring") is not None
    commit = RunDirectory(tmp_path / "run").read_commit()
    assert commit is not None and not commit.unwritten and set(commit.written) == set(tasks)
    # A third run finds nothing left to do.
    calls = len(model.calls)
    third = asyncio.run(
        run_benchmark(
            config, models={"solver": scripted(model, "solver"), "aux": scripted(aux, "aux")}
        )
    )
    assert len(model.calls) == calls and third["complete"] is True


def test_an_oe_run_whose_thought_processes_do_not_parse_writes_nothing_and_says_so(
    tmp_path: Path,
) -> None:
    memory_path = tmp_path / "memory.json"
    load_seed("arc").save(memory_path)
    tasks = ["0c786b71", "66e6c45b"]
    model = lm.LoopModel(
        answers={
            ("solve", "0c786b71"): lm.program_answer(QUADRANTS),
            ("solve", "66e6c45b"): lm.program_answer(CORNERS),
            ("thought", None): "I looked at the grids and the rule is clear.",
        },
        arc_ids=tasks,
    )
    config = arc_config(
        tmp_path / "run",
        tasks,
        memory=memory_path,
        selector="none",
        update="online",
        update_every=2,
        memory_format="oe",
    )
    summary = asyncio.run(run_benchmark(config, models={"solver": scripted(model, "solver")}))
    assert Memory.load(memory_path).lessons == []
    precision = summary["write_precision"]
    assert (precision["confirmed"], precision["written"], precision["right"]) == (2, 0, 0)
    assert summary["complete"] is False
    assert summary["errors"]["abstract"]["first"].startswith("thought process: expected")
    rows = dict(summary_table_rows(summary, ()))
    assert rows["write precision"].startswith("0/0 written solutions right")
    assert "2 confirmed, 2 of them not written" in rows["write precision"]


def test_memory_budget_shows_most_used_concepts_in_full_and_notes_the_rest(
    tmp_path: Path,
) -> None:
    memory = load_seed("arc")
    favourite = memory.find("reflect grid")
    assert favourite is not None
    favourite.stats.selected = favourite.stats.selected_solved = 5
    memory_path = tmp_path / "memory.json"
    memory.save(memory_path)
    model = lm.LoopModel(
        answers={
            ("select", None): "```yaml\n- reflect grid\n```",
            ("solve", None): lm.program_answer(QUADRANTS),
        },
        arc_ids=["0c786b71"],
    )
    # the smallest budget that shows the most used concept in full (the view's own estimate)
    budget = next(
        b
        for b in range(100, 5000, 25)
        if "- concept: reflect grid" in memory.render("selection", budget_tokens=b)
    )
    config = arc_config(
        tmp_path / "run",
        ["0c786b71"],
        memory=memory_path,
        # arcmemo's view: its budget keeps the concepts that helped most (the paper's view
        # raises the usage threshold instead)
        selector={"name": "llm", "options": {"budget_tokens": budget, "view": "arcmemo"}},
    )
    asyncio.run(run_benchmark(config, models={"solver": scripted(model, "solver")}))
    (selection,) = model.of("select")
    prompt = selection.prompt
    assert "- concept: reflect grid" in prompt
    shown_in_full = prompt.count("- concept: ")
    assert shown_in_full == 1
    assert f"more concepts not shown: memory budget of {budget} tokens" in prompt
    arcmemo_view = {"name": "llm", "options": {"view": "arcmemo"}}
    unlimited = arc_config(
        tmp_path / "run2", ["0c786b71"], memory=memory_path, selector=arcmemo_view
    )
    asyncio.run(run_benchmark(unlimited, models={"solver": scripted(model, "solver")}))
    full_prompt = model.of("select")[-1].prompt
    assert full_prompt.count("- concept: ") == len(memory.concepts)
    assert "not shown" not in full_prompt


def test_run_cli_online_aime_with_the_consistency_signal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from arcmemo.cli.main import cli

    monkeypatch.setenv("COLUMNS", "300")
    memory_path = tmp_path / "memory.json"
    Memory(domain="aime").save(memory_path)
    script = FIXTURES / "loop" / "aime_consistency.yaml"
    result = CliRunner().invoke(
        cli,
        [
            "run", "aime", "--data", str(FIXTURES / "aime" / "problems.jsonl"),
            "--tasks", "toy-1,toy-3", "--model", f"scripted:{script}",
            "--memory", str(memory_path), "--select", "none", "--format", "oe",
            "--update", "online", "--write-signal", "consistency", "--attempts", "2",
            "--out", str(tmp_path / "run"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    memory = Memory.load(memory_path)
    assert set(memory.solutions) == {"toy-1"}
    (lesson,) = memory.lessons
    assert lesson.provenance.sources == ["toy-1"]
    assert lesson.provenance.authors == [f"scripted:{script}"]
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["write_signal"]["name"] == "consistency"
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["leaks_test_labels"] is False


# -- what counts as shown ----------------------------------------------------------------------

# 66e6c45b's solve prompt with the two concepts below is about 1,080 estimated tokens,
# 00576224's 1,090 and bbb1b8b6's 2,310 (1,810 without them): under this window the last is
# prompt_too_long even with its memory block cut (arcmemo.run.prompt_fit).
SMALL_WINDOW = 1200
UNSEEN_TASKS = ["66e6c45b", "bbb1b8b6", "00576224"]


def _unseen_setup(tmp_path: Path) -> tuple[Path, Any]:
    """A memory of two concepts and a solver, under :data:`SMALL_WINDOW`, that solves
    66e6c45b and whose call for 00576224 fails (HTTP 400, not retried)."""
    memory_path = tmp_path / "memory.json"
    Memory(
        concepts=[
            Concept(name="corner cells", kind="routine", description="the four corner cells"),
            Concept(name="mirror tiling", kind="routine", description="tile mirrored copies"),
        ]
    ).save(memory_path)
    model = lm.LoopModel(
        answers={
            ("solve", "66e6c45b"): lm.program_answer(CORNERS),
            ("concepts", "66e6c45b"): CORNERS_CONCEPT,
        },
        arc_ids=UNSEEN_TASKS,
    )

    def solver(messages: list[Any]) -> str:
        if lm.stage_of(messages) == "solve" and model.task_of("solve", messages[-1].content) == (
            "00576224"
        ):
            raise ProviderError("HTTP 400: bad request", status=400, decision=RetryDecision.NO)
        return str(model(messages))

    client = scripted(solver, "solver")
    client.provider.context_window = SMALL_WINDOW
    return memory_path, client


def _unseen_outcomes(run_dir: Path) -> None:
    """The run ended as the setup means: one answered task, one too long, one failed."""
    done = results(run_dir)
    assert done["66e6c45b"].solved and done["66e6c45b"].error is None
    assert done["bbb1b8b6"].prompt_too_long is not None and done["bbb1b8b6"].error is None
    assert done["00576224"].error is not None and "HTTP 400" in done["00576224"].error
    for task_id in ("bbb1b8b6", "00576224"):  # selected, never answered
        selection = done[task_id].selection
        assert selection is not None and len(selection.selected) == 2


def test_only_answered_prompts_count_as_shown_in_an_online_run(tmp_path: Path) -> None:
    """Selection statistics and attribution verdicts come from the task whose prompt the
    solver answered; the concepts of the task whose prompt was too long for the window and
    of the task whose call failed were never seen, so they get neither."""
    memory_path, solver = _unseen_setup(tmp_path)
    config = arc_config(
        tmp_path / "run",
        UNSEEN_TASKS,
        memory=memory_path,
        memory_out=tmp_path / "grown.json",
        selector="all",
        update="online",
        update_every=3,
    )
    asyncio.run(run_benchmark(config, models={"solver": solver}))
    _unseen_outcomes(tmp_path / "run")
    grown = Memory.load(tmp_path / "grown.json")
    for name in ("corner cells", "mirror tiling"):
        stats = grown.find(name).stats  # type: ignore[union-attr]
        assert (stats.selected, stats.selected_solved) == (1, 1), name
        assert (stats.helpful, stats.unused, stats.harmful) == ([], ["66e6c45b"], []), name
    done = results(tmp_path / "run")
    assert [done[t].shown for t in UNSEEN_TASKS] == [["corner cells", "mirror tiling"], [], []]


def test_only_answered_prompts_count_when_a_fixed_run_is_folded_and_reported(
    tmp_path: Path,
) -> None:
    """``arcmemo memory attribute`` on a fixed-memory run and the report's usage table count
    the answered task alone; the report says how many selections got no answer."""
    from click.testing import CliRunner

    from arcmemo.analysis.report import load_run, render_report
    from arcmemo.cli.main import cli

    memory_path, solver = _unseen_setup(tmp_path)
    config = arc_config(tmp_path / "run", UNSEEN_TASKS, memory=memory_path, selector="all")
    asyncio.run(run_benchmark(config, models={"solver": solver}))
    _unseen_outcomes(tmp_path / "run")
    args = ["memory", "attribute", str(tmp_path / "run"), "--memory", str(memory_path)]
    folded = CliRunner().invoke(cli, args)
    assert folded.exit_code == 0, folded.output
    assert "bbb1b8b6" not in folded.output and "00576224" not in folded.output
    memory = Memory.load(memory_path)
    for name in ("corner cells", "mirror tiling"):
        stats = memory.find(name).stats  # type: ignore[union-attr]
        assert (stats.selected, stats.selected_solved) == (1, 1), name
        assert (stats.helpful, stats.unused, stats.harmful) == ([], ["66e6c45b"], []), name
    page = render_report(load_run(tmp_path / "run"))
    usage = page[page.index("<h3>Usage in this run</h3>") :]
    usage = usage[: usage.index("</table>") + 200]
    rows = re.findall(r'>([a-z ]+)</a></td><td class="num">(\d+)</td>', usage)
    assert sorted(rows) == [("corner cells", "1"), ("mirror tiling", "1")]
    assert "Not counted: 2 selection(s) whose prompt got no answer" in usage
