"""The concept memory: ontology records, merge rules, renderings and storage."""

from arcmemo.memory.merge import WriteResult
from arcmemo.memory.schema import (
    Concept,
    ConceptStats,
    HistoryEntry,
    Lesson,
    Memory,
    Parameter,
    Provenance,
    Solution,
    TypeDef,
    concept_id,
)
from arcmemo.memory.store import MemoryFileError, MemorySaveError

__all__ = [
    "Concept",
    "ConceptStats",
    "HistoryEntry",
    "Lesson",
    "Memory",
    "MemoryFileError",
    "MemorySaveError",
    "Parameter",
    "Provenance",
    "Solution",
    "TypeDef",
    "WriteResult",
    "concept_id",
]
