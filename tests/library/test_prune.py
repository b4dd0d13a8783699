"""Library functions no program imports any more leave the memory, with history; those
still imported, never imported, imported outside the corpus or called by another
function stay."""

from __future__ import annotations

from arcmemo.library.prune import imports_of, prune_unimported
from arcmemo.memory.schema import Concept, LibraryFunction, Memory


def function(name: str, imported_by: list[str], body: str = "return grid") -> LibraryFunction:
    source = f"def {name}(grid):\n    {body}\n"
    return LibraryFunction(name=name, source=source, imported_by=imported_by)


def test_a_function_no_program_imports_any_more_is_pruned_with_history() -> None:
    memory = Memory(domain="arc")
    memory.add(
        Concept(
            name="crop",
            kind="routine",
            functions=[
                function("old_crop", ["t1", "t2"]),
                function("crop", ["t1"]),
                function("extracted", []),
                function("elsewhere", ["other"]),
                function("inner", ["t2"]),
                function("outer", ["t2"], body="return inner(grid)"),
            ],
        )
    )
    programs = {
        "t1": "from arcmemo_library import crop\n\ndef transform(grid):\n    return crop(grid)\n",
        "t2": "from arcmemo_library import crop, outer\n\ndef transform(grid):\n"
        "    return outer(crop(grid))\n",
    }
    pruned = prune_unimported(memory, programs)
    assert pruned == ["old_crop"]
    (concept,) = memory.concepts
    kept = {f.name: list(f.imported_by) for f in concept.functions}
    assert kept == {
        "crop": ["t1", "t2"],
        "extracted": [],
        "elsewhere": ["other"],
        "inner": [],  # no program imports it, but outer calls it
        "outer": ["t2"],
    }
    entry = memory.history[-1]
    assert (entry.op, entry.target) == ("delete", f"{concept.id}/old_crop")
    assert entry.changes == ["was imported by t1, t2"]


def test_imports_are_read_from_the_code_only() -> None:
    assert imports_of("from arcmemo_library import a, b\nimport arcmemo_library\n") == {"a", "b"}
    assert imports_of("x = 'from arcmemo_library import a'\n") == set()
    assert imports_of("def (") == set()
