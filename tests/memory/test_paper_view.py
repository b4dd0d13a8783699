"""The paper's view of a memory (arcmemo.memory.paper_view): lessons beside the concepts, and
how a memory larger than the paper's is cut to a budget the paper's way."""

from __future__ import annotations

import re

from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.paper_view import render_paper
from arcmemo.memory.render import SEED_SOURCE
from arcmemo.memory.schema import Lesson
from arcmemo.memory.seeds import load_seed
from arcmemo.memory.synthetic import synthetic_memory

FULL = re.compile(r"^- concept: (.+)$", re.M)


def _titles(text: str, label: str) -> list[str]:
    found = re.findall(rf"^- {label}: \[(.*)\]$", text, re.M)
    return [name for line in found for name in line.split(", ") if name]


def test_a_budget_the_view_fits_changes_nothing() -> None:
    memory = synthetic_memory(40, seed=3)
    selected = [memory.concepts[0].name]
    for chosen in (None, selected):
        whole = render_paper(memory, chosen)
        assert render_paper(memory, chosen, budget_tokens=estimate_tokens(whole)) == whole


def test_the_selection_context_raises_the_usage_threshold_to_fit() -> None:
    memory = synthetic_memory(600, seed=4)
    whole = render_paper(memory, usage_threshold=1)
    budget = estimate_tokens(whole) // 3
    cut = render_paper(memory, usage_threshold=1, budget_tokens=budget)
    assert estimate_tokens(cut) <= budget
    in_full = set(FULL.findall(cut))
    assert 0 < len(in_full) < len(FULL.findall(whole))
    by_name = {c.name: c for c in memory.concepts}
    earned = [n for n in in_full if SEED_SOURCE not in by_name[n].provenance.sources]
    kept = min(by_name[n].usage for n in earned)  # seed concepts stay in full, as arcmemo's
    named = _titles(cut, "lower usage concepts")
    assert all(by_name[n].usage < kept for n in named)  # the least used went to names
    assert len(in_full) + len(named) == len(memory.concepts)  # every concept still named


def test_the_solve_context_keeps_the_selection_and_the_most_used_titles() -> None:
    memory = synthetic_memory(3000, seed=2)
    selected = [memory.concepts[5].name, memory.concepts[9].name]
    whole = render_paper(memory, selected)
    cut = render_paper(memory, selected, budget_tokens=2000)
    assert estimate_tokens(whole) > 2000 >= estimate_tokens(cut)
    assert FULL.findall(cut) == FULL.findall(whole)  # the selection in full, as before
    listed = _titles(cut, "other concepts")
    dropped = len(memory.concepts) - len(selected) - len(listed)
    assert len(listed) > 0 and dropped > 0
    assert cut.rstrip().endswith(
        f"({dropped:,} more concepts not listed: memory budget of 2,000 tokens)"
    )
    by_name = {c.name: c for c in memory.concepts}
    unlisted = set(by_name) - set(listed) - set(selected)
    assert min(by_name[n].usage for n in listed) >= max(by_name[n].usage for n in unlisted)


def test_lessons_follow_the_concepts() -> None:
    memory = synthetic_memory(20, seed=5)
    memory.add_lesson(
        Lesson(situation="the grid is mostly empty", suggestion="crop it"), task_id="a"
    )
    pitfall = Lesson(situation="colors swap", suggestion="check both ways", kind="pitfall")
    memory.add_lesson(pitfall, task_id="b")
    selection = render_paper(memory, usage_threshold=0)
    assert selection.index("## Lessons") > selection.index("- concept:")
    assert "- lesson 1\n" in selection and "  Pitfall: situation: colors swap" in selection
    solve = render_paper(memory, [memory.concepts[0].name, "lesson 2"])
    assert "- lesson 2\n" in solve and "- lesson 1\n" not in solve
    assert "## Lessons" not in render_paper(memory, [memory.concepts[0].name])


def test_hand_written_seed_concepts_are_shown_in_full() -> None:
    # Used once each (the seed), they stand where the paper's annotated start stood.
    memory = load_seed("arc")
    shown = set(FULL.findall(render_paper(memory)))
    seeds = {c.name for c in memory.concepts if SEED_SOURCE in c.provenance.sources}
    assert seeds and shown == seeds and all(c.usage < 2 for c in memory.concepts)


def test_over_a_budget_the_seed_concepts_go_to_names_last() -> None:
    memory = load_seed("arc")
    whole = render_paper(memory)
    cut = render_paper(memory, budget_tokens=estimate_tokens(whole) - 1)
    assert FULL.findall(cut) == [] and estimate_tokens(cut) < estimate_tokens(whole)
    named = _titles(cut, "lower usage concepts")
    assert sorted(named) == sorted(c.name for c in memory.concepts)
