"""ArcMemo: test-time learning through a typed, parameterized concept memory.

The public API: :class:`Memory`, :class:`Concept`, :class:`Lesson` and friends. Nothing here
imports a model SDK, torch or jetspec.
"""

from arcmemo.memory import Concept, Lesson, Memory, MemoryFileError, Parameter, TypeDef

__all__ = ["Concept", "Lesson", "Memory", "MemoryFileError", "Parameter", "TypeDef"]
