"""Memory files on disk: validated loading, atomic locked saving, schema migrations.

A failed load never touches the file. A save writes a temporary file in the same folder,
fsyncs it, keeps the previous version as ``NAME.bak`` and renames the new file into place,
all under an exclusive lock on ``NAME.lock`` so two processes never interleave.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from arcmemo.core.bulk import paused_gc
from arcmemo.core.files import atomic_write_text, file_lock
from arcmemo.memory.checked import vouched_dump
from arcmemo.memory.edits import verifying
from arcmemo.memory.merge import merge_unique
from arcmemo.memory.schema import SCHEMA_VERSION, Memory, concept_id, parse_typedef
from arcmemo.memory.types import unresolved
from arcmemo.memory.untrusted import MAX_FILE_BYTES, bound_problems, unsafe_in_text


class MemoryFileError(ValueError):
    """A memory file that cannot be used; the message names the file and each bad place."""

    headline = "invalid memory file"

    def __init__(self, path: Path, problems: list[tuple[str, str]]) -> None:
        self.path = path
        self.problems = problems
        lines = [f"{path}: {self.headline}"]
        lines += [f"  at {where}: {what}" for where, what in problems]
        super().__init__("\n".join(lines))


class MemorySaveError(MemoryFileError):
    """A memory that was not saved because the file would not load again."""

    headline = "not saved: the memory would not load again (the file is unchanged)"


def _json_path(location: tuple[Any, ...]) -> str:
    path = "$"
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _describe(raw: Any, location: tuple[Any, ...]) -> str:
    """A hint naming the concept an error sits in, e.g. " (concept 'recolor object')"."""
    if len(location) >= 2 and location[0] == "concepts" and isinstance(location[1], int):
        try:
            name = raw["concepts"][location[1]].get("name")
        except (KeyError, IndexError, TypeError, AttributeError):
            return ""
        return f" (concept {name!r})" if name else ""
    return ""


def validation_problems(raw: Any, error: ValidationError) -> list[tuple[str, str]]:
    """Turn pydantic errors into ``(json path, message with the offending value)`` pairs."""
    problems = []
    for item in error.errors(include_url=False):
        location = tuple(item["loc"])
        value = item.get("input")
        shown = (
            json.dumps(value)[:80] if not isinstance(value, (dict, list)) else type(value).__name__
        )
        message = f"{item['msg']}{_describe(raw, location)}; got {shown}"
        problems.append((_json_path(location), message))
    return problems


# Each migration turns a raw dict of version N into one of version N + 1.
Migration = Callable[[dict[str, Any]], dict[str, Any]]


def _published_parameter(param: Any) -> dict[str, Any]:
    if isinstance(param, str):
        param = {"name": param}
    return {
        "name": param.get("name") or "?",
        "type": param.get("typing"),
        "description": param.get("description"),
    }


def _published_concept(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    kind = entry.get("kind")
    return {
        "name": entry.get("name") or name,
        "kind": kind,
        "routine_subtype": entry.get("routine_subtype") if kind == "routine" else None,
        "description": entry.get("description") or "",
        "parameters": [_published_parameter(p) for p in entry.get("parameters") or []],
        "output_type": entry.get("output_typing") or entry.get("output"),
        "cues": [str(c) for c in entry.get("cues") or []],
        "implementation": [str(n) for n in entry.get("implementation") or []],
        "provenance": {"sources": [str(s) for s in entry.get("used_in") or []], "authors": []},
    }


def _merge_published(first: dict[str, Any], later: dict[str, Any]) -> None:
    """Fold a near-duplicate published entry (same id, other spelling) into ``first``.

    The published code keyed concepts by exact name, so "recolor object" and "Recolor
    Objects" could both exist; here they are one id. Same rules as a merge: fill only
    missing fields, de-duplicate lists, accumulate sources.
    """
    for field in ("description", "routine_subtype", "output_type"):
        if not first[field] and later[field] and first["kind"] == later["kind"]:
            first[field] = later[field]
    by_name = {p["name"]: p for p in first["parameters"]}
    for param in later["parameters"]:
        old = by_name.get(param["name"])
        if old is None:
            first["parameters"].append(param)
            by_name[param["name"]] = param
            continue
        for field in ("type", "description"):
            old[field] = old[field] or param[field]
    for field in ("cues", "implementation"):
        first[field] = merge_unique(first[field], later[field])
    first["provenance"]["sources"] = merge_unique(
        first["provenance"]["sources"], later["provenance"]["sources"]
    )


def _published_types(
    concepts: list[dict[str, Any]], custom: dict[str, Any]
) -> list[dict[str, str]]:
    """The type vocabulary of a published memory, made complete.

    Inline ``name := definition`` annotations (which the published code did not harvest
    when the name had spaces) become typedefs; names the published memory used without
    ever defining them (``grid``, ``color``, ...) are declared as opaque ``Any`` types so
    the file loads and the vocabulary shows what is undefined.
    """
    types = {str(name): str(definition) for name, definition in custom.items()}
    annotated = [p for c in concepts for p in c["parameters"]] + concepts
    for holder in annotated:
        key = "type" if "type" in holder else "output_type"
        parsed = parse_typedef(holder[key]) if isinstance(holder.get(key), str) else None
        if parsed is not None:
            types.setdefault(parsed[0], parsed[1])
            holder[key] = parsed[0]
    annotations = [h.get("type") or h.get("output_type") or "" for h in annotated]
    missing: list[str] = []
    for annotation in [*annotations, *types.values()]:
        missing += unresolved(annotation, [*types, *missing])
    types.update({name: "Any" for name in missing})
    return [{"name": n, "definition": d} for n, d in types.items()]


# The top-level keys of the published ArcMemo ``memory.json`` (version 0).
PUBLISHED_KEYS = ("concepts", "solutions", "custom_types")


def _check_published_keys(raw: dict[str, Any]) -> None:
    """A file without ``schema_version`` is read as the published format only if it looks
    like one: an ARC task file or ``{}`` is not a memory, whatever it would migrate to."""
    if "concepts" not in raw:
        found = ", ".join(sorted(map(str, raw))) or "none"
        raise ValueError(
            "the file has no schema_version and no 'concepts', so it is neither an arcmemo "
            f"memory nor a published (version 0) one (its top-level keys: {found})"
        )
    unknown = sorted(str(key) for key in raw if key not in PUBLISHED_KEYS)
    if unknown:
        raise ValueError(
            "the file has no schema_version, so it was read as the published (version 0) "
            f"format, which has no key {', '.join(map(repr, unknown))} (it has "
            f"{', '.join(PUBLISHED_KEYS)})"
        )


def _from_published_format(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 0: the published ArcMemo ``memory.json`` (concepts keyed by name, ``used_in``,
    ``output_typing``, ``custom_types``) becomes version 1."""
    _check_published_keys(raw)
    published = raw.get("concepts") or {}
    if not isinstance(published, dict):
        raise ValueError(
            "the file has no schema_version, so it was read as the published (version 0) "
            f"format, but its 'concepts' is a {type(published).__name__}, not an object keyed "
            'by name; add "schema_version": 1 if it is an arcmemo memory'
        )
    concepts: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for name, entry in published.items():
        concept = _published_concept(name, entry)
        key = concept_id(str(concept["name"]))
        if key and key in by_id:
            _merge_published(by_id[key], concept)
            continue
        by_id[key] = concept
        concepts.append(concept)
    solutions = {
        pid: {
            "summary": s.get("summary") or "",
            "pseudocode": s.get("pseudocode") or "",
            "program": s.get("solution") or "",
        }
        for pid, s in (raw.get("solutions") or {}).items()
    }
    return {
        "schema_version": 1,
        "domain": "arc",
        "types": _published_types(concepts, raw.get("custom_types") or {}),
        "concepts": concepts,
        "solutions": solutions,
    }


def _with_conventions(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 2 names the memory's conventions; every earlier memory was arcmemo's."""
    return {**raw, "schema_version": 2, "conventions": "arcmemo"}


def _with_functions(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 3 lets a concept carry executable library functions; none did before."""
    return {**raw, "schema_version": 3}


def _with_failure_fields(raw: dict[str, Any]) -> dict[str, Any]:
    """Version 4 lets a pitfall name the concept it guards (``Lesson.guards``), a library
    function say which failed task's hindsight it came from, and an entry's stats count
    citations (``cited``, ``cited_solved``); no entry had them before."""
    return {**raw, "schema_version": 4}



MIGRATIONS: dict[int, Migration] = {
    0: _from_published_format,
    1: _with_conventions,
    2: _with_functions,
    3: _with_failure_fields,
}


def migrate(raw: dict[str, Any]) -> dict[str, Any]:
    """Bring a raw memory dict up to :data:`SCHEMA_VERSION` (files without a version are 0)."""
    version = raw.get("schema_version", 0)
    if (
        not isinstance(version, int)
        or isinstance(version, bool)
        or not 0 <= version <= SCHEMA_VERSION
    ):
        raise ValueError(
            f"schema_version {version!r} is not supported (this arcmemo reads up to "
            f"{SCHEMA_VERSION}); upgrade arcmemo"
        )
    while version < SCHEMA_VERSION:
        raw = MIGRATIONS[version](raw)
        version = raw["schema_version"]
    return raw


def parse_memory(text: str, path: Path) -> Memory:
    """Validate memory JSON text; ``path`` is only used in messages."""
    with paused_gc():
        return _parse_memory(text, path)


def _parse_memory(text: str, path: Path) -> Memory:
    try:
        raw = json.loads(text)
    except RecursionError:
        raise MemoryFileError(path, [("$", "not valid JSON: nested too deeply")]) from None
    except json.JSONDecodeError as error:
        # json reports a string cut off by the end of the file at the string's start.
        truncated = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated")
        hint = " (the file looks truncated)" if truncated else ""
        raise MemoryFileError(
            path,
            [(f"line {error.lineno} column {error.colno}", f"not valid JSON: {error.msg}{hint}")],
        ) from None
    if not isinstance(raw, dict):
        raise MemoryFileError(path, [("$", f"expected a JSON object, got {type(raw).__name__}")])
    too_big = bound_problems(raw)
    if too_big:
        raise MemoryFileError(path, too_big)
    try:
        raw = migrate(raw)
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise MemoryFileError(path, [("$.schema_version", str(error))]) from None
    try:
        memory = Memory.model_validate(raw)
    except ValidationError as error:
        raise MemoryFileError(path, validation_problems(raw, error)) from None
    issues = memory.integrity_issues()
    if issues:
        raise MemoryFileError(path, [(f"$.{where}", what) for where, what in issues])
    return memory


def load_memory(path: Path) -> Memory:
    """Load and validate the memory at ``path`` (read only: the file is never modified)."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise MemoryFileError(
                path, [("file", f"{size} bytes, over the {MAX_FILE_BYTES} a memory file may be")]
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MemoryFileError(path, [("file", "does not exist")]) from None
    except OSError as error:
        raise MemoryFileError(path, [("file", f"cannot be read: {error.strerror}")]) from None
    except UnicodeDecodeError as error:
        raise MemoryFileError(path, [(f"byte {error.start}", "not UTF-8 text")]) from None
    return parse_memory(text, path)


def dump_memory(memory: Memory) -> str:
    """The canonical JSON text of a memory (stable key order, two-space indent)."""
    return memory.model_dump_json(indent=2) + "\n"


def checked_dump(memory: Memory, path: Path) -> str:
    """:func:`dump_memory`, refused with :class:`MemorySaveError` when the text would not
    load again (so a save can never write a file that ``load`` rejects).

    Concepts validated by the previous check are not validated again
    (:mod:`arcmemo.memory.checked`); what that cannot vouch for is parsed whole."""
    with paused_gc():
        vouched = vouched_dump(memory)
    unsafe = unsafe_in_text(vouched) if vouched is not None else []
    if unsafe:
        raise MemorySaveError(path, unsafe)
    if vouched is not None and not verifying():
        return vouched
    text = dump_memory(memory)
    unsafe = unsafe_in_text(text)
    if unsafe:
        raise MemorySaveError(path, unsafe)
    try:
        parse_memory(text, path)
    except MemoryFileError as error:
        if vouched is not None:
            raise AssertionError(f"vouched for a memory that does not load: {error}") from None
        raise MemorySaveError(path, error.problems) from None
    if vouched is not None and vouched != text:
        raise AssertionError("the vouched text differs from the memory's dump")
    return text


def save_memory(memory: Memory, path: Path) -> None:
    """Save ``memory`` atomically under the file lock, keeping ``NAME.bak``."""
    save_checked_text(checked_dump(memory, path), path)


def save_checked_text(text: str, path: Path) -> None:
    """Save a memory's :func:`checked_dump` text as :func:`save_memory` does (for a caller
    that writes the same text elsewhere too: checking it parses the whole memory again)."""
    with file_lock(path):
        atomic_write_text(path, text, backup=True)


@contextlib.contextmanager
def editing(path: Path) -> Iterator[Memory]:
    """Load, let the caller change, and save a memory while holding its lock.

    Use this for read-modify-write from several processes; nothing is saved when the
    block raises.
    """
    with file_lock(path):
        memory = load_memory(path)
        yield memory
        atomic_write_text(path, checked_dump(memory, path), backup=True)
