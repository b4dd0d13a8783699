"""Consolidation: planted near-duplicates merge with provenance; distinct concepts stay."""

from __future__ import annotations

import asyncio

import pytest

from arcmemo.memory.consolidate import MergeProposal, apply_merges, propose_merges
from arcmemo.memory.diff import memory_diff
from arcmemo.memory.schema import Concept, ConceptStats, Memory, Parameter, Provenance


def routine(
    name: str,
    description: str,
    cues: list[str],
    notes: list[str],
    sources: list[str],
    params: tuple[str, ...] = (),
    **stats: list[str],
) -> Concept:
    return Concept(
        name=name,
        kind="routine",
        routine_subtype="grid manipulation",
        description=description,
        cues=cues,
        implementation=notes,
        parameters=[Parameter(name=p) for p in params],
        provenance=Provenance(sources=sources, authors=["scripted:abstractor"]),
        stats=ConceptStats(**stats),
    )


def planted() -> Memory:
    """The paper's published near-duplicates, plus a look-alike name and an unrelated one."""
    return Memory(
        concepts=[
            routine(
                "split grid",
                "divide the grid into regions separated by divider lines",
                ["lines of one color cross the grid"],
                ["find the divider rows and columns, slice the grid between them"],
                ["t1", "t2"],
                ("divider color",),
                helpful=["t7"],
            ),
            routine(
                "split regions",
                "split the grid into regions along the divider lines",
                ["a grid is crossed by full lines of one color"],
                ["slice between divider rows and columns"],
                ["t3"],
                ("divider color", "keep empty"),
                unused=["t8"],
            ),
            routine(
                "split region grid",
                "cut the grid into a grid of regions at the divider lines",
                ["separator lines divide the grid into cells"],
                ["locate separator lines; slice the grid into sub-grids"],
                ["t4"],
            ),
            routine(
                "split colors",
                "separate the cells of each color into their own layer",
                ["several colors are mixed"],
                ["one mask per color"],
                ["t5"],
            ),
            routine(
                "recolor object",
                "paint each object with a new color",
                ["objects change color"],
                ["map old color to new"],
                ["t6"],
            ),
        ]
    )


def test_planted_near_duplicates_are_proposed_and_distinct_ones_left_alone() -> None:
    proposals = asyncio.run(propose_merges(planted()))
    assert [(p.keeper, p.absorbed) for p in proposals] == [
        ("split grid", "split regions"),
        ("split grid", "split region grid"),
    ]
    assert all(p.name_score >= 70 and p.content_score >= 0.35 for p in proposals)
    # "split colors" looks like "split grid" by name (67) but not by content
    stricter = asyncio.run(propose_merges(planted(), name_threshold=60))
    assert "split colors" not in {p.absorbed for p in stricter}
    loose = asyncio.run(propose_merges(planted(), name_threshold=60, content_threshold=0.0))
    assert "split colors" in {p.absorbed for p in loose}  # the content check is what stops it


def test_merges_keep_full_provenance_and_show_in_the_diff() -> None:
    memory = planted()
    before = memory.model_copy(deep=True)
    proposals = asyncio.run(propose_merges(memory))
    apply_merges(memory, proposals, actor="human")
    assert [c.name for c in memory.concepts] == ["split grid", "split colors", "recolor object"]
    merged = memory.concepts[0]
    assert merged.merged_from == ["split regions", "split region grid"]
    assert merged.provenance.sources == ["t1", "t2", "t3", "t4"]
    assert "a grid is crossed by full lines of one color" in merged.cues
    assert "separator lines divide the grid into cells" in merged.cues
    assert "locate separator lines; slice the grid into sub-grids" in merged.implementation
    assert [p.name for p in merged.parameters] == ["divider color", "keep empty"]
    assert merged.stats.helpful == ["t7"] and merged.stats.unused == ["t8"]
    entries = [e for e in memory.history if e.op == "consolidate"]
    assert len(entries) == 2 and {e.target for e in entries} == {"split-grid"}
    assert entries[0].changes[0] == "absorbed 'split regions'"
    assert entries[0].changes[-1].startswith('absorbed content: {"id":"split-region"')
    assert "description: kept" in " ".join(entries[0].changes)  # the conflict is recorded
    diff = memory_diff(before, memory)
    assert "- split regions (routine): merged into split grid" in diff
    assert "- split region grid (routine): merged into split grid" in diff
    assert "~ split grid" in diff
    assert "    merged_from: +'split regions'" in diff
    assert not any(line.startswith(("- split colors", "- recolor object")) for line in diff)


def test_a_proposal_naming_a_missing_concept_is_refused() -> None:
    memory = planted()
    proposal = MergeProposal(keeper="split grid", absorbed="nothing", name_score=0, content_score=0)
    with pytest.raises(KeyError, match="missing"):
        apply_merges(memory, [proposal])
