"""Program-synthesis abstraction (ArcMemo-PS): solution -> pseudocode -> typed concepts.

Both steps carry the hand-written examples of :mod:`arcmemo.abstraction.examples`
(``--memory-format-arg examples=FILE`` swaps them). The concept step sees the memory's compressed
view (established concepts in full with implementation notes, the rest by name), so the
model reuses existing concepts by name and extends them; its YAML is validated against the
ontology (kinds, parameter shapes, type vocabulary) and repaired once with the exact errors
before anything invalid is skipped and recorded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError

from arcmemo.abstraction.base import ABSTRACTORS, Abstractor, PitfallOptions
from arcmemo.abstraction.contrast import ContrastOptions
from arcmemo.abstraction.examples import Example, ExampleOptions, load_examples
from arcmemo.abstraction.outcome import AbstractionOutcome, ask
from arcmemo.core.inlined_library import without_library
from arcmemo.core.records import SolvedItem
from arcmemo.memory.merge import harvest_typedefs
from arcmemo.memory.render import USAGE_THRESHOLD
from arcmemo.memory.schema import Concept, Memory, Solution
from arcmemo.memory.types import unresolved
from arcmemo.models.client import ModelClient
from arcmemo.models.structured import OutputError, load_yaml_block, tagged

_ALIASES: dict[str, str] = {
    "concept": "name", "title": "name", "typing": "type", "output_typing": "output_type",
    "output": "output_type", "relevance_cues": "cues", "notes": "implementation",
    "implementation_notes": "implementation", "subtype": "routine_subtype", "related": "relations",
}  # fmt: skip
_LIST_FIELDS = ("cues", "implementation", "relations")
_PARAMETER_TEXT = re.compile(r"^\s*([^():]+?)\s*(?:\(([^)]*)\))?\s*(?::\s*(.*))?$", re.DOTALL)


def _as_text(item: Any) -> str:
    # YAML reads "a: b" inside a list as a one-key mapping; turn it back into its text.
    if isinstance(item, dict):
        return "; ".join(f"{key}: {value}" for key, value in item.items())
    return str(item)


def _parameter(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {_ALIASES.get(str(k), str(k)): v for k, v in value.items()}
    match = _PARAMETER_TEXT.match(str(value))
    if match is None:
        return {"name": str(value)}
    name, type_, description = match.groups()
    return {"name": name.strip(), "type": type_, "description": description}


def normalize_item(raw: Any) -> dict[str, Any]:
    """Map the field spellings models use onto the ontology's field names."""
    if isinstance(raw, str):
        return {"name": raw}
    if not isinstance(raw, dict):
        raise OutputError(f"expected a mapping or a name, got {type(raw).__name__}")
    item = {_ALIASES.get(str(k).strip().lower(), str(k).strip().lower()): v for k, v in raw.items()}
    for field in _LIST_FIELDS:
        value = item.get(field)
        if value is None:
            item.pop(field, None)
        elif isinstance(value, list):
            item[field] = [_as_text(v) for v in value if v is not None]
        else:
            item[field] = [_as_text(value)]
    if "parameters" in item:
        params = item["parameters"] or []
        if isinstance(params, dict):  # {name: type} mapping
            params = [{"name": k, "type": v} for k, v in params.items()]
        elif isinstance(params, str):  # one parameter written inline, not its characters
            params = [params]
        elif not isinstance(params, list):
            raise OutputError(
                f"parameters: expected a list of {{name, type, description}} items, "
                f"got {type(params).__name__}"
            )
        item["parameters"] = [_parameter(p) for p in params]
    for field in ("description", "output_type", "routine_subtype"):
        if item.get(field) is not None and not isinstance(item[field], str):
            item[field] = _as_text(item[field])
    return item


def parse_concepts(text: str, memory: Memory) -> tuple[list[Concept], list[str]]:
    """Concepts of a model answer, and one error message per unusable item."""
    data = load_yaml_block(text)
    if isinstance(data, dict) and isinstance(data.get("concepts"), list):
        data = data["concepts"]
    if not isinstance(data, list):
        raise OutputError(f"expected a YAML list of concepts, got {type(data).__name__}")
    scratch = memory.model_copy(update={"types": list(memory.types)})
    concepts: list[Concept] = []
    errors: list[str] = []
    for number, raw in enumerate(data, 1):
        try:
            item = normalize_item(raw)
        except OutputError as error:
            errors.append(f"item {number}: {error}")
            continue
        name = str(item.get("name") or "").strip()
        label = f"item {number} ({name!r})" if name else f"item {number}"
        existing = memory.find(name) if name else None
        if existing is not None:
            item.setdefault("kind", existing.kind)
            item["name"] = existing.name
        elif "kind" not in item:
            errors.append(f"{label}: a new concept needs 'kind' (structure or routine)")
            continue
        try:
            concept = Concept.model_validate(item)
        except ValidationError as error:
            details = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'item'}: {e['msg']}"
                for e in error.errors(include_url=False)
            )
            errors.append(f"{label}: {details}")
            continue
        # Check types against a scratch vocabulary, but return the concept with its inline
        # typedefs intact: Memory.add harvests them into the real vocabulary.
        harvested = harvest_typedefs(scratch, concept).concept
        missing = sorted(
            {
                n
                for ref in harvested.type_references()
                for n in unresolved(ref, scratch.type_names())
            }
        )
        if missing:
            errors.append(
                f"{label}: unknown type(s) {', '.join(missing)}; use a type of the memory or "
                "define it inline as 'name := definition'"
            )
            continue
        concepts.append(concept)
    return concepts, errors


class PSOptions(ExampleOptions, PitfallOptions, ContrastOptions):
    """Options of the ``ps`` memory format (``--memory-format-arg k=v``)."""

    usage_threshold: int = Field(
        default=USAGE_THRESHOLD,
        ge=0,
        description="Concepts used at least this often are shown to the concept step in "
        "full, the rest by name.",
    )


@ABSTRACTORS.register("ps", options=PSOptions)
class ProgramSynthesisAbstractor(Abstractor):
    """Pseudocode first, then typed concepts written into the memory (few-shot)."""

    model_calls = 2  # the pseudocode, then the concepts
    contrast_entries = "concepts"

    def __init__(self, options: PSOptions | None = None, *, actor: str = "human") -> None:
        super().__init__(options or PSOptions(), actor=actor)
        self.settings = options or PSOptions()

    def examples(self, domain: str, task_id: str | None = None) -> list[Example]:
        """The few-shot examples shown to both steps for ``domain`` (never ``task_id``'s)."""
        return load_examples(
            self.settings.examples, domain, self.settings.n_examples, excluding=task_id
        )

    async def abstract(
        self, memory: Memory, item: SolvedItem, clients: Mapping[str, ModelClient]
    ) -> AbstractionOutcome:
        model = self.client(clients)
        outcome = AbstractionOutcome(task_id=item.task_id, format=self.name)
        examples = self.examples(item.domain, item.task_id)

        def parse_analysis(text: str) -> tuple[str, str]:
            pseudocode, summary = tagged(text, "pseudocode"), tagged(text, "summary")
            if not pseudocode or not summary:
                raise OutputError(
                    "expected <pseudocode>...</pseudocode> and <summary>...</summary>"
                )
            return summary, pseudocode

        analysis = await ask(
            model,
            "abstraction/pseudocode",
            parse_analysis,
            task_id=item.task_id,
            domain=item.domain,
            problem=item.problem,
            solution=without_library(item.solution),
            reasoning=item.reasoning or "",
            examples=examples,
        )
        if not outcome.account(analysis, "pseudocode"):
            return outcome
        summary, pseudocode = analysis.value

        def parse(text: str) -> list[Concept]:
            concepts, errors = parse_concepts(text, memory)
            if errors:
                raise OutputError("; ".join(errors))
            if not concepts:
                raise OutputError("the list holds no concepts")
            return concepts

        answer = await ask(
            model,
            "abstraction/concepts",
            parse,
            task_id=item.task_id,
            domain=item.domain,
            memory=memory.render("compressed", usage_threshold=self.settings.usage_threshold),
            summary=summary,
            pseudocode=pseudocode,
            examples=examples,
        )
        concepts: list[Concept] = answer.value or []
        if not outcome.account(answer, "concepts"):
            try:  # keep the valid items of the last answer
                concepts, _ = parse_concepts(answer.raw[-1], memory)
            except OutputError:
                concepts = []
        for concept in concepts:
            result = memory.add(
                concept,
                task_id=item.task_id,
                actor=self.actor,
                why="abstracted from a verified solution",
            )
            outcome.written.append(result.concept_id)
            outcome.conflicts += [f"{result.concept_id}: {c}" for c in result.conflicts]
        memory.solutions[item.task_id] = Solution(
            summary=summary, pseudocode=pseudocode, program=item.solution
        )
        return outcome
