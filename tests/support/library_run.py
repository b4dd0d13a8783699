"""An online ARC run whose programs import a library function: the memory, the scripted model
and the check that the import was credited."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arcmemo.memory.schema import Concept, LibraryFunction, Memory
from tests.support.scripted_models import loop_model

lm = loop_model()


TILE = LibraryFunction(
    name="tile_mirrored",
    source="import numpy as np\n\n\ndef tile_mirrored(grid):\n"
    '    """Three by three tiles of the grid, the middle row of tiles mirrored."""\n'
    "    row = np.hstack([grid] * 3)\n"
    "    flipped = np.hstack([grid[:, ::-1]] * 3)\n"
    "    return np.vstack([row, flipped, row])\n",
    signature="(grid: Grid) -> Grid",
    docstring="Three by three tiles of the grid, the middle row of tiles mirrored.",
    sources=["earlier-task"],
)


# Its words are all in the importing program, but its code is not what was imported.
DECOY = LibraryFunction(
    name="tile_plain",
    source="import numpy as np\n\n\ndef tile_plain(grid):\n    return np.tile(grid, (3, 3))\n",
    signature="(grid: Grid) -> Grid",
    sources=["earlier-task"],
)


IMPORTING = """
from arcmemo_library import tile_mirrored

def transform(grid):
    return tile_mirrored(grid)
"""


TASKS = ["00576224", "68b67ca3"]


def library_memory(path: Path) -> Path:
    """A memory whose two concepts carry the imported function and the decoy."""
    Memory(
        domain="arc",
        concepts=[
            Concept(name="mirrored tiles", kind="routine", functions=[TILE]),
            Concept(name="tile transform", kind="routine", functions=[DECOY]),
        ],
    ).save(path)
    return path


def importing_model() -> Any:
    """The scripted model: the first task's program imports ``tile_mirrored``."""
    return lm.LoopModel(
        answers={
            ("solve", "00576224"): lm.program_answer(IMPORTING),
            ("solve", "68b67ca3"): lm.program_answer(lm.IDENTITY),
            ("concepts", "00576224"): lm.yaml_block(
                "- name: mirrored tiles\n  kind: routine\n  description: tile and mirror"
            ),
        },
        arc_ids=TASKS,
    )


def assert_import_credited(memory_path: Path) -> None:
    """The grown memory credits the imported function's concept, not the decoy's."""
    memory = Memory.load(memory_path)
    mirrored, decoy = memory.find("mirrored tiles"), memory.find("tile transform")
    assert mirrored is not None and decoy is not None
    assert mirrored.functions[0].imported_by == ["00576224"]
    assert "00576224" in mirrored.stats.helpful
    assert decoy.functions[0].imported_by == [] and "00576224" in decoy.stats.unused
