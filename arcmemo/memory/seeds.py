"""Seed ontologies: the hand-written type vocabularies and concepts in ``ontology/*.yaml``.

A seed file is YAML with four keys::

    domain: arc                     # must match the file's domain
    created: 2025-01-01T00:00:00Z   # timestamp given to every entry and history record
    types: ["color := int", "selection criteria := Callable[[object], bool]", ...]
    concepts: [{name, kind, routine_subtype, description, parameters, output_type,
                cues, implementation, relations}, ...]

Concepts are written through the memory's merge rules (typedef harvesting included) with
provenance sources ``["seed"]`` and authors ``["human"]``. Every timestamp comes from
``created`` rather than the clock, so ``arcmemo memory init`` is reproducible: the same
seed file always gives a byte-identical memory file.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from arcmemo.core.resources import data_dir
from arcmemo.memory.merge import write_concept
from arcmemo.memory.schema import Concept, Memory, TypeDef, concept_id, parse_typedef

SEED_SOURCE = "seed"
SEED_AUTHOR = "human"
_TOP_LEVEL_KEYS = ("domain", "created", "types", "concepts")
# id is derived from the name; provenance and stats are set by the loader.
_CONCEPT_KEYS = tuple(
    name for name in Concept.model_fields if name not in {"id", "provenance", "stats"}
)


class SeedFileError(ValueError):
    """A seed ontology file that cannot be used; names the file and the place in it."""

    def __init__(self, path: Path, where: str, what: str) -> None:
        self.path = path
        self.where = where
        self.what = what
        super().__init__(f"{_display(path)}: {where}: {what}")


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def available_domains() -> list[str]:
    """Domains that have a seed ontology (``ontology/<domain>.yaml``), sorted."""
    return sorted(p.stem for p in data_dir("ontology").glob("*.yaml"))


def seed_path(domain: str) -> Path:
    """Where the seed ontology of ``domain`` lives."""
    return data_dir("ontology") / f"{domain}.yaml"


def _read_yaml(path: Path, domain: str) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        known = ", ".join(available_domains()) or "none"
        raise SeedFileError(
            path, "file", f"does not exist (seed domains available: {known})"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise SeedFileError(path, "file", f"cannot be read: {error}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else "file"
        problem = getattr(error, "problem", None) or str(error)
        raise SeedFileError(path, where, f"not valid YAML: {problem}") from None
    if not isinstance(raw, dict):
        raise SeedFileError(path, "top level", f"expected a mapping, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(_TOP_LEVEL_KEYS), key=str)
    if unknown:
        raise SeedFileError(
            path, str(unknown[0]), f"unknown key; allowed: {', '.join(_TOP_LEVEL_KEYS)}"
        )
    if raw.get("domain") != domain:
        raise SeedFileError(path, "domain", f"expected {domain!r}, got {raw.get('domain')!r}")
    return raw


def _created(path: Path, value: Any) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            value = None
    if not isinstance(value, datetime):
        raise SeedFileError(
            path,
            "created",
            f"expected an ISO timestamp such as 2025-01-01T00:00:00Z, got {value!r}",
        )
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def _list(path: Path, raw: dict[str, Any], key: str) -> list[Any]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SeedFileError(path, key, f"expected a list, got {type(value).__name__}")
    return value


def _types(path: Path, entries: list[Any]) -> list[TypeDef]:
    types: list[TypeDef] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        parsed = parse_typedef(entry) if isinstance(entry, str) else None
        if parsed is None:
            raise SeedFileError(
                path, f"types[{index}]", f"expected 'name := definition', got {entry!r}"
            )
        name, definition = parsed
        if name.lower() in seen:
            raise SeedFileError(
                path,
                f"types[{index}]",
                f"type {name!r} already defined at types[{seen[name.lower()]}]",
            )
        seen[name.lower()] = index
        types.append(TypeDef(name=name, definition=definition))
    return types


def _location(location: tuple[Any, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in location)


def _concept(path: Path, index: int, entry: Any) -> Concept:
    if not isinstance(entry, dict):
        raise SeedFileError(
            path, f"concepts[{index}]", f"expected a mapping, got {type(entry).__name__}"
        )
    place = f"concepts[{index}]"
    if isinstance(entry.get("name"), str):
        place += f" ({entry['name']!r})"
    unknown = sorted(set(entry) - set(_CONCEPT_KEYS), key=str)
    if unknown:
        raise SeedFileError(
            path, f"{place}.{unknown[0]}", f"unknown field; allowed: {', '.join(_CONCEPT_KEYS)}"
        )
    try:
        return Concept.model_validate(entry)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = place + _location(tuple(first["loc"]))
        raise SeedFileError(path, where, f"{first['msg']}; got {first.get('input')!r}") from None


def _name_place(memory: Memory, where: str) -> str:
    """``concepts[3].output_type`` -> ``concepts[3] ('recolor object').output_type``."""
    if where.startswith("concepts["):
        index = int(where[len("concepts[") : where.index("]")])
        head, tail = where.split("]", 1)
        return f"{head}] ({memory.concepts[index].name!r}){tail}"
    return where


def load_seed(domain: str, path: Path | None = None) -> Memory:
    """Build the seed memory of ``domain`` from ``ontology/<domain>.yaml`` (or ``path``).

    Raises :class:`SeedFileError` naming the file and the place of the first problem: bad
    YAML, an unknown key, a wrong kind, a duplicate concept, a type that resolves to nothing
    or a relation naming no concept of the file.
    """
    path = Path(path) if path is not None else seed_path(domain)
    raw = _read_yaml(path, domain)
    created = _created(path, raw.get("created"))
    memory = Memory(domain=domain, types=_types(path, _list(path, raw, "types")))
    first_index: dict[str, int] = {}
    for index, entry in enumerate(_list(path, raw, "concepts")):
        concept = _concept(path, index, entry)
        if concept.id in first_index:
            raise SeedFileError(
                path,
                f"concepts[{index}] ({concept.name!r}).name",
                f"same concept as concepts[{first_index[concept.id]}] (id {concept.id!r})",
            )
        first_index[concept.id] = index
        write_concept(
            memory,
            concept,
            task_id=SEED_SOURCE,
            actor=SEED_AUTHOR,
            why=f"seed ontology {domain!r}",
            now=created,
            declare=False,
        )
    issues = memory.integrity_issues()
    if issues:
        where, what = issues[0]
        raise SeedFileError(path, _name_place(memory, where), what)
    for index, concept in enumerate(memory.concepts):
        for r_index, relation in enumerate(concept.relations):
            if concept_id(relation) not in first_index:
                raise SeedFileError(
                    path,
                    f"concepts[{index}] ({concept.name!r}).relations[{r_index}]",
                    f"{relation!r} is not a concept of this file",
                )
    return memory
