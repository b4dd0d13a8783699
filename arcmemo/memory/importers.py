"""Importing the published ArcMemo artifacts (matt-seb-ho/arc_memo) into an arcmemo memory.

Four kinds of file, from a checkout the user points at (the project ships none of them):

* ``memory.json`` (part ``memory``): a concept memory as the published code saves it
  (concepts keyed by name, ``used_in``, ``output_typing``, ``custom_types``, solutions);
* ``barc_init_mem.txt`` (part ``selection``): the rendered selection memory of the paper's
  PS runs (270 concepts: those used at least twice in full, the rest by name);
* ``prelim2.yaml`` and ``op3a.yaml`` (part ``annotations``): the hand-written preliminary
  concepts and annotated seed puzzles the paper's memory starts from;
* ``parsed_lessons.json`` (part ``lessons``): the open-ended lessons (pid -> lessons).

By default the memory keeps the paper's conventions (``Memory.conventions == "paper"``):
a concept is its exact name, so the 270 entries of ``barc_init_mem.txt`` are 270 concepts
(``draw objects`` and ``draw object`` stay two); each concept keeps its own inline
``name := definition`` types and the vocabulary is derived from them with conflicts
recorded; a parameter name holding alternatives (``mirror_axis | position``) is kept as
written; a parameter written again takes the later type and description, as the published
merge does, with the replaced value recorded. ``conventions="arcmemo"`` imports by
arcmemo's merge rules instead (near-duplicate names merge, inline typedefs are harvested
into the vocabulary, undeclared types are declared as ``Any``). Every quirk of the
published data that needed handling is counted in the :class:`ImportReport`.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError

from arcmemo.memory.merge import write_concept, write_lesson
from arcmemo.memory.schema import (
    Concept,
    Conventions,
    Lesson,
    Memory,
    Solution,
    TypeDef,
    utc_now,
)
from arcmemo.memory.types import split_inline_typedefs

AUTHOR = "arc-memo"
SOURCE = "arc-memo"
# The rendered selection memory has no used_in lists; the concepts it shows in full were
# used by at least two puzzles (the paper's threshold), recorded with this second source.
ESTABLISHED_SOURCE = "arc-memo:used-by-2+-puzzles"
PRELIM_SOURCE = "prelim"
PARTS = ("memory", "selection", "annotations", "lessons")
# Where each part lives in a checkout of the published repository.
CHECKOUT_FILES: dict[str, tuple[str, ...]] = {
    "selection": ("data/abstract_anno/op3/barc_init_mem.txt",),
    "annotations": ("data/abstract_anno/op3/prelim2.yaml", "data/abstract_anno/op3/op3a.yaml"),
    "lessons": ("data/lessons/from_trace_fs/parsed_lessons.json",),
    "memory": ("memory.json",),
}


class PublishedFileError(ValueError):
    """A file that cannot be imported; the message names it and says why."""


class ImportReport(BaseModel):
    """What an import read, wrote and had to fix."""

    files: list[str] = Field(default_factory=list, description="Files read, in order.")
    concepts_read: int = Field(default=0, description="Concept entries in the files.")
    concepts: int = Field(default=0, description="Concepts in the memory afterwards.")
    types: int = Field(default=0, description="Types in the memory afterwards.")
    lessons_read: int = Field(default=0, description="Lesson entries in the files.")
    lessons: int = Field(default=0, description="Lessons in the memory afterwards.")
    solutions: int = Field(default=0, description="Solutions in the memory afterwards.")
    skipped: list[str] = Field(default_factory=list, description="Entries not imported, why.")
    quirks: dict[str, int] = Field(
        default_factory=dict, description="Each quirk of the published data handled: count."
    )
    examples: dict[str, str] = Field(
        default_factory=dict, description="One example of each quirk, as found."
    )

    def note(self, quirk: str, example: str = "") -> None:
        self.quirks[quirk] = self.quirks.get(quirk, 0) + 1
        if example and quirk not in self.examples:
            self.examples[quirk] = example[:200]

    def lines(self) -> list[str]:
        """The report as text lines."""
        out = [f"read {', '.join(self.files)}"]
        out.append(
            f"concepts: {self.concepts_read} read -> {self.concepts} in the memory; "
            f"lessons: {self.lessons_read} read -> {self.lessons}; types: {self.types}; "
            f"solutions: {self.solutions}"
        )
        for quirk, count in sorted(self.quirks.items()):
            example = self.examples.get(quirk)
            out.append(
                f"quirk handled ({count}x): {quirk}" + (f" -- e.g. {example}" if example else "")
            )
        out += [f"skipped: {reason}" for reason in self.skipped]
        return out


# -- one concept entry --------------------------------------------------------------------

_TYPED = re.compile(r"^(?P<name>.+?)\s*\(type:\s*(?P<type>.*)\)\s*(?::\s*(?P<desc>.*))?$")
_ALIASES = {
    "concept": "name", "typing": "type", "output_typing": "output_type", "output": "output_type",
    "relevance_cues": "cues", "notes": "implementation", "used_in": "sources",
}  # fmt: skip
_CONCEPT_FIELDS = {"name", "kind", "routine_subtype", "description", "parameters", "output_type",
                   "cues", "implementation", "sources"}  # fmt: skip


def _text_item(item: Any, report: ImportReport, paper: bool = False) -> str:
    """A cue or implementation note as text (mappings and, except with ``paper``,
    stringified dicts turned back)."""
    if isinstance(item, dict):
        report.note("a list item parsed as a mapping (a colon in the text): joined back", str(item))
        return "; ".join(f"{k}: {v}" for k, v in item.items())
    text = str(item).strip()
    if paper and text.startswith("{") and text.endswith("}"):
        report.note("a stringified dict as a list item: kept as the paper shows it", text)
    elif text.startswith("{") and text.endswith("}"):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, dict):
            report.note("a stringified dict as a list item: written as 'key: value'", text)
            return "; ".join(f"{k}: {v}" for k, v in value.items())
    return text


def parse_parameter(value: Any, report: ImportReport, *, paper: bool = False) -> dict[str, Any]:
    """One published parameter: a mapping, ``name (type: T)``, or ``name | type - text``
    (with ``paper``, a string without ``(type: ...)`` is the name, as the published code
    stores it, and a name with alternatives is kept whole)."""
    if isinstance(value, dict):
        item = {_ALIASES.get(str(k), str(k)): v for k, v in value.items()}
        name = str(item.get("name") or "").strip()
    else:
        text = str(value).strip()
        typed = _TYPED.match(text)
        if typed:
            item = {"name": typed["name"], "type": typed["type"], "description": typed["desc"]}
            name = typed["name"].strip()
        elif paper:
            report.note("a parameter written as one string: kept as its name", text)
            item = {"name": text, "type": None, "description": None}
            name = text
        else:
            report.note("a parameter written as one string: split into name, type and text", text)
            head, _, description = text.partition(" - ")
            name, _, type_ = head.partition(" | ")
            item = {"name": name, "type": type_.strip() or None, "description": description or None}
            name = name.strip()
    if " | " in name and paper:
        report.note("a parameter name holding alternatives: kept as written", name)
    elif " | " in name:
        report.note("a parameter name holding alternatives: the first kept as the name", name)
        name = name.split(" | ")[0].strip()
    item["name"] = name
    for key in ("type", "description"):
        if item.get(key) is not None:
            item[key] = " ".join(str(item[key]).split()) or None
    return {k: item.get(k) for k in ("name", "type", "description")}


def _merge_duplicate_parameters(
    params: list[dict[str, Any]], where: str, report: ImportReport, paper: bool
) -> list[dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for param in params:
        old = merged.get(param["name"])
        if old is None:
            merged[param["name"]] = param
            continue
        if paper:
            report.note(
                "a parameter listed twice in one concept: the later kept",
                f"{where}: {param['name']}",
            )
            merged[param["name"]] = param
            continue
        report.note("a parameter listed twice in one concept: merged", f"{where}: {param['name']}")
        for key in ("type", "description"):
            old[key] = old[key] or param[key]
    return list(merged.values())


def concept_item(
    raw: dict[str, Any], report: ImportReport, *, name: str | None = None, paper: bool = False
) -> dict[str, Any]:
    """A published concept entry as the fields of a :class:`Concept` (plus ``sources``)."""
    item = {_ALIASES.get(str(k), str(k)): v for k, v in raw.items() if v is not None}
    if "output" in raw and "output_typing" not in raw:
        report.note("'output' used instead of 'output_typing'", str(item.get("name") or name))
    if name and not item.get("name"):
        item["name"] = name
    unknown = sorted(set(item) - _CONCEPT_FIELDS)
    for key in unknown:
        report.note("an unknown field: dropped", f"{item.get('name')}: {key}")
        item.pop(key)
    for key in ("cues", "implementation"):
        value = item.get(key) or []
        item[key] = [
            _text_item(v, report, paper) for v in (value if isinstance(value, list) else [value])
        ]
    params = item.get("parameters") or []
    if not isinstance(params, list):
        params = [params]
    item["parameters"] = _merge_duplicate_parameters(
        [parse_parameter(p, report, paper=paper) for p in params],
        str(item.get("name")),
        report,
        paper,
    )
    if item.get("kind") == "structure" and item.get("routine_subtype"):
        report.note("a routine_subtype on a structure: dropped", str(item.get("name")))
        item.pop("routine_subtype")
    for key in ("description", "output_type", "routine_subtype"):
        if key in item and not isinstance(item[key], str):
            item[key] = str(item[key])
    return item


def _note_typedefs(item: dict[str, Any], report: ImportReport) -> None:
    annotations = [item.get("output_type")] + [p.get("type") for p in item["parameters"]]
    for annotation in annotations:
        if not annotation or ":=" not in annotation:
            continue
        text, typedefs = split_inline_typedefs(annotation)
        if not typedefs:
            continue
        if len(typedefs) > 1 or text != typedefs[0][0]:
            report.note("a typedef nested inside an annotation: harvested", annotation)
        elif " " in typedefs[0][0]:
            report.note("a multi-word inline typedef: harvested", annotation)


def write_item(
    memory: Memory, item: dict[str, Any], report: ImportReport, *, now: Any
) -> str | None:
    """Write one converted entry through the merge rules; the concept id, or None."""
    name = str(item.get("name") or "").strip()
    sources = [str(s) for s in item.pop("sources", []) or []]
    existing = memory.find(name) if name else None
    paper = memory.conventions == "paper"
    if existing is not None:
        item.setdefault("kind", existing.kind)
        if existing.name != name and paper:
            report.note("a name differing only in case or spacing: the same concept", name)
        elif existing.name != name:
            report.note(
                "a near-duplicate name (case, spacing, plural) merged", f"{name} -> {existing.name}"
            )
    elif "kind" not in item:
        report.skipped.append(
            f"{name or '(no name)'}: a reference to a concept that is not in the memory"
        )
        return None
    if not paper:
        _note_typedefs(item, report)
    try:
        concept = Concept.model_validate({**item, "provenance": {"sources": sources}})
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        report.skipped.append(f"{name or '(no name)'}: {where}: {first['msg']}")
        return None
    result = write_concept(memory, concept, actor=AUTHOR, why="imported from arc-memo", now=now)
    for change in result.changes:
        if "declared as 'Any'" in change:
            report.note("a type used but never defined: declared as Any", change)
    for conflict in result.conflicts:
        kind = "a type redefined with another meaning: first kept, conflict recorded"
        if paper and conflict.startswith("type "):
            kind = "a concept's own type definition differs from the vocabulary's: both kept"
        elif paper and conflict.startswith("parameter "):
            kind = "a parameter written again: the later value kept (the paper's last-wins)"
        elif not conflict.startswith("type "):
            kind = "a field written twice with different values: first kept, conflict recorded"
        report.note(kind, conflict)
    return result.concept_id


# -- the files ---------------------------------------------------------------------------


def import_published_memory(path: Path, memory: Memory, report: ImportReport) -> None:
    """``memory.json`` as the published code saves it."""
    raw = _read_json(path)
    if not isinstance(raw, dict) or not isinstance(raw.get("concepts"), dict):
        raise PublishedFileError(
            f"{path}: expected a published memory (an object with 'concepts' by name)"
        )
    now = utc_now()
    for name, definition in (raw.get("custom_types") or {}).items():
        _custom_type(memory, str(name), str(definition), report)
    for name, entry in raw["concepts"].items():
        report.concepts_read += 1
        if not isinstance(entry, dict):
            report.skipped.append(f"{name}: not a mapping")
            continue
        item = concept_item(entry, report, name=str(name), paper=memory.conventions == "paper")
        write_item(memory, item, report, now=now)
    for pid, solution in (raw.get("solutions") or {}).items():
        if isinstance(solution, dict):
            memory.solutions[str(pid)] = Solution(
                summary=solution.get("summary") or "",
                pseudocode=solution.get("pseudocode") or "",
                program=solution.get("solution") or "",
            )


def _custom_type(memory: Memory, name: str, definition: str, report: ImportReport) -> None:
    if memory.conventions == "paper" and not re.match(r"^[A-Za-z_][\w ]*$", name):
        # The published harvester's regex made names such as 'list[symmetry'; the paper's
        # memory lists it so, and so does its import (the concepts keep the real definition).
        report.note("a malformed type name in the vocabulary: kept as the paper lists it", name)
    elif not re.match(r"^[A-Za-z_][\w ]*$", name):
        # The published harvester's regex made names such as 'list[symmetry'.
        _, typedefs = split_inline_typedefs(f"{name} := {definition}")
        report.note(
            "a malformed type name in the vocabulary: rebuilt from its text",
            f"{name} := {definition}",
        )
        if not typedefs:
            report.skipped.append(f"type {name!r}: not a name")
            return
        name, definition = typedefs[-1]
    known = {t.name.lower(): t for t in memory.types}
    if name.lower() in known:
        if " ".join(known[name.lower()].definition.split()) != " ".join(definition.split()):
            report.note(
                "a type defined twice: the first definition kept", f"{name} := {definition}"
            )
        return
    memory.types.append(TypeDef(name=name, definition=definition))


_SECTION = re.compile(r"^## (.+?)\s*$")
_SUBSECTION = re.compile(r"^### (.+?)\s*$")
_NAMES = re.compile(r"^- (lower usage concepts|other concepts): \[(.*)\]\s*$")


def parse_rendered_memory(
    text: str, report: ImportReport
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The concepts (as entries) and types of the published ``to_string`` rendering."""
    entries: list[dict[str, Any]] = []
    types: list[tuple[str, str]] = []
    section = subsection = ""
    current: dict[str, Any] | None = None
    field: str | None = None
    headings: list[str] = []

    def base(name: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": name.strip()}
        if section.startswith("structure"):
            entry["kind"] = "structure"
        elif section.startswith("grid manipulation"):
            entry.update(kind="routine", routine_subtype="grid manipulation")
        else:
            entry["kind"] = "routine"
            if subsection and subsection != "misc":
                entry["routine_subtype"] = subsection
        return entry

    for line in text.splitlines():
        if not line.strip():
            continue
        if match := _SECTION.match(line):
            section, subsection, current = match.group(1).lower(), "", None
            continue
        if match := _SUBSECTION.match(line):
            subsection, current = match.group(1).strip(), None
            headings.append(subsection)
            continue
        if section == "types" and line.startswith("- "):
            definition = line[2:]
            name, _, value = definition.partition(":=")
            types.append((name.strip(), value.strip()))
            continue
        if match := _NAMES.match(line):
            names = [n.strip() for n in match.group(2).split(", ") if n.strip()]
            if section.startswith("other routines") and subsection:
                report.note(
                    "lower-usage routines listed after the last subtype heading: subtype unknown",
                    f"{len(names)} names",
                )
                subsection = ""
            for name in names:
                entries.append({**base(name), "sources": [SOURCE], "_names_only": True})
            current = None
            continue
        if line.startswith("- concept: "):
            current = {**base(line[len("- concept: ") :]), "sources": [SOURCE, ESTABLISHED_SOURCE]}
            entries.append(current)
            field = None
            continue
        if current is None:
            report.note("a line outside any concept: ignored", line.strip())
            continue
        stripped = line.strip()
        if line.startswith("  ") and not line.startswith("    ") and ":" in stripped:
            key, _, value = stripped.partition(":")
            field = key.strip()
            if value.strip():
                current[field] = value.strip()
            else:
                current[field] = []
            continue
        if stripped.startswith("- ") and field and isinstance(current.get(field), list):
            current[field].append(stripped[2:])
        elif field and isinstance(current.get(field), list) and current[field]:
            current[field][-1] += " " + stripped  # a wrapped line
    used = {e.get("routine_subtype") for e in entries if not e.get("_names_only")}
    for heading in headings:
        if heading not in used and heading != "misc":
            report.note("a subtype heading with no concept under it (all of lower usage)", heading)
    return entries, types


def import_rendered_memory(path: Path, memory: Memory, report: ImportReport) -> None:
    """``barc_init_mem.txt``: the rendered selection memory."""
    text = _read_text(path)
    entries, types = parse_rendered_memory(text, report)
    if not entries:
        raise PublishedFileError(f"{path}: no '- concept:' entries; not a rendered ArcMemo memory")
    for name, definition in types:
        _custom_type(memory, name, definition, report)
    report.note("no used_in lists in a rendered memory: usage taken from full vs by-name")
    now = utc_now()
    for entry in entries:
        report.concepts_read += 1
        entry.pop("_names_only", None)
        item = concept_item(entry, report, paper=memory.conventions == "paper")
        write_item(memory, item, report, now=now)


def import_annotations(path: Path, memory: Memory, report: ImportReport) -> None:
    """``prelim2.yaml`` (a ``concepts`` list) or ``op3a.yaml`` (puzzle id -> annotation)."""
    raw = _read_yaml(path)
    now = utc_now()
    if isinstance(raw, dict) and isinstance(raw.get("concepts"), list):
        for entry in raw["concepts"]:
            report.concepts_read += 1
            if isinstance(entry, dict):
                item = concept_item(entry, report, paper=memory.conventions == "paper")
                item["sources"] = [PRELIM_SOURCE]
                write_item(memory, item, report, now=now)
        return
    if not isinstance(raw, dict):
        raise PublishedFileError(f"{path}: expected a mapping of puzzle ids or a 'concepts' list")
    for pid, annotation in raw.items():
        if not isinstance(annotation, dict):
            report.skipped.append(f"{pid}: not a mapping")
            continue
        for entry in annotation.get("concepts") or []:
            report.concepts_read += 1
            if isinstance(entry, str):
                entry = {"concept": entry}
            if isinstance(entry, dict):
                item = concept_item(entry, report, paper=memory.conventions == "paper")
                item["sources"] = [str(pid)]
                write_item(memory, item, report, now=now)
        memory.solutions[str(pid)] = Solution(
            summary=str(annotation.get("summary") or "").strip(),
            pseudocode=str(annotation.get("pseudocode") or "").strip(),
        )


def import_lessons(path: Path, memory: Memory, report: ImportReport) -> None:
    """``parsed_lessons.json``: puzzle id -> [{situation, suggestion}]."""
    raw = _read_json(path)
    if not isinstance(raw, dict):
        raise PublishedFileError(f"{path}: expected an object of puzzle id -> lessons")
    now = utc_now()
    for pid, lessons in raw.items():
        for entry in lessons if isinstance(lessons, list) else []:
            report.lessons_read += 1
            try:
                lesson = Lesson(
                    situation=str(entry.get("situation") or "").strip(),
                    suggestion=str(entry.get("suggestion") or "").strip(),
                )
            except (ValidationError, AttributeError):
                report.skipped.append(f"{pid}: a lesson without situation and suggestion")
                continue
            if not write_lesson(memory, lesson, task_id=str(pid), actor=AUTHOR, now=now):
                report.note("an identical lesson written twice: kept once", lesson.situation)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PublishedFileError(f"{path}: does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PublishedFileError(f"{path}: cannot be read: {error}") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as error:
        raise PublishedFileError(
            f"{path}: not valid JSON (line {error.lineno}: {error.msg})"
        ) from None


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(_read_text(path))
    except yaml.YAMLError as error:
        raise PublishedFileError(f"{path}: not valid YAML ({error})") from None


IMPORTERS = {
    "memory": import_published_memory,
    "selection": import_rendered_memory,
    "annotations": import_annotations,
    "lessons": import_lessons,
}


def part_of(path: Path) -> str:
    """Which part a file is, from its name or its content."""
    if path.suffix == ".txt":
        return "selection"
    if path.suffix in (".yaml", ".yml"):
        return "annotations"
    raw = _read_json(path)
    if isinstance(raw, dict) and isinstance(raw.get("concepts"), dict):
        return "memory"
    if isinstance(raw, dict) and all(isinstance(v, list) for v in raw.values()):
        return "lessons"
    raise PublishedFileError(
        f"{path}: not a published memory, rendered memory, annotation or lessons file"
    )


def files_for(path: Path, part: str | None) -> list[tuple[str, Path]]:
    """The (part, file) pairs to read for ``path`` (a file, or a checkout with ``part``)."""
    if path.is_file():
        return [(part or part_of(path), path)]
    if not path.is_dir():
        raise PublishedFileError(f"{path}: does not exist")
    if part is None:
        raise PublishedFileError(
            f"{path} is a folder: say which part to import ({', '.join(PARTS)})"
        )
    found = [(part, path / name) for name in CHECKOUT_FILES[part] if (path / name).is_file()]
    if not found:
        expected = ", ".join(CHECKOUT_FILES[part])
        raise PublishedFileError(f"{path}: no {part} file (looked for {expected})")
    return found


def import_arc_memo(
    paths: list[Path],
    *,
    part: str | None = None,
    domain: str = "arc",
    conventions: Conventions = "paper",
) -> tuple[Memory, ImportReport]:
    """A new memory from published ArcMemo files (in order) and the report of the import;
    ``conventions`` are the new memory's (the module docstring says what each keeps)."""
    memory = Memory(domain=domain, conventions=conventions)
    report = ImportReport()
    for path in paths:
        for file_part, file in files_for(path, part):
            report.files.append(str(file))
            IMPORTERS[file_part](file, memory, report)
    report.concepts = len(memory.concepts)
    report.types = len(memory.types)
    report.lessons = len(memory.lessons)
    report.solutions = len(memory.solutions)
    return memory, report
