"""The memory page's annotated concept is a concept the schema accepts, and every field the
page annotates is one the schema has."""

from __future__ import annotations

import json
import re

from arcmemo.memory.schema import Concept
from tests.support.docs_blocks import DOCS, blocks

PAGE = DOCS / "memory.md"


def test_the_annotated_example_is_a_valid_concept() -> None:
    (example,) = [b.body for b in blocks(PAGE) if b.info == "json"]
    concept = Concept.model_validate(json.loads(example))
    assert concept.name == "background"
    assert set(json.loads(example)) == set(Concept.model_fields)


def test_every_annotated_field_is_a_field_of_the_schema() -> None:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## One concept, annotated") : text.index("## The file")]
    annotated = set(re.findall(r"^- `(\w+)`", section, re.M))
    annotated |= set(re.findall(r"^\s+`(\w+)`:", section, re.M))
    fields = set(Concept.model_fields)
    assert annotated and annotated <= fields, annotated - fields
