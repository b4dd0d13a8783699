"""Hand-written abstraction examples: the few-shot demonstrations of the abstraction prompts.

An examples file (``prompts/abstraction/examples/<domain>.yaml`` by default; any file with
``--memory-format-arg examples=FILE``) is YAML::

    domain: arc
    examples:
      - task: 0d3d703e              # the solved task
        program: |                  # its verified solution
          def transform(grid): ...
        summary: one line            # what the pseudocode step answers ...
        pseudocode: |                # ... together with this
          ...
        concepts: [...]              # what the concept step answers (memory YAML items)
        thought_process: |           # optional: the open-ended format's reconstruction
          - o 1: ...
        lessons: [{situation, suggestion}, ...]   # optional: the open-ended lessons

Both program-synthesis steps show every example; open-ended abstraction shows those that
have a thought process and lessons. The example of the task being abstracted is never
shown (five of the bundled ARC examples are BARC seeds: abstracting one of those seeds must
not show the model its own answer).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arcmemo.core.resources import data_dir


class ExamplesFileError(ValueError):
    """An examples file that cannot be used; names the file and the place."""


class ExampleLesson(BaseModel):
    """One open-ended lesson of an example."""

    model_config = ConfigDict(extra="forbid")

    situation: str = Field(min_length=1)
    suggestion: str = Field(min_length=1)


class Example(BaseModel):
    """One annotated solved task."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1, description="Task id.")
    program: str = Field(min_length=1, description="The verified solution.")
    summary: str = Field(min_length=1, description="One-line summary of the rule.")
    pseudocode: str = Field(min_length=1, description="Pseudocode of the solution.")
    concepts: list[Any] = Field(
        min_length=1, description="Concept items as the concept step writes them."
    )
    thought_process: str = Field(default="", description="Reconstructed reasoning (OE).")
    lessons: list[ExampleLesson] = Field(default_factory=list, description="Lessons (OE).")

    def concepts_yaml(self) -> str:
        """The concept list as the YAML block the concept step answers with."""
        return yaml.safe_dump(self.concepts, sort_keys=False, allow_unicode=True, width=10_000)

    def lessons_yaml(self) -> str:
        """The lessons as the YAML block lesson extraction answers with."""
        items = [lesson.model_dump() for lesson in self.lessons]
        return yaml.safe_dump(items, sort_keys=False, allow_unicode=True, width=10_000)


class ExampleSet(BaseModel):
    """A whole examples file."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    examples: list[Example] = Field(default_factory=list)


def default_examples_path(domain: str) -> Path:
    """Where the bundled examples of ``domain`` live (the file may not exist)."""
    return data_dir("prompts") / "abstraction" / "examples" / f"{domain}.yaml"


@cache
def _load(path: Path) -> ExampleSet:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExamplesFileError(f"{path}: examples file does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ExamplesFileError(f"{path}: cannot be read: {error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
        raise ExamplesFileError(f"{path}: {where}not valid YAML") from None
    try:
        return ExampleSet.model_validate(raw)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        raise ExamplesFileError(f"{path}: {where}: {first['msg']}") from None


def load_examples(
    path: Path | None, domain: str, limit: int | None = None, *, excluding: str | None = None
) -> list[Example]:
    """The examples of ``path`` (default: the bundled file of ``domain``, none if absent)
    but the one of task ``excluding`` (the task being abstracted), the first ``limit`` of
    them when given."""
    if path is None:
        path = default_examples_path(domain)
        if not path.is_file():
            return []
    examples = [e for e in _load(Path(path).resolve()).examples if e.task != excluding]
    return examples if limit is None else examples[:limit]


class ExampleOptions(BaseModel):
    """The few-shot options shared by the memory formats (``--memory-format-arg k=v``)."""

    model_config = ConfigDict(extra="forbid")

    examples: Path | None = Field(
        default=None,
        description="YAML file of hand-written examples (default: the bundled ones of the "
        "domain, prompts/abstraction/examples/<domain>.yaml).",
    )
    n_examples: int | None = Field(
        default=None, ge=0, description="Show only the first N examples (0: zero-shot)."
    )
