"""The hand-written abstraction examples: valid, verified, shown to both PS steps, swappable."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from arcmemo.abstraction import ABSTRACTORS
from arcmemo.abstraction.examples import (
    ExamplesFileError,
    default_examples_path,
    load_examples,
)
from arcmemo.abstraction.ps import parse_concepts
from arcmemo.benchmarks import BENCHMARKS
from arcmemo.memory.seeds import load_seed
from tests.support.abstraction import (
    ITEM,
    PSEUDOCODE,
    Recorder,
    abstract,
    fenced,
    small_memory,
)

CONCEPTS = fenced("- name: recolor object\n")


def test_the_bundled_arc_examples_are_complete() -> None:
    examples = load_examples(None, "arc")
    assert len(examples) >= 10
    assert len({e.task for e in examples}) == len(examples)
    seed = load_seed("arc")
    new_concepts = 0
    for example in examples:
        assert example.summary and example.pseudocode.strip()
        concepts, errors = parse_concepts(fenced(example.concepts_yaml()), seed)
        assert errors == [], example.task
        assert len(concepts) == len(example.concepts)
        for concept in concepts:
            if seed.find(concept.name) is None:  # a new concept is fully specified
                new_concepts += 1
                assert concept.description and (concept.cues or concept.implementation)
                if concept.kind == "structure" or concept.routine_subtype == "grid manipulation":
                    assert concept.cues, concept.name  # what to look for
                assert all(p.type for p in concept.parameters), concept.name
                if concept.kind == "routine":
                    assert concept.output_type and concept.routine_subtype, concept.name
    assert new_concepts >= 10
    with_lessons = [e for e in examples if e.thought_process and e.lessons]
    assert len(with_lessons) >= 3


def test_every_example_program_solves_its_training_task() -> None:
    examples = load_examples(None, "arc")
    bench = BENCHMARKS.create("arc-agi-1")
    try:
        tasks = bench.find_tasks([e.task for e in examples])
        for example, task in zip(examples, tasks, strict=True):
            check = bench.check(task, f"```python\n{example.program}```")
            assert check.verified, (example.task, check.checks)
            assert bench.judge(task, check.prediction) == [True] * len(task.test_outputs)
    finally:
        bench.close()


def test_both_steps_show_the_examples() -> None:
    recorder = Recorder(PSEUDOCODE, CONCEPTS)
    abstract(small_memory(), recorder)
    first = load_examples(None, "arc")[0]
    pseudocode_prompt, concept_prompt = recorder.prompt(0), recorder.prompt(1)
    assert "## Example 1\n### Solution\n```python\n" + first.program.rstrip() in pseudocode_prompt
    assert f"<summary>{first.summary}</summary>" in pseudocode_prompt
    assert f"## Example 1\n# summary: {first.summary}\n" in concept_prompt
    assert first.concepts_yaml().rstrip() in concept_prompt
    # the task being abstracted comes after the examples
    assert pseudocode_prompt.index("## Example 12") < pseudocode_prompt.index("## Your puzzle")


def test_concept_step_shows_the_memory_compressed_with_implementation_notes() -> None:
    memory = small_memory()
    memory.add(
        memory.concepts[0].model_copy(update={"implementation": ["paint cell by cell"]}),
        task_id="another-task",
    )
    recorder = Recorder(PSEUDOCODE, CONCEPTS)
    abstract(memory, recorder)
    memory_section = recorder.prompt(1).split("### Memory\n")[1].split("### Solution")[0]
    assert "- concept: recolor object" in memory_section
    assert "paint cell by cell" in memory_section


def test_examples_file_and_count_are_options(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        yaml.safe_dump(
            {
                "domain": "arc",
                "examples": [
                    {
                        "task": "x1",
                        "program": "def transform(grid):\n    return grid\n",
                        "summary": "MY OWN SUMMARY",
                        "pseudocode": "return grid\n",
                        "concepts": [{"name": "identity", "kind": "routine"}],
                    }
                ],
            }
        )
    )
    spec = ABSTRACTORS.spec("ps", {"examples": str(mine)})
    assert spec.options == {
        "examples": str(mine),
        "n_examples": None,
        "usage_threshold": 2,
        "pitfalls": False,
        "contrast": False,
        "contrast_signal": None,
    }
    client_recorder = Recorder(PSEUDOCODE, CONCEPTS)
    abstract(small_memory(), client_recorder, spec=spec)
    assert "MY OWN SUMMARY" in client_recorder.prompt(0)
    assert "## Example 2" not in client_recorder.prompt(0)
    zero = Recorder(PSEUDOCODE, CONCEPTS)
    abstract(small_memory(), zero, spec=ABSTRACTORS.spec("ps", {"n_examples": 0}))
    assert "## Example" not in zero.prompt(0) + zero.prompt(1)


def test_a_bad_examples_file_names_the_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("domain: arc\nexamples:\n  - task: x\n    program: p\n")
    with pytest.raises(ExamplesFileError, match=r"bad.yaml: examples.0.summary: Field required"):
        load_examples(bad, "arc")
    with pytest.raises(ExamplesFileError, match="does not exist"):
        load_examples(tmp_path / "absent.yaml", "arc")
    assert load_examples(None, "no-such-domain") == []
    assert default_examples_path("arc").is_file()


def test_abstracting_an_example_s_own_task_never_shows_its_example() -> None:
    examples = load_examples(None, "arc")
    own = next(e for e in examples if e.task == "00d62c1b")  # a BARC seed among them
    recorder = Recorder(PSEUDOCODE, CONCEPTS)
    abstract(small_memory(), recorder, item=ITEM.model_copy(update={"task_id": own.task}))
    assert own.program.rstrip() not in recorder.prompt(0)
    assert own.summary not in recorder.prompt(0) + recorder.prompt(1)
    assert "## Example 11" in recorder.prompt(0) and "## Example 12" not in recorder.prompt(0)
    # The open-ended format leaves its own example out too, and the count still holds.
    lesson_examples = [e for e in examples if e.thought_process and e.lessons]
    oe = ABSTRACTORS.create(ABSTRACTORS.spec("oe", {"n_examples": 2}))
    shown = [e.task for e in oe.examples("arc", lesson_examples[0].task)]  # type: ignore[attr-defined]
    assert shown == [e.task for e in lesson_examples[1:3]]
