"""Checking that a memory's text would load again, paying only for concepts that changed.

A save refuses a memory whose file ``load`` would reject (:func:`arcmemo.memory.store.
checked_dump`). Checking by parsing the whole text again costs more than the dump itself
(over a second at 30,000 concepts), and an online run saves after every batch, while a
batch changes a few concepts. :func:`vouched_dump` builds the same canonical text from one
JSON fragment per concept and validates only the fragments it has not validated before.

Why that is the same check: ``load`` validates each item of ``concepts`` on its own (no
validator of the memory looks across them), so the concepts validate exactly when every
fragment validates as a :class:`Concept`; the rest of the file is validated whole, as the
text with an empty concept list. What ``load`` checks across concepts (duplicate ids, type
references) is checked on the memory itself, which holds what the file would: a fragment
is only vouched for when validating it keeps its id and name as they are (validation cleans
a name and derives an id; a concept assigned an unclean name is left to the full check).
Whenever it cannot vouch, :func:`vouched_dump` answers None and the caller parses the
whole text, which also words the error.

The fragments last validated are kept (as strings, about the size of the file) until the
next check; with :data:`arcmemo.memory.edits.VERIFY_VARIABLE` set, every vouched text is
also compared with the whole dump and parsed whole.
"""

from __future__ import annotations

import json
import threading

from pydantic import ValidationError

from arcmemo.memory.schema import SCHEMA_VERSION, Concept, Memory

_LOCK = threading.Lock()
_vouched: frozenset[str] = frozenset()
# How the empty concept list sits in the dumped memory (two-space indent, a key of the
# top-level object, never last); a string value cannot hold it, as JSON escapes its quotes.
_EMPTY_CONCEPTS = '\n  "concepts": [],\n'
_NESTED = "\n    "  # a concept is an item of a top-level list: four spaces deeper


def vouched_dump(memory: Memory) -> str | None:
    """The text :func:`arcmemo.memory.store.dump_memory` gives, when it certainly loads
    again; None when only parsing it whole can tell."""
    global _vouched
    if memory.schema_version != SCHEMA_VERSION:
        return None  # loading it would migrate it
    if not all(type(concept) is Concept for concept in memory.concepts):
        return None  # the memory's dump writes another class as a Concept, not as itself
    fragments = [concept.model_dump_json(indent=2) for concept in memory.concepts]
    with _LOCK:
        known = _vouched
    for fragment, concept in zip(fragments, memory.concepts, strict=True):
        if fragment not in known and not _loads_as_is(fragment, concept):
            return None
    header = memory.model_copy(update={"concepts": []}).model_dump_json(indent=2)
    if header.count(_EMPTY_CONCEPTS) != 1:
        return None
    try:
        Memory.model_validate(json.loads(header))
    except ValidationError:
        return None
    if memory.integrity_issues():
        return None
    with _LOCK:
        _vouched = frozenset(fragments)
    if not fragments:
        return header + "\n"
    listed = ",\n".join("    " + fragment.replace("\n", _NESTED) for fragment in fragments)
    return header.replace(_EMPTY_CONCEPTS, f'\n  "concepts": [\n{listed}\n  ],\n') + "\n"


def _loads_as_is(fragment: str, concept: Concept) -> bool:
    """Whether ``fragment`` (``concept``'s JSON) validates, keeping its id and name."""
    try:
        loaded = Concept.model_validate(json.loads(fragment))
    except ValidationError:
        return False
    return loaded.id == concept.id and loaded.name == concept.name
