"""Anchors of the report's sections and links from concept names to memory entries."""

from __future__ import annotations

import re

from arcmemo.memory.render import lesson_name
from arcmemo.memory.schema import Memory, concept_id


def anchor(prefix: str, name: str) -> str:
    """An HTML id built from any string (task ids and names may hold any character)."""
    return f"{prefix}-{re.sub(r'[^A-Za-z0-9_-]', '_', name)}"


def memory_anchor(concept_key: str) -> str:
    """The id of a memory entry (a concept id, or a lesson's name as a concept id)."""
    return anchor("mem", concept_key)


def lesson_anchor(index: int) -> str:
    return memory_anchor(concept_id(lesson_name(index)))


class MemoryIndex:
    """Resolves concept and lesson names to the anchors of their entries in the report."""

    def __init__(self, memory: Memory | None) -> None:
        self.ids: set[str] = set()
        self.names: dict[str, str] = {}
        self.lessons: set[str] = set()
        # every task links the same few names, once per step: each is resolved once
        self._links: dict[str, str | None] = {}
        if memory is not None:
            self.ids = {c.id for c in memory.concepts}
            self.names = {c.id: c.name for c in memory.concepts}
            self.lessons = {concept_id(lesson_name(i)) for i in range(len(memory.lessons))}

    def link(self, name: str) -> str | None:
        if name not in self._links:
            key = concept_id(name)
            known = key in self.ids or key in self.lessons
            self._links[name] = "#" + memory_anchor(key) if known else None
        return self._links[name]

    def links(self, names: list[str]) -> list[tuple[str, str | None]]:
        return [(name, self.link(name)) for name in names]

    def titled_links(self, keys: list[str]) -> list[tuple[str, str | None]]:
        """Links for concept ids (as abstraction records them), shown by concept name."""
        return [(self.names.get(concept_id(key), key), self.link(key)) for key in keys]
