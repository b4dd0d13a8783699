"""The typed concept ontology: the records a memory is made of.

A :class:`Memory` holds typed, parameterized :class:`Concept` entries (program-synthesis
format), open-ended :class:`Lesson` entries, a free-text cheatsheet (the Dynamic Cheatsheet
baseline), a type vocabulary, verified solutions and an append-only history. The JSON
schema of these models (``arcmemo memory schema``) is the documentation of the file format,
so every field carries a description.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationInfo,
    field_validator,
    model_validator,
)

from arcmemo.memory.edits import CLOCK, Tracked, TrackedList, TrackedListField, list_index
from arcmemo.memory.types import unresolved, vocabulary

SCHEMA_VERSION = 4
ConceptKind = Literal["structure", "routine"]
# How a memory names and types its concepts: "arcmemo" merges near-duplicate names and
# keeps every type definition in the vocabulary; "paper" keeps the published code's rules
# (a concept is its exact name; a concept keeps its own inline ``name := definition``
# types), which an import of the paper's memory needs to stay the paper's memory.
Conventions = Literal["arcmemo", "paper"]

_TYPEDEF = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*:=\s*(.+?)\s*$", re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+")


def utc_now() -> datetime:
    """The current time, timezone-aware UTC (one place, so tests can reason about it)."""
    return datetime.now(timezone.utc).replace(microsecond=0)


@lru_cache(maxsize=1 << 16)  # a memory's names share a small vocabulary of words
def _singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


DISPLAY_COPY = "display copy"
"""The validation context key of a memory copy made only to be shown."""


@lru_cache(maxsize=1 << 17)  # names repeat: every load, merge and lookup derives them
def concept_id(name: str) -> str:
    """The stable id of a concept name: lower-case words, singular, joined by hyphens.

    "Extract Objects", "extract  object" and "extract_objects" all map to "extract-object",
    so near-duplicate names written by a model land on one entry.
    """
    return "-".join(map(_singular, _WORD.findall(name.lower().replace("_", " "))))


@lru_cache(maxsize=1 << 16)
def exact_id(name: str) -> str:
    """The id of a name under the paper's conventions: its lower-case words joined by
    hyphens, nothing made singular ("draw objects" and "draw object" stay two concepts, as
    the published code keeps them)."""
    return "-".join(_WORD.findall(name.lower().replace("_", " ")))


def parse_typedef(text: str) -> tuple[str, str] | None:
    """Split ``"name := definition"`` into its parts; ``None`` when ``text`` is no typedef.

    Type names may contain spaces (``selection criteria := Callable[[object], bool]``).
    """
    match = _TYPEDEF.match(text)
    if match is None:
        return None
    return " ".join(match.group(1).split()), match.group(2).strip()


class Parameter(Tracked):
    """One parameter of a routine (or one configurable aspect of a structure)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Parameter name, unique within its concept.")
    type: str | None = Field(
        default=None,
        description="Python-like type annotation using the memory's type vocabulary, "
        "e.g. 'list[object]' or 'selection criteria'.",
    )
    description: str | None = Field(default=None, description="What the parameter controls.")


class TypeDef(BaseModel):
    """A named type of the vocabulary, written ``name := definition``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Type name; may contain spaces.")
    definition: str = Field(
        min_length=1, description="Its definition, e.g. 'Callable[[object], bool]'."
    )


class Provenance(Tracked):
    """Where an entry came from."""

    model_config = ConfigDict(extra="forbid")

    sources: TrackedListField[str] = Field(
        default_factory=TrackedList,
        description="Task ids whose solutions wrote or extended this entry ('seed' for the "
        "hand-written seed ontology).",
    )
    authors: TrackedListField[str] = Field(
        default_factory=TrackedList,
        description="Who wrote it: 'provider:model' specs of models, or 'human'.",
    )
    created_at: datetime = Field(default_factory=utc_now, description="First written (UTC).")
    updated_at: datetime = Field(default_factory=utc_now, description="Last changed (UTC).")


class ConceptStats(Tracked):
    """How an entry has been used by selection."""

    model_config = ConfigDict(extra="forbid")

    selected: int = Field(
        default=0,
        ge=0,
        description="Tasks a selector picked it for whose prompt showing it the solver "
        "answered (a prompt too long for the window, or whose call failed, does not count).",
    )
    selected_solved: int = Field(
        default=0,
        ge=0,
        description="Of those, the tasks whose solution the write signal then confirmed "
        "(train pairs by default: never test labels unless the run says it leaks).",
    )
    cited: int = Field(
        default=0,
        ge=0,
        description="Of the selected tasks, those whose answered steps cited it as used "
        "(runs with --cite; a citation of an entry the prompt did not show never counts).",
    )
    cited_solved: int = Field(
        default=0,
        ge=0,
        description="Of those, the tasks whose solution the write signal then confirmed.",
    )
    # Attribution (arcmemo.memory.attribution documents the three verdicts); one task id per
    # attributed selection, so the counts are the lengths of these lists.
    helpful: TrackedListField[str] = Field(
        default_factory=TrackedList,
        description="Tasks where it was shown and the confirmed solution used it.",
    )
    unused: TrackedListField[str] = Field(
        default_factory=TrackedList,
        description="Tasks where it was shown and no attributed solution used it.",
    )
    harmful: TrackedListField[str] = Field(
        default_factory=TrackedList,
        description="Tasks where it was shown, an attempt used it, and no solution was confirmed.",
    )


class RecordedCall(BaseModel):
    """One call of a library function seen while a verified program ran on real inputs:
    the arguments it got and the result it gave (a unit test that was never made up)."""

    model_config = ConfigDict(extra="forbid")

    args: list[JsonValue] = Field(
        default_factory=list, description="Positional arguments, as encoded JSON values."
    )
    kwargs: dict[str, JsonValue] = Field(
        default_factory=dict, description="Keyword arguments, as encoded JSON values."
    )
    result: JsonValue = Field(default=None, description="The returned value, encoded.")
    task_id: str | None = Field(
        default=None, description="Task whose program's execution recorded the call."
    )


LIBRARY_MODULE = "arcmemo_library"
"""The module programs import library functions from (built per task in the sandbox)."""


class LibraryFunction(Tracked):
    """An executable implementation of a routine concept: a self-contained Python function
    that programs may import from ``arcmemo_library``, with the calls recorded when it
    ran inside verified programs as its tests."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Python name programs import; unique across the memory.",
    )
    source: str = Field(
        min_length=1,
        description="The function's source (a def with its docstring), runnable on its own "
        "or with the library functions it calls by name.",
    )
    signature: str = Field(
        default="", description="Its typed signature, e.g. '(grid: Grid) -> Grid'."
    )
    docstring: str = Field(default="", description="What it does, as shown in prompts.")
    tests: TrackedListField[RecordedCall] = Field(
        default_factory=TrackedList, description="Recorded calls that it must reproduce."
    )
    sources: TrackedListField[str] = Field(
        default_factory=TrackedList,
        description="Tasks whose verified programs it was extracted from (a task never "
        "sees a function that came from its own solution).",
    )
    imported_by: TrackedListField[str] = Field(
        default_factory=TrackedList,
        description="Tasks whose verified programs imported it (credit by import).",
    )
    hindsight: list[str] = Field(
        default_factory=list,
        description="Tasks whose failed program, still running on every input, it came from: "
        "it is right for the hindsight task that program's outputs define (its source "
        "'hindsight:<task id>'), never for these tasks.",
    )

    @property
    def only_hindsight(self) -> bool:
        """Whether every program it came from is a hindsight program (none verified)."""
        return bool(self.sources) and all(s.startswith("hindsight:") for s in self.sources)


class Concept(Tracked):
    """A typed, parameterized concept (program-synthesis format).

    ``structure`` concepts are visual or mathematical entities to look for; ``routine``
    concepts are operations. Routines are grouped by ``routine_subtype``: ``grid
    manipulation`` (produces a grid), ``intermediate`` (computes a value used by others), or
    the name of a callable type they instantiate (``selection criteria``), which is how
    higher-order routines find the concepts that fill their parameters.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default="", description="Stable id: normalized slug of the name (derived).")
    name: str = Field(min_length=1, description="Human-readable title; unique up to its id.")
    kind: ConceptKind = Field(
        description="'structure' (something to see) or 'routine' (an operation)."
    )
    routine_subtype: str | None = Field(
        default=None,
        description="Routines only: 'grid manipulation', 'intermediate', or the callable type "
        "name this routine instantiates (e.g. 'selection criteria').",
    )
    description: str = Field(default="", description="What the concept is, in a sentence or two.")
    parameters: TrackedListField[Parameter] = Field(
        default_factory=TrackedList, description="Typed parameters."
    )
    output_type: str | None = Field(default=None, description="Type of the result (routines).")
    cues: TrackedListField[str] = Field(
        default_factory=TrackedList,
        description="Relevance cues: what in a problem suggests this concept.",
    )
    implementation: TrackedListField[str] = Field(
        default_factory=TrackedList, description="Implementation notes and hints."
    )
    relations: TrackedListField[str] = Field(
        default_factory=TrackedList,
        description="Names of concepts this one uses or is used by (beyond what types imply).",
    )
    functions: TrackedListField[LibraryFunction] = Field(
        default_factory=TrackedList,
        description="Executable implementations (routines), importable from arcmemo_library.",
    )
    provenance: Provenance = Field(default_factory=Provenance, description="Origin of the entry.")
    stats: ConceptStats = Field(default_factory=ConceptStats, description="Selection statistics.")
    retired: str | None = Field(
        default=None,
        description="Why it was retired (arcmemo memory prune); a retired concept stays in "
        "the file and its history but is never rendered or selected.",
    )
    merged_from: TrackedListField[str] = Field(
        default_factory=TrackedList,
        description="Names of near-duplicate concepts consolidated into this one.",
    )

    def __setattr__(self, name: str, value: object) -> None:
        if name == "id":  # every id index must see it (concept_positions)
            CLOCK.id_assigned()
        super().__setattr__(name, value)

    @field_validator("name")
    @classmethod
    def _clean_name(cls, name: str) -> str:
        cleaned = " ".join(name.split())
        if not concept_id(cleaned):
            raise ValueError(f"name {name!r} has no letters or digits")
        return cleaned

    @model_validator(mode="after")
    def _derive_id(self, info: ValidationInfo) -> Concept:
        expected = concept_id(self.name)
        # A display copy (memory.untrusted) shows a name's unsafe characters as escapes that
        # the id, made of the name's words, never held.
        shown = bool(info.context and info.context.get(DISPLAY_COPY))
        if self.id and not shown and self.id not in (expected, exact_id(self.name)):
            raise ValueError(
                f"id {self.id!r} does not match name {self.name!r} (expected {expected!r})"
            )
        if not self.id:
            # Not an edit: a concept being built is in no list (nor any index) yet.
            BaseModel.__setattr__(self, "id", expected)
        if self.kind == "structure" and self.routine_subtype:
            raise ValueError("routine_subtype is only allowed on routines, not structures")
        names = [p.name for p in self.parameters]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate parameter names: {', '.join(duplicates)}")
        return self

    @property
    def usage(self) -> int:
        """How established the concept is: distinct source tasks plus solved selections."""
        return len(set(self.provenance.sources)) + self.stats.selected_solved

    def type_references(self) -> list[str]:
        """The type expressions this concept mentions (parameter and output types)."""
        refs = [p.type for p in self.parameters if p.type]
        if self.output_type:
            refs.append(self.output_type)
        return refs


class Lesson(BaseModel):
    """An open-ended lesson: when you see a situation, try a suggestion."""

    model_config = ConfigDict(extra="forbid")

    situation: str = Field(min_length=1, description="What to observe that signals the lesson.")
    suggestion: str = Field(min_length=1, description="What to try in that situation.")
    kind: Literal["lesson", "pitfall"] = Field(
        default="lesson",
        description="'pitfall': learned from a failed attempt's train feedback (what went "
        "wrong and what to do instead); rendered with a 'Pitfall:' mark.",
    )
    guards: str | None = Field(
        default=None,
        description="The concept (or lesson situation) a pitfall guards against misusing "
        "or missing: set by contrastive abstraction.",
    )
    provenance: Provenance = Field(default_factory=Provenance, description="Origin of the lesson.")
    stats: ConceptStats = Field(default_factory=ConceptStats, description="Selection statistics.")


class Solution(BaseModel):
    """A verified solution a memory was written from."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(default="", description="One-line summary of the rule.")
    pseudocode: str = Field(default="", description="Pseudocode written before abstraction.")
    program: str = Field(default="", description="The verified program or worked solution.")
    problem: str = Field(
        default="", description="The problem as text (kept by the cheatsheet format for DC-RS)."
    )


class HistoryEntry(BaseModel):
    """One operation on the memory (append-only log)."""

    model_config = ConfigDict(extra="forbid")

    op: Literal[
        "add",
        "merge",
        "delete",
        "lesson",
        "cheatsheet",
        "solution",
        "conflict",
        "stats",
        "retire",
        "consolidate",
    ] = Field(description="What happened.")
    target: str = Field(description="Concept id, lesson index or other object affected.")
    task_id: str | None = Field(default=None, description="Task whose solution caused it, if any.")
    actor: str = Field(
        default="human", description="'provider:model' of the writing model, or 'human'."
    )
    at: datetime = Field(default_factory=utc_now, description="When (UTC).")
    why: str | None = Field(default=None, description="Free-text reason.")
    changes: list[str] = Field(
        default_factory=list, description="Field-level changes or conflicts."
    )


def _positions(concepts: Sequence[Concept]) -> dict[str, int]:
    positions: dict[str, int] = {}
    for position, concept in enumerate(concepts):
        positions.setdefault(concept.id, position)  # the first of an id wins
    return positions


POSITIONS = "concept positions by id"


def ids_stamp() -> int:
    """How many times a concept's id was assigned (an id index is kept for one value)."""
    return CLOCK.ids


def concept_positions(concepts: Sequence[Concept]) -> dict[str, int]:
    """The memory's index: the position of each concept id in ``concepts`` (the first, when
    ids repeat in a list that would not load).

    A memory's concept list keeps it until the list changes
    (:func:`arcmemo.memory.edits.list_index`) or some concept's id is assigned (ids are
    derived from names when a concept is built; assigning one is rare), so edits inside a
    concept leave it valid. A write that appends or replaces a concept updates it in place
    (:func:`arcmemo.memory.merge.write_concept`), so adding to a memory costs the same
    at any size. Other callers must not change the mapping.
    """
    return list_index(concepts, POSITIONS, _positions, stamp=ids_stamp())


class Memory(Tracked):
    """A whole memory: what ``arcmemo`` stores in one JSON file."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=SCHEMA_VERSION, description="Version of this file format.")
    domain: str = Field(default="arc", description="Problem domain: 'arc', 'aime', or any string.")
    conventions: Conventions = Field(
        default="arcmemo",
        description="'arcmemo': near-duplicate names (case, spacing, plural) are one concept "
        "and inline type definitions move into 'types'. 'paper': the published code's rules, "
        "kept by imports of its memory: a concept is its exact name (ids made by lower-casing "
        "only), each concept keeps its own inline 'name := definition' types ('types' is "
        "derived from them, conflicts recorded), and types need not be defined.",
    )
    types: list[TypeDef] = Field(default_factory=list, description="Type vocabulary.")
    concepts: TrackedListField[Concept] = Field(
        default_factory=TrackedList, description="Program-synthesis concepts."
    )
    lessons: list[Lesson] = Field(default_factory=list, description="Open-ended lessons.")
    cheatsheet: str = Field(
        default="", description="Free-text sheet (Dynamic Cheatsheet baseline)."
    )
    solutions: dict[str, Solution] = Field(
        default_factory=dict, description="Verified solutions by task id."
    )
    history: list[HistoryEntry] = Field(default_factory=list, description="Append-only log.")

    # -- queries -------------------------------------------------------------------------

    def find(self, name: str) -> Concept | None:
        """The concept whose id matches ``name`` (any spelling), or None (the first, when
        ids repeat in a list that would not load)."""
        # Attribution and the report's memory view look up every concept shown or kept: a
        # scan each was quadratic in the memory.
        position = concept_positions(self.concepts).get(self.key(name))
        return None if position is None else self.concepts[position]

    def key(self, name: str) -> str:
        """The id ``name`` has in this memory (its conventions decide what is one name)."""
        return exact_id(name) if self.conventions == "paper" else concept_id(name)

    def type_names(self) -> list[str]:
        """Names of the type vocabulary."""
        return [t.name for t in self.types]

    def relations(self) -> dict[str, list[str]]:
        """Related concept names by concept id: the written ``relations`` plus those the
        types imply.

        A routine whose ``routine_subtype`` is a callable type (``selection criteria``) is
        related to every concept with a parameter of that type, both ways: it can fill
        that parameter. This is how the paper's higher-order routines find their arguments.
        Written names come first, then the implied ones, most useful first (see
        :mod:`arcmemo.memory.relations`, which indexes them once per memory version).
        """
        from arcmemo.memory.relations import relation_index

        index = relation_index(self)
        return {c.id: index.related(c)[0] for c in self.concepts}

    def integrity_issues(self) -> list[tuple[str, str]]:
        """Problems schema validation cannot see: ``(json path, message)`` pairs.

        Duplicate concept ids, duplicate type names and type references that resolve to
        nothing in the vocabulary.
        """
        issues: list[tuple[str, str]] = []
        first_index: dict[str, int] = {}
        for index, concept in enumerate(self.concepts):
            if concept.id in first_index:
                issues.append(
                    (
                        f"concepts[{index}].name",
                        f"duplicate concept id {concept.id!r} ({concept.name!r}); "
                        f"already used by concepts[{first_index[concept.id]}]",
                    )
                )
            else:
                first_index[concept.id] = index
            if concept.id != self.key(concept.name):
                issues.append(
                    (
                        f"concepts[{index}].id",
                        f"id {concept.id!r} of {concept.name!r} is not the id the memory's "
                        f"{self.conventions!r} conventions give it ({self.key(concept.name)!r})",
                    )
                )
        function_owner: dict[str, str] = {}
        for index, concept in enumerate(self.concepts):
            for f_index, function in enumerate(concept.functions):
                if function.name in function_owner:
                    issues.append(
                        (
                            f"concepts[{index}].functions[{f_index}].name",
                            f"library function {function.name!r} is already defined by "
                            f"{function_owner[function.name]!r} (programs import by name)",
                        )
                    )
                else:
                    function_owner[function.name] = concept.name
        if self.conventions == "paper":
            return issues  # the paper's types are open: used without definitions, inline
        seen_types: set[str] = set()
        for index, typedef in enumerate(self.types):
            if typedef.name.lower() in seen_types:
                issues.append((f"types[{index}].name", f"duplicate type {typedef.name!r}"))
            seen_types.add(typedef.name.lower())
        known = vocabulary(self.type_names())
        for index, typedef in enumerate(self.types):
            for name in unresolved(typedef.definition, known):
                issues.append(
                    (f"types[{index}].definition", f"type {name!r} is not defined in 'types'")
                )
        for index, concept in enumerate(self.concepts):
            for p_index, param in enumerate(concept.parameters):
                for name in unresolved(param.type or "", known):
                    issues.append(
                        (
                            f"concepts[{index}].parameters[{p_index}].type",
                            f"type {name!r} (in {concept.name!r}) is not defined in 'types'",
                        )
                    )
            for name in unresolved(concept.output_type or "", known):
                issues.append(
                    (
                        f"concepts[{index}].output_type",
                        f"type {name!r} (in {concept.name!r}) is not defined in 'types'",
                    )
                )
        return issues

    # -- writing -------------------------------------------------------------------------

    def add(
        self,
        concept: Concept,
        *,
        task_id: str | None = None,
        actor: str = "human",
        why: str | None = None,
    ) -> WriteResult:
        """Add ``concept``, or merge it into the existing entry with the same id."""
        from arcmemo.memory.merge import write_concept

        return write_concept(self, concept, task_id=task_id, actor=actor, why=why)

    def add_lesson(
        self, lesson: Lesson, *, task_id: str | None = None, actor: str = "human"
    ) -> bool:
        """Append an open-ended lesson unless an identical one exists."""
        from arcmemo.memory.merge import write_lesson

        return write_lesson(self, lesson, task_id=task_id, actor=actor)

    def delete(self, name: str, *, actor: str = "human", why: str | None = None) -> Concept:
        """Remove a concept by name; raises KeyError when absent."""
        from arcmemo.memory.merge import delete_concept

        return delete_concept(self, name, actor=actor, why=why)

    # -- rendering and storage -----------------------------------------------------------

    def render(
        self,
        view: str = "full",
        *,
        selected: list[str] | None = None,
        budget_tokens: int | None = None,
        usage_threshold: int | None = None,
    ) -> str:
        """Render for a prompt: ``full``, ``compressed``, ``selection`` or ``solve`` view
        (see :mod:`arcmemo.memory.render`)."""
        from arcmemo.memory.render import USAGE_THRESHOLD, render_memory

        return render_memory(
            self,
            view,
            selected=selected,
            budget_tokens=budget_tokens,
            usage_threshold=USAGE_THRESHOLD if usage_threshold is None else usage_threshold,
        )

    @classmethod
    def load(cls, path: str | Path) -> Memory:
        """Load and validate a memory file; raises MemoryFileError naming file and place."""
        from arcmemo.memory.store import load_memory

        return load_memory(Path(path))

    def save(self, path: str | Path) -> None:
        """Save atomically (keeping the previous file as ``NAME.bak``) under a file lock."""
        from arcmemo.memory.store import save_memory

        save_memory(self, Path(path))


if TYPE_CHECKING:
    from arcmemo.memory.merge import WriteResult
