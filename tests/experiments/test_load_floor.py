"""``experiments/load_floor.py``: each step of a load timed, on a small memory."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_core import SchemaValidator, ValidationError

from arcmemo.memory import Memory
from arcmemo.memory.synthetic import synthetic_memory
from tests.support.experiment_scripts import experiment_script

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "experiments" / "load_floor.py"


def test_every_step_is_timed(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    synthetic_memory(40).save(path)
    command = [sys.executable, str(SCRIPT), str(path), "--repeat", "2"]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=REPO)
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 8
    assert all(line.endswith(" s |") for line in rows)


def test_the_bare_schema_keeps_no_function_validator_and_still_validates() -> None:
    module = experiment_script("load_floor")
    schema = copy.deepcopy(Memory.__pydantic_core_schema__)
    assert "'function-" in repr(schema)  # the models do have validators to leave out
    bare = SchemaValidator(module._without_functions(schema))
    assert "'function-" not in repr(schema)
    memory = synthetic_memory(5)
    built = bare.validate_python(memory.model_dump(mode="json"))
    assert [c.name for c in built.concepts] == [c.name for c in memory.concepts]
    with pytest.raises(ValidationError):  # pydantic's own checks still hold
        bare.validate_python({"concepts": [{"kind": "routine"}]})
