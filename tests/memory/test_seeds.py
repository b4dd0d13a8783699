"""The seed ontologies and their loader."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from arcmemo.memory.schema import concept_id
from arcmemo.memory.seeds import SeedFileError, available_domains, load_seed, seed_path
from arcmemo.memory.store import dump_memory

COUNT_RANGES = {"arc": (15, 25), "aime": (6, 10)}


def test_shipped_domains_are_available() -> None:
    assert {"arc", "aime"} <= set(available_domains())


@pytest.mark.parametrize("domain", ["arc", "aime"])
def test_seed_validates_and_is_fully_specified(domain: str) -> None:
    memory = load_seed(domain)
    low, high = COUNT_RANGES[domain]
    assert low <= len(memory.concepts) <= high
    assert memory.domain == domain
    assert memory.integrity_issues() == []
    names = {c.id for c in memory.concepts}
    for concept in memory.concepts:
        assert concept.description and concept.cues and concept.implementation, concept.name
        assert concept.parameters, concept.name
        for param in concept.parameters:
            assert param.type and param.description, f"{concept.name}.{param.name}"
        if concept.kind == "routine":
            assert concept.routine_subtype and concept.output_type, concept.name
        assert all(concept_id(r) in names for r in concept.relations), concept.name
        assert concept.provenance.sources == ["seed"]
        assert concept.provenance.authors == ["human"]
        assert concept.provenance.created_at == datetime(2025, 1, 1, tzinfo=timezone.utc)
    assert {c.kind for c in memory.concepts} == {"structure", "routine"}


def test_arc_seed_covers_the_callable_types() -> None:
    memory = load_seed("arc")
    subtypes = {c.routine_subtype for c in memory.concepts}
    callable_types = {t.name for t in memory.types if t.definition.startswith("Callable")}
    # each callable type used as a parameter has at least one routine instantiating it
    used = {p.type for c in memory.concepts for p in c.parameters} & callable_types
    assert used - {"sort key"} <= subtypes
    assert "selection criteria" in used


@pytest.mark.parametrize("domain", ["arc", "aime"])
def test_seed_memory_is_reproducible(domain: str) -> None:
    assert dump_memory(load_seed(domain)) == dump_memory(load_seed(domain))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "arc.yaml"
    path.write_text(text)
    return path


GOOD_HEAD = 'domain: arc\ncreated: 2025-01-01T00:00:00Z\ntypes: ["color := int"]\n'


@pytest.mark.parametrize(
    ("text", "place", "expected"),
    [
        ("domain: arc\nconcepts: [\n", "line 3 column 1", "not valid YAML"),
        ("- just a list\n", "top level", "expected a mapping"),
        ("domain: arc\ncolour: red\n", "colour", "unknown key"),
        ("domain: aime\ncreated: 2025-01-01\n", "domain", "expected 'arc', got 'aime'"),
        ("domain: arc\ncreated: soon\n", "created", "expected an ISO timestamp"),
        (GOOD_HEAD.replace("color := int", "color"), "types[0]", "'name := definition'"),
        (
            GOOD_HEAD + "concepts:\n  - {name: draw line, kind: routine}\n  - {name: b, kind: x}",
            "concepts[1] ('b').kind",
            "'structure' or 'routine'",
        ),
        (
            GOOD_HEAD + "concepts:\n  - {name: draw line, kind: routine, colour: red}",
            "concepts[0] ('draw line').colour",
            "unknown field",
        ),
        (
            GOOD_HEAD
            + "concepts:\n  - name: draw line\n    kind: routine\n"
            + "    parameters: [{name: c, type: colour}]",
            "concepts[0] ('draw line').parameters[0].type",
            "type 'colour'",
        ),
        (
            GOOD_HEAD + "concepts:\n  - {name: Draw Lines, kind: routine}\n"
            "  - {name: draw line, kind: routine}",
            "concepts[1] ('draw line').name",
            "same concept as concepts[0]",
        ),
        (
            GOOD_HEAD + "concepts:\n  - {name: draw line, kind: routine, relations: [fill]}",
            "concepts[0] ('draw line').relations[0]",
            "'fill' is not a concept of this file",
        ),
        (GOOD_HEAD + "concepts:\n  - draw line\n", "concepts[0]", "expected a mapping"),
    ],
)
def test_bad_seed_files_name_file_and_place(
    tmp_path: Path, text: str, place: str, expected: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(SeedFileError) as caught:
        load_seed("arc", path)
    message = str(caught.value)
    assert "arc.yaml: " in message
    assert f": {place}: " in message
    assert expected in message


def test_unknown_domain_lists_the_available_ones() -> None:
    with pytest.raises(SeedFileError, match=r"does not exist \(seed domains available: .*arc"):
        load_seed("chess")
    assert seed_path("chess").name == "chess.yaml"


def test_seed_path_is_found_in_the_checkout() -> None:
    assert seed_path("arc").is_file()
