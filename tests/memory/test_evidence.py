"""Evidence: the usefulness order of the budgeted selection view, pruning, retired concepts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arcmemo.memory.diff import memory_diff
from arcmemo.memory.evidence import active, prune, prune_candidates, usefulness_key
from arcmemo.memory.render import VIEWS
from arcmemo.memory.schema import Concept, ConceptStats, Memory, Provenance
from arcmemo.models.base import Message
from arcmemo.run.solve_prompt import prepare_prompt
from arcmemo.selection.base import SELECTORS


def concept(name: str, sources: list[str], **stats: Any) -> Concept:
    return Concept(
        name=name,
        kind="routine",
        description=f"{name} does one long and specific thing to a grid of cells",
        cues=[f"a cue for {name} that takes a few tokens to write down"],
        provenance=Provenance(sources=sources),
        stats=ConceptStats(**stats),
    )


def test_attributed_help_outranks_usage() -> None:
    popular = concept("popular routine", ["a", "b", "c", "d"], unused=["e", "f"])
    helper = concept("helpful routine", ["a", "b"], helpful=["g"])
    harmful = concept("harmful routine", ["a", "b", "c", "d", "e"], harmful=["h"])
    fresh = concept("fresh routine", ["a", "b"])
    ordered = sorted([popular, harmful, fresh, helper], key=usefulness_key)
    assert [c.name for c in ordered] == [
        "helpful routine",
        "popular routine",
        "fresh routine",
        "harmful routine",
    ]


def test_the_budgeted_selection_view_keeps_the_helpful_concept_in_full() -> None:
    memory = Memory(
        concepts=[
            concept("popular routine", ["a", "b", "c", "d"], unused=["e", "f"]),
            concept("helpful routine", ["a", "b"], helpful=["g"]),
        ]
    )
    full = memory.render("selection")
    budget = len(full) // 5  # about one concept block, by the 4-chars-per-token estimate
    text = memory.render("selection", budget_tokens=budget)
    assert "- concept: helpful routine" in text
    assert "- concept: popular routine" not in text
    # without attribution, usage alone decides (the old order)
    for c in memory.concepts:
        c.stats = ConceptStats()
    text = memory.render("selection", budget_tokens=budget)
    assert "- concept: popular routine" in text
    assert "- concept: helpful routine" not in text


def test_prune_retires_concepts_with_enough_evidence_and_no_help() -> None:
    memory = Memory(
        concepts=[
            concept("never helps", ["a"], unused=["t1", "t2"], harmful=["t3"]),
            concept("helped once", ["a"], unused=["t1", "t2"], helpful=["t3"]),
            concept("little evidence", ["a"], unused=["t1"], selected=9),
        ]
    )
    before = memory.model_copy(deep=True)
    assert [c.name for c in prune_candidates(memory, 3)] == ["never helps"]
    with pytest.raises(ValueError, match="at least 1"):
        prune_candidates(memory, 0)
    (retired,) = prune(memory, 3)
    assert retired.retired is not None and "never helped" in retired.retired
    assert memory.history[-1].op == "retire" and memory.history[-1].target == "never-help"
    assert prune(memory, 3) == []  # already retired
    assert len(memory.concepts) == 3  # retired, not deleted
    diff = memory_diff(before, memory)
    assert diff[0] == "~ never helps (retired)"
    assert diff[1].startswith("    retired: None -> 'selected with attribution 3 times")


def test_retired_concepts_are_never_rendered_nor_selectable() -> None:
    memory = Memory(concepts=[concept("kept routine", ["a"]), concept("retired routine", ["a"])])
    memory.concepts[1].retired = "never helped"
    assert [c.name for c in active(memory).concepts] == ["kept routine"]
    for view in VIEWS:
        text = memory.render(view, selected=["retired routine", "kept routine"])
        assert "retired routine" not in text and "kept routine" in text

    class Bench:
        def task_id(self, task: Any) -> str:
            return "t"

        def describe(self, task: Any) -> str:
            return "p"

        def prompt(
            self, task: Any, *, concepts: str, previous: Any, library: Any = None
        ) -> list[Message]:
            return [Message(role="user", content=concepts)]

    prepared = asyncio.run(
        prepare_prompt(
            Bench(),  # type: ignore[arg-type]
            object(),
            memory=memory,
            selector=SELECTORS.create("all"),
        )
    )
    assert prepared.selection is not None
    assert prepared.selection.selected == ["kept routine"]
    assert "retired routine" not in prepared.concepts
