"""Which property tests a concept's routine must pass: a small table keyed by its name.

A rule matches a concept when every one of its words occurs among the words of the
concept's name or id (``reflect`` matches "reflect grid"; ``fill enclosed`` matches "fill
enclosed regions"); only routines match, and not those the ontology says return something
other than a grid (the tests compare grids). The tests themselves run in the sandbox
(``_properties.py``) on every real call of ``concept_routine`` that takes a grid and
returns one.

=========================  ==========================  ==========================================
rule words                 properties                  why
=========================  ==========================  ==========================================
reflect, mirror, flip      involution, same_colors     a mirror twice is the identity; it only
                                                       moves cells
rotate, rotation           order_four, same_colors     a quarter turn four times is the identity
recolor, recolour          keeps_shapes                the non-background mask is kept
move, translate, shift     translated                  each painted cell copies the cell one
                                                       fixed offset away; no new colored cells
line                       collinear                   painted cells share one row, column or
                                                       diagonal, and one color
crop                       subgrid                     the output is a window of the input
scale                      scaled                      each input cell blown up into a block
fill enclosed              fills_enclosed              only background cells that cannot reach
                                                       the border change, to one color
=========================  ==========================  ==========================================

A concept no rule matches gets the aux-model review (``prompts/puzzles/review.j2``) when
an aux model is given, else its ``implements_concept`` check is skipped, saying so.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from pydantic import BaseModel, Field

from arcmemo.memory.schema import Concept


class PropertyRule(BaseModel):
    """One row of the table."""

    words: list[list[str]] = Field(
        description="Alternatives; each is a list of words that must all occur."
    )
    properties: list[str] = Field(description="Property test names (see _properties.py).")


PROPERTY_RULES: list[PropertyRule] = [
    PropertyRule(
        words=[["reflect"], ["reflection"], ["mirror"], ["flip"]],
        properties=["involution", "same_colors"],
    ),
    PropertyRule(words=[["rotate"], ["rotation"]], properties=["order_four", "same_colors"]),
    PropertyRule(words=[["recolor"], ["recolour"]], properties=["keeps_shapes"]),
    PropertyRule(words=[["move"], ["translate"], ["shift"]], properties=["translated"]),
    PropertyRule(words=[["line"]], properties=["collinear"]),
    PropertyRule(words=[["crop"]], properties=["subgrid"]),
    PropertyRule(words=[["scale"]], properties=["scaled"]),
    PropertyRule(words=[["fill", "enclosed"]], properties=["fills_enclosed"]),
]


@cache
def property_source() -> str:
    """The sandbox-side property tests, appended to the harness."""
    return Path(__file__).with_name("_properties.py").read_text(encoding="utf-8")


def _words(concept: Concept) -> set[str]:
    return set(re.findall(r"[a-z]+", f"{concept.name} {concept.id}".lower()))


def concept_properties(concept: Concept) -> list[str]:
    """The property tests ``concept``'s routine must pass (empty when no rule matches)."""
    output = (concept.output_type or "").strip().lower()
    if concept.kind != "routine" or (output and output != "grid"):
        return []
    words = _words(concept)
    found: list[str] = []
    for rule in PROPERTY_RULES:
        if any(all(word in words for word in option) for option in rule.words):
            found += [name for name in rule.properties if name not in found]
    return found
