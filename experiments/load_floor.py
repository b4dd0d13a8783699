"""Where the time of loading a memory file goes: each step of ``Memory.load`` on its own,
and two other ways of building the same objects, timed in one process.

    python experiments/load_floor.py memory.json [--repeat 5]

    python -c "from arcmemo.memory.synthetic import synthetic_memory as s; s(30000).save('m.json')"

Best of ``--repeat`` with the cyclic collector paused, except the first row (the first load
in the process, as a command pays it). "every Python validator left out" validates against
a copy of ``Memory``'s core schema with every function validator replaced by what it wraps:
what pydantic's own validation costs without arcmemo's checks.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_core import SchemaValidator

from arcmemo.memory import Memory


def _without_functions(schema: Any) -> Any:
    """``schema`` with every function validator replaced by the schema it wraps (in place)."""
    if isinstance(schema, dict):
        while str(schema.get("type", "")).startswith("function-") and "schema" in schema:
            inner = schema["schema"]
            schema.clear()
            schema.update(inner)
        for value in list(schema.values()):
            _without_functions(value)
    elif isinstance(schema, list):
        for value in schema:
            _without_functions(value)
    return schema


def _best(run: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.disable()
        start = time.perf_counter()
        made = run()
        times.append(time.perf_counter() - start)
        del made
        gc.enable()
        gc.collect()
    return min(times)


def floor(path: Path, repeat: int) -> dict[str, float]:
    """Seconds per step, by label, in the order of the table."""
    start = time.perf_counter()
    Memory.load(path)
    first = time.perf_counter() - start
    text = path.read_text(encoding="utf-8")
    raw = json.loads(text)
    bare = SchemaValidator(_without_functions(copy.deepcopy(Memory.__pydantic_core_schema__)))
    memory = Memory.model_validate(raw)
    pickled = pickle.dumps(memory, protocol=5)
    return {
        "`Memory.load`, first in the process": first,
        "`Memory.load` (parse, validate, integrity check), warm": _best(
            lambda: Memory.load(path), repeat
        ),
        "`json.loads`": _best(lambda: json.loads(text), repeat),
        "`Memory.model_validate`": _best(lambda: Memory.model_validate(raw), repeat),
        "the same schema with every Python validator left out": _best(
            lambda: bare.validate_python(raw), repeat
        ),
        "`Memory.model_validate_json` (no `json.loads`)": _best(
            lambda: Memory.model_validate_json(text), repeat
        ),
        "`pickle.loads` of the validated memory": _best(lambda: pickle.loads(pickled), repeat),
        "`integrity_issues`": _best(memory.integrity_issues, repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| step | time |\n|---|---:|")
    for label, seconds in floor(args.file, args.repeat).items():
        print(f"| {label} | {seconds:.2f} s |")


if __name__ == "__main__":
    main()
