"""``memory diff`` of library functions: added, removed and changed ones."""

from __future__ import annotations

from arcmemo.memory.diff import memory_diff
from arcmemo.memory.schema import Concept, LibraryFunction, Memory, RecordedCall


def _memory(*functions: LibraryFunction) -> Memory:
    memory = Memory()
    memory.add(Concept(name="crop", kind="routine", functions=list(functions)))
    return memory


def test_functions_added_removed_and_changed_are_listed() -> None:
    kept = LibraryFunction(name="crop", source="def crop(g):\n    return g\n", sources=["a"])
    gone = LibraryFunction(name="old", source="def old():\n    return 0\n")
    changed = kept.model_copy(
        update={
            "source": "def crop(g):\n    return g[:1]\n",
            "tests": [RecordedCall(args=[1], result=1)],
            "sources": ["a", "b"],
            "imported_by": ["c"],
        }
    )
    new = LibraryFunction(name="new", source="def new():\n    return 1\n")
    lines = memory_diff(_memory(kept, gone), _memory(changed, new))
    assert lines == [
        "~ crop",
        "    functions: +'new'",
        "    functions: -'old'",
        "    functions['crop'].source changed",
        "    functions['crop'].tests: 0 -> 1",
        "    functions['crop'].sources: +'b'",
        "    functions['crop'].imported_by: +'c'",
    ]
    assert memory_diff(_memory(kept), _memory(kept)) == []
