"""Contrastive abstraction: a passing and a failing attempt of one task, side by side.

A scripted online run with two attempts of an ARC task (one passes its train pairs, one
fails them) sends the contrastive prompt once, with both programs and the failing one's
feedback, and writes its concept and a pitfall that names the concept it guards. Two
passing or two failing attempts send no contrastive prompt; a write signal that reads the
test labels is refused unless named; AIME contrasts a majority answer with a minority one;
the dry run counts the extra call.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from arcmemo.abstraction.contrast import contrast_pair, edit_distance, most_different, tokens
from arcmemo.core.records import Attempt, PairCheck, Step, TaskResult
from arcmemo.core.registry import ComponentSpec
from arcmemo.memory.schema import Memory
from arcmemo.memory.seeds import load_seed
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import dry_run, run_benchmark
from arcmemo.signals.base import WRITE_SIGNALS
from arcmemo.signals.contrast import ContrastSignalError, contrast_signal
from tests.support.scripted_models import loop_model

TASK = "66e6c45b"
CORNERS = """
def transform(grid):
    # move the center cells to the corners
    out = np.zeros_like(grid)
    out[[0, 0, -1, -1], [0, -1, 0, -1]] = grid[[1, 1, 2, 2], [1, 2, 1, 2]]
    return out
"""
FLIP = "def transform(grid):\n    return np.fliplr(grid)  # reflect the grid\n"
CONTRAST_MARKER = "one passed the check, one failed it"
CONTRAST_ANSWER = """```yaml
concepts:
  - name: move center to corners
    kind: routine
    routine_subtype: grid manipulation
    description: move the cells of a centered block to the corners of the grid
    parameters:
      - {name: grid, type: grid, description: the input}
    output_type: grid
    cues: [only the corners of the output are colored]
    implementation: [index the four corners and copy the centered block's cells there]
pitfall:
  situation: the output keeps the input's size but only its corners are colored
  suggestion: compare where the colored cells go before reaching for a whole-grid reflection
  guards: move center to corners
```"""


class ContrastModel:
    """The loop model, plus answers to the contrastive prompt (recorded apart)."""

    def __init__(self, solves: list[str]) -> None:
        lm = loop_model()
        self.loop = lm.LoopModel(
            answers={
                ("solve", TASK): [lm.program_answer(s) for s in solves],
                ("concepts", TASK): lm.yaml_block("- name: reflect grid"),
                ("pitfall", TASK): "```yaml\n- situation: s\n  suggestion: t\n```",
            },
            arc_ids=[TASK],
        )
        self.contrasts: list[str] = []

    def __call__(self, messages: list[Any]) -> str:
        if CONTRAST_MARKER in messages[0].content:
            self.contrasts.append(messages[0].content)
            return CONTRAST_ANSWER
        return self.loop(messages)


def online_config(tmp_path: Path, out: str, format_options: dict[str, Any], **kw: Any) -> RunConfig:
    """An online ARC run of TASK over a fresh copy of the seed memory."""
    memory_path = tmp_path / "memory.json"
    load_seed("arc").save(memory_path)
    settings: dict[str, Any] = {"model": "scripted:solver", "feedback_rounds": 0, "selector": "all"}
    return RunConfig(
        **{
            "benchmark": "arc-agi-1",
            "split": "evaluation",
            "tasks": [TASK],
            "out": tmp_path / out,
            "memory": memory_path,
            "update": "online",
            "memory_format": ComponentSpec(name="ps", options=format_options),
            **settings,
            **kw,
        }
    )


def online_run(
    tmp_path: Path, solves: list[str], **format_options: Any
) -> tuple[ContrastModel, Memory]:
    model = ContrastModel(solves)
    config = online_config(
        tmp_path, "run", format_options, attempts=len(solves), memory_out=tmp_path / "final.json"
    )

    def client(name: str) -> ModelClient:
        return ModelClient(ScriptedProvider.from_script(model, model=name))

    asyncio.run(
        run_benchmark(config, models={"solver": client("solver"), "aux": client("abstractor")})
    )
    return model, Memory.load(tmp_path / "final.json")


def test_a_passing_and_a_failing_attempt_write_a_concept_and_its_pitfall(tmp_path: Path) -> None:
    model, final = online_run(tmp_path, [CORNERS, FLIP], contrast=True)
    (prompt,) = model.contrasts
    assert "out[[0, 0, -1, -1], [0, -1, 0, -1]]" in prompt  # the passing program
    assert "np.fliplr(grid)" in prompt  # the failing one
    assert "example 1: wrong output" in prompt  # its train feedback
    assert prompt.index("## The passing attempt") < prompt.index("## The failing attempt")
    concept = final.find("move center to corners")
    assert concept is not None and concept.provenance.sources == [TASK]
    (pitfall,) = final.lessons
    assert pitfall.kind == "pitfall" and pitfall.guards == "move center to corners"
    assert pitfall.provenance.sources == [TASK]
    assert "guards: move center to corners" in final.render("full")
    # the ordinary abstraction ran too (the paper's two steps)
    assert model.loop.of("concepts", TASK) and final.find("reflect grid") is not None
    log = (tmp_path / "run" / "abstraction.jsonl").read_text()
    assert "pitfall lesson 1" in log


@pytest.mark.parametrize("solves", [[CORNERS, CORNERS], [FLIP, FLIP]])
def test_no_contrast_without_one_passing_and_one_failing(tmp_path: Path, solves: list[str]) -> None:
    model, final = online_run(tmp_path, solves, contrast=True)
    assert model.contrasts == []
    assert final.lessons == []


def test_without_the_option_no_contrast_is_asked(tmp_path: Path) -> None:
    model, final = online_run(tmp_path, [CORNERS, FLIP])
    assert model.contrasts == [] and final.lessons == []


def test_a_signal_reading_the_test_labels_is_refused_unless_named() -> None:
    oracle = WRITE_SIGNALS.create("oracle")
    with pytest.raises(ContrastSignalError, match="contrast_signal=oracle"):
        contrast_signal(None, oracle)
    assert contrast_signal("oracle", WRITE_SIGNALS.create("train")).name == "oracle"
    train = WRITE_SIGNALS.create("train")
    assert contrast_signal(None, train) is train


def test_a_run_under_the_oracle_signal_with_contrast_stops_before_any_call(
    tmp_path: Path,
) -> None:
    model = ContrastModel([CORNERS, FLIP])
    config = online_config(
        tmp_path, "run", {"contrast": True}, attempts=2, write_signal=ComponentSpec(name="oracle")
    )
    client = ModelClient(ScriptedProvider.from_script(model, model="solver"))
    with pytest.raises(ContrastSignalError):
        asyncio.run(run_benchmark(config, models={"solver": client, "aux": client}))
    assert model.loop.calls == []


def _answer(prediction: str, text: str) -> Attempt:
    step = Step(round=0, completion=text, candidate=prediction, prediction=prediction)
    return Attempt(index=0, steps=[step])


def test_aime_contrasts_the_majority_answer_with_a_minority_one() -> None:
    result = TaskResult(
        task_id="2024-I-1",
        attempts=[
            _answer("204", "the speed gives 9/s hours, so 204"),
            _answer("204", "solving the system, 204"),
            _answer("96", "the walk takes 4 hours: 96"),
        ],
    )
    consistency = WRITE_SIGNALS.create("consistency")
    pair = contrast_pair(result, consistency.split(result), domain="aime", problem="p")
    assert pair is not None and pair.failing == "96" and pair.passing == "204"
    assert "'96' differs from the passing attempt's '204'" in pair.feedback
    # no strict majority: nothing passes, nothing to contrast
    tied = TaskResult(task_id="t", attempts=[_answer("1", "a"), _answer("2", "b")])
    assert contrast_pair(tied, consistency.split(tied), domain="aime", problem="p") is None


def test_the_most_different_pair_is_shown() -> None:
    def program(body: str, verified: bool) -> Step:
        checks = [PairCheck(index=0, correct=verified)]
        return Step(round=0, completion="c", candidate=body, checks=checks, verified=verified)

    near = program("def transform(grid):\n    return grid[::-1]\n", False)
    far = program("def transform(grid):\n    out = grid.T\n    return out.tolist()\n", False)
    good = program("def transform(grid):\n    return grid[::-1, ::-1]\n", True)
    chosen = most_different([good], [near, far])
    assert chosen is not None and chosen[1] is far
    assert chosen[2] == edit_distance(tokens(good.candidate or ""), tokens(far.candidate or ""))
    assert edit_distance(["a", "b", "c"], ["a", "c"]) == 1
    assert most_different([good], []) is None


def test_the_dry_run_counts_the_contrast_call(tmp_path: Path) -> None:
    def stages(out: str, **options: Any) -> Any:
        config = online_config(tmp_path, out, options, model="openai:gpt-4o")
        return asyncio.run(dry_run(config)).estimate.stages["abstract"]

    # two steps, plus one with contrast; each may be asked again once (its repair)
    assert stages("plain").calls.high == 2 * 2
    assert stages("contrast", contrast=True).calls.high == 3 * 2
