"""Attribution: which shown concepts a task's solution used, and the verdicts it records."""

from __future__ import annotations

from pathlib import Path

import pytest

from arcmemo.core.records import Attempt, Selection, Step, TaskResult
from arcmemo.memory.attribution import (
    attribute_task,
    concept_evidence,
    imported_functions,
    record_attribution,
    solution_text,
    summarize,
)
from arcmemo.memory.schema import Concept, LibraryFunction, Memory, Parameter

SPLIT_PROGRAM = """
def transform(grid):
    # cut along the divider lines
    parts = split_grid(grid, divider_color=5)
    return np.rot90(parts[0])
"""
FLIP_PROGRAM = """
def transform(grid):
    return np.fliplr(grid)  # reflect the grid
"""


def concept(name: str, **fields: object) -> Concept:
    return Concept.model_validate({"name": name, "kind": "routine", **fields})


def memory() -> Memory:
    return Memory(
        concepts=[
            concept("split grid", parameters=[Parameter(name="divider color")]),
            concept("reflect grid", implementation=["use `np.fliplr` for a left-right flip"]),
            concept("recolor object", parameters=[Parameter(name="grid")]),
            concept("rotate grid", implementation=["np.rot90(grid, k) turns it"]),
        ]
    )


def step(program: str, concepts: list[str], *, verified: bool, round_: int = 0) -> Step:
    return Step(
        round=round_,
        completion=f"```python\n{program}\n```",
        candidate=program,
        verified=verified,
        concepts=concepts,
    )


def result(task_id: str, selected: list[str], *steps: Step) -> TaskResult:
    return TaskResult(
        task_id=task_id,
        selection=Selection(selector="llm", selected=selected),
        attempts=[Attempt(index=0, steps=list(steps))],
    )


def test_program_parts_come_from_the_ast_and_its_comments() -> None:
    text = solution_text(step(SPLIT_PROGRAM, [], verified=True))
    assert {"split", "grid", "divider", "color", "cut", "line", "rot90"} <= text.words
    assert {"split_grid", "divider_color", "part"} <= text.identifiers
    assert text.calls == {"split_grid", "rot90"}


def test_a_non_program_answer_is_matched_on_its_words() -> None:
    worked = Step(round=0, completion="Use the Chinese Remainder Theorem here.", candidate="7")
    text = solution_text(worked)
    assert {"chinese", "remainder", "theorem"} <= text.words
    assert text.identifiers == set()


def test_each_rule_of_the_lexical_check() -> None:
    mem = memory()
    text = solution_text(step(SPLIT_PROGRAM, [], verified=True))
    split, reflect, recolor, rotate = mem.concepts
    assert concept_evidence(split, text) == ["name words split, grid", "parameter divider color"]
    assert concept_evidence(rotate, text) == ["implementation call rot90"]
    # a generic parameter name ("grid") and a name with a missing word are no evidence
    assert concept_evidence(recolor, text) == []
    assert concept_evidence(reflect, text) == []
    flipped = solution_text(step(FLIP_PROGRAM, [], verified=False))
    assert concept_evidence(reflect, flipped) == [
        "name words reflect, grid",
        "implementation call fliplr",
    ]


def test_verdicts_of_a_confirmed_task() -> None:
    mem = memory()
    shown = ["split grid", "recolor object", "lesson 1"]
    solved = step(SPLIT_PROGRAM, shown, verified=True)
    attribution = attribute_task(mem, result("t1", shown, solved), solved)
    verdicts = {v.name: v.verdict for v in attribution.verdicts}
    assert verdicts == {"split grid": "helpful", "recolor object": "unused"}  # lessons: none
    assert attribution.confirmed


def test_a_failed_attempt_that_followed_a_concept_makes_it_harmful() -> None:
    mem = memory()
    shown = ["reflect grid", "split grid"]
    failed = step(FLIP_PROGRAM, shown, verified=False)
    attribution = attribute_task(mem, result("t2", shown, failed), None)
    assert {v.name: v.verdict for v in attribution.verdicts} == {
        "reflect grid": "harmful",
        "split grid": "unused",
    }


def test_only_the_confirmed_step_decides_helpful() -> None:
    """A retry shown a reselected concept that the confirmed step was not shown."""
    mem = memory()
    first = step(SPLIT_PROGRAM, ["recolor object"], verified=True)
    attribution = attribute_task(mem, result("t3", ["recolor object"], first), first)
    assert [v.verdict for v in attribution.verdicts] == ["unused"]
    retried = step(SPLIT_PROGRAM, ["split grid"], verified=False, round_=1)
    other = result("t4", ["rotate grid"], step(SPLIT_PROGRAM, ["rotate grid"], verified=True))
    other.attempts.append(Attempt(index=1, steps=[retried]))
    confirmed = other.attempts[0].steps[0]
    verdicts = {v.name: v.verdict for v in attribute_task(mem, other, confirmed).verdicts}
    assert verdicts == {"rotate grid": "helpful", "split grid": "unused"}


def test_every_answered_prompt_variants_selection_gets_a_verdict() -> None:
    """With --variants a concept only variant 1 chose is judged like one of variant 0's. A
    concept only in prompts that got no answer (variant 2's, too long for the window; a
    retry whose call failed) was never seen: it gets no verdict, not "unused"."""
    mem = memory()
    solved = step(SPLIT_PROGRAM, ["split grid"], verified=True)
    failed = Step(round=1, completion="", error="HTTP 500", concepts=["recolor object"])
    task = result("t5", ["split grid"], solved)
    task.variant_selections = [
        Selection(selector="llm", selected=["rotate grid"]),
        Selection(selector="llm", selected=["reflect grid"]),
    ]
    tried = step(SPLIT_PROGRAM, ["rotate grid"], verified=False)
    task.attempts += [
        Attempt(index=1, variant=1, steps=[tried, failed]),
        Attempt(index=2, variant=2),
    ]
    verdicts = {v.name: v.verdict for v in attribute_task(mem, task, solved).verdicts}
    assert verdicts == {"split grid": "helpful", "rotate grid": "unused"}


def test_recording_adds_task_ids_once_per_concept() -> None:
    mem = memory()
    shown = ["split grid", "recolor object"]
    solved = step(SPLIT_PROGRAM, shown, verified=True)
    attribution = attribute_task(mem, result("t1", shown, solved), solved)
    assert record_attribution(mem, attribution) == 2
    assert record_attribution(mem, attribution) == 0  # the same task again: idempotent
    split, _, recolor, _ = mem.concepts
    assert split.stats.helpful == ["t1"] and split.stats.unused == []
    assert recolor.stats.unused == ["t1"]


def test_summary_counts_solves_attributed_to_a_shown_concept() -> None:
    mem = memory()
    solved = step(SPLIT_PROGRAM, ["split grid"], verified=True)
    ignored = step(FLIP_PROGRAM, ["recolor object"], verified=True)
    failed = step(FLIP_PROGRAM, ["reflect grid"], verified=False)
    summary = summarize(
        [
            attribute_task(mem, result("a", ["split grid"], solved), solved),
            attribute_task(mem, result("b", ["recolor object"], ignored), ignored),
            attribute_task(mem, result("c", ["reflect grid"], failed), None),
        ]
    )
    assert (summary.tasks, summary.confirmed, summary.attributed) == (3, 2, 1)
    assert summary.share_attributed == 0.5
    assert summary.verdicts == {"helpful": 1, "unused": 1, "harmful": 1}


def test_recording_looks_every_concept_up_in_one_index(monkeypatch: pytest.MonkeyPatch) -> None:
    from arcmemo.memory import schema
    from arcmemo.memory.edits import VERIFY_VARIABLE

    monkeypatch.delenv(VERIFY_VARIABLE)  # else every kept index is checked by a rebuild
    built: list[int] = []
    real = schema._positions
    monkeypatch.setattr(schema, "_positions", lambda cs: built.append(len(cs)) or real(cs))
    mem = memory()
    shown = ["split grid", "recolor object", "rotate grid"]
    solved = step(SPLIT_PROGRAM, shown, verified=True)
    attribution = attribute_task(mem, result("t1", shown, solved), solved)
    assert record_attribution(mem, attribution) == 3
    # one index for both (a verdict recorded edits a concept, not the list it is indexed in)
    assert built == [4]


# -- the benchmark's entry points are no evidence ---------------------------------------------

# A seed in BARC's style, written for this test: `from common import *`, concept and
# description comments, `main(input_grid)` indexing [x, y], BARC's generator below the marker.
BARC_STYLE_SCALE_SEED = """from common import *

import numpy as np
from typing import *

# concepts:
# scaling, pixel blocks

# description:
# In the input you will see a small sprite. Make each pixel a square block of its color,
# so the output is the input scaled up by an integer factor.

def main(input_grid):
    # scale by a fixed factor: every pixel becomes a 3x3 block
    factor = 3
    width, height = input_grid.shape
    output_grid = np.zeros((width * factor, height * factor), dtype=int)
    for x, y in np.argwhere(input_grid != Color.BLACK):
        block = np.full((factor, factor), input_grid[x, y])
        blit_sprite(output_grid, block, x * factor, y * factor)
    return output_grid

def generate_input():
    return random_sprite(3, 3, color_palette=[Color.RED])


# ============= remove below this point for prompting =============

if __name__ == '__main__':
    visualize(generate_input, main, 5)
"""
BARC_STYLE_COMMON = """import numpy as np
import random


class Color:
    BLACK = 0
    RED = 2


def crop(grid, background=Color.BLACK):
    # the bounding box of everything that is not background
    xs, ys = np.where(grid != background)
    return grid[xs.min():xs.max() + 1, ys.min():ys.max() + 1]


def blit_sprite(grid, sprite, x, y, background=Color.BLACK):
    sprite = crop(sprite, background)
    grid[x:x + sprite.shape[0], y:y + sprite.shape[1]] = sprite


def random_sprite(n, m, color_palette=None):
    return np.zeros((n, m), dtype=int)
"""

# An answer as a real model writes it: prose, then a fenced program that defines
# `transform` with a helper of its own (an XOR overlay of the two halves).
MODEL_COMPLETION_XOR = """Looking at the examples, the grid has a left and a right half split by a
grey column. Cells that are coloured in exactly one half become green in the output, so this is an
XOR of the two halves.

```python
import numpy as np


def halves(grid):
    grid = np.array(grid)
    return grid[:, :3], grid[:, 4:]


def transform(grid):
    left, right = halves(grid)
    # exclusive or: coloured in exactly one of the halves
    mask = (left != 0) ^ (right != 0)
    return np.where(mask, 3, 0).tolist()
```

This gives a 3-wide output for every example."""


def seed_memory() -> Memory:
    from arcmemo.memory.seeds import load_seed

    return load_seed("arc")


def arc_entry_points() -> frozenset[str]:
    from arcmemo.benchmarks.arc import ArcBenchmark

    return ArcBenchmark.entry_points


def barc_program(tmp_path: Path) -> str:
    from arcmemo.benchmarks.arc.barc import convert_seed, load_library

    common = tmp_path / "common.py"
    common.write_text(BARC_STYLE_COMMON)
    return convert_seed(BARC_STYLE_SCALE_SEED, load_library(common), task_id="9172f3a0").source


def test_arc_declares_its_entry_point_and_harness_names() -> None:
    assert {"transform", "_arcmemo_transform", "transform_xy"} <= arc_entry_points()


def test_the_entry_point_is_no_evidence_on_a_converted_barc_style_seed(tmp_path: Path) -> None:
    mem = seed_memory()
    tile, scale = mem.find("tile grid"), mem.find("scale grid")
    assert tile is not None and scale is not None
    assert "transform" in [p.name for p in tile.parameters]  # the seed's own parameter name
    program = barc_program(tmp_path)
    assert "def transform(grid):" in program and "def transform_xy(input_grid):" in program
    assert "def crop(grid, background=Color.BLACK):" in program  # inlined: blit_sprite uses it
    shown = ["tile grid", "scale grid", "crop to bounding box"]
    solved = step(program, shown, verified=True)
    before = {
        v.name: v.verdict for v in attribute_task(mem, result("s", shown, solved), solved).verdicts
    }
    assert before["tile grid"] == "helpful"  # what happened before: credited for `transform`
    text = solution_text(solved, arc_entry_points())
    assert "transform" not in text.identifiers and "transform_xy" not in text.identifiers
    assert concept_evidence(tile, text) == []
    assert concept_evidence(scale, text) == ["name words scale, grid", "parameter factor"]
    # The inlined library is BARC's, not the solution: its crop helper's comment is no
    # evidence that the program crops to a bounding box; its own call to blit_sprite stays.
    crop = mem.find("crop to bounding box")
    assert crop is not None and concept_evidence(crop, text) == []
    assert "blit_sprite" in text.calls and "crop" not in text.calls
    attribution = attribute_task(mem, result("s", shown, solved), solved, ignore=arc_entry_points())
    assert {v.name: v.verdict for v in attribution.verdicts} == {
        "tile grid": "unused",
        "scale grid": "helpful",
        "crop to bounding box": "unused",
    }


def test_the_entry_point_is_no_evidence_on_a_real_model_completion() -> None:
    from arcmemo.benchmarks.arc.prompt import extract_program

    program = extract_program(MODEL_COMPLETION_XOR)  # what the run takes as the candidate
    assert program is not None and "def transform(grid):" in program
    mem = seed_memory()
    shown = ["tile grid"]
    solved = Step(
        round=0, completion=MODEL_COMPLETION_XOR, candidate=program, verified=True, concepts=shown
    )
    lexical = attribute_task(mem, result("x", shown, solved), solved)
    assert lexical.verdicts[0].evidence == ["parameter transform"]  # the old false credit
    attribution = attribute_task(mem, result("x", shown, solved), solved, ignore=arc_entry_points())
    (verdict,) = attribution.verdicts
    assert (verdict.name, verdict.verdict, verdict.evidence) == ("tile grid", "unused", [])
    # The program's own helper is still evidence: only the benchmark's names are left out.
    assert "halve" in solution_text(solved, arc_entry_points()).identifiers


# -- credit by import --------------------------------------------------------------------------

CROP_SOURCE = "def crop_to_object(grid):\n    return grid\n"
IMPORTING_PROGRAM = """
from arcmemo_library import crop_to_object

def transform(grid):
    return crop_to_object(grid)
"""


def library_memory() -> Memory:
    return Memory(
        concepts=[
            # Its words are nowhere in the program: only the import says it was used.
            concept(
                "bounding box",
                functions=[LibraryFunction(name="crop_to_object", source=CROP_SOURCE)],
            ),
            # Its words are all in the program, but its own code was not imported.
            concept(
                "crop object",
                functions=[
                    LibraryFunction(name="crop_cells", source="def crop_cells(g):\n    return g\n")
                ],
            ),
            # No code: the lexical check still decides.
            concept("grid crop"),
        ]
    )


def test_an_import_credits_the_functions_concept_exactly() -> None:
    mem = library_memory()
    shown = ["bounding box", "crop object", "grid crop"]
    final = step(IMPORTING_PROGRAM, shown, verified=True)
    attribution = attribute_task(mem, result("t1", shown, final), final, ignore={"transform"})
    verdicts = {v.name: v for v in attribution.verdicts}
    assert verdicts["bounding box"].verdict == "helpful"
    assert verdicts["bounding box"].evidence == ["imports crop_to_object"]
    assert verdicts["bounding box"].imported == ["crop_to_object"]
    assert verdicts["crop object"].verdict == "unused"
    assert verdicts["grid crop"].verdict == "helpful"  # name words, as before
    record_attribution(mem, attribution)
    assert mem.concepts[0].functions[0].imported_by == ["t1"]
    assert mem.concepts[1].functions[0].imported_by == []
    record_attribution(mem, attribution)  # folding twice changes nothing
    assert mem.concepts[0].functions[0].imported_by == ["t1"]


def test_an_import_credits_a_concept_no_prompt_showed() -> None:
    mem = library_memory()
    program = (
        "import arcmemo_library as lib\n\ndef transform(grid):\n"
        "    return lib.crop_to_object(grid)\n"
    )
    final = step(program, [], verified=True)
    attribution = attribute_task(mem, result("t2", [], final), final)
    assert [(v.name, v.verdict) for v in attribution.verdicts] == [("bounding box", "helpful")]


def test_a_failed_import_is_harmful_and_the_judge_does_not_override_code() -> None:
    mem = library_memory()
    failed = step(IMPORTING_PROGRAM, ["bounding box"], verified=False)
    attribution = attribute_task(
        mem, result("t3", ["bounding box"], failed), None, judged={"bounding-box": False}
    )
    assert [(v.name, v.verdict) for v in attribution.verdicts] == [("bounding box", "harmful")]
    record_attribution(mem, attribution)
    assert mem.concepts[0].functions[0].imported_by == []  # only verified programs count


def test_imported_names_cover_every_import_form() -> None:
    assert imported_functions("from arcmemo_library import a, b as c\nx = a") == {"a", "b"}
    assert imported_functions("import arcmemo_library as L\nL.f(1)\nother.g()") == {"f"}
    assert imported_functions("import arcmemo_library\narcmemo_library.h") == {"h"}
    assert "k" in imported_functions("from arcmemo_library import *\nk(1)")
    assert imported_functions("from other import a\nimport numpy\nnumpy.f") == set()
    assert imported_functions("def (") == set()
