"""``--shard I/N`` and :func:`arcmemo.analysis.shards.merge_runs`: shards merged equal one
unsharded run, and merging refuses what is not one run cut into shards."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arcmemo.analysis.shards import MergeError, merge_runs
from arcmemo.models.config import ModelConfig
from arcmemo.run.config import RunConfig
from arcmemo.run.data_settings import ShardSpec
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.pipeline import run_benchmark
from tests.support.paths import FIXTURES

SUMS = FIXTURES / "scripts" / "aime_sums.py"
# What may differ between two runs of the same work: how long it took, in how many sessions.
TIMING = {
    "wall_seconds",
    "sessions",
    "span_seconds",
    "latency_s",
    "ts",
    "duration_s",
    "started_at",
    "finished_at",
}


def config(data: Path, out: Path, shard: str | None = None, **changes: Any) -> RunConfig:
    fields: dict[str, Any] = {
        "benchmark": "aime",
        "data": str(data),
        "model": f"scripted:{SUMS}",
        "attempts": 3,
        "order_seed": 7,
        "out": out,
        # Each run pays for its own calls: equal summaries then mean equal work.
        "models": ModelConfig(cache=False, cache_write=False, concurrency=2),
        "shard": ShardSpec.parse(shard) if shard else None,
    }
    return RunConfig.model_validate(fields | changes)


def run(config: RunConfig) -> dict[str, Any]:
    return asyncio.run(run_benchmark(config))


def untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def results(out: Path) -> list[dict[str, Any]]:
    return [untimed(r.model_dump(mode="json")) for r in RunDirectory(out).ordered_results()]


@pytest.fixture
def data(tmp_path: Path, aime_sums: ModuleType) -> Path:
    return Path(aime_sums.write_problems(tmp_path / "sums.jsonl", 11))


@pytest.fixture
def whole(data: Path, tmp_path: Path) -> Path:
    out = tmp_path / "whole"
    run(config(data, out))
    return out


@pytest.mark.parametrize("count", [2, 3])
def test_merged_shards_equal_the_unsharded_run(
    data: Path, whole: Path, tmp_path: Path, count: int
) -> None:
    shards = [tmp_path / f"shard-{i}" for i in range(count)]
    for index, out in enumerate(shards):
        run(config(data, out, f"{index}/{count}"))
    sizes = [len(RunDirectory(out).finished()) for out in shards]
    assert sum(sizes) == 11 and max(sizes) - min(sizes) <= 1  # a slice each, no overlap

    merged = tmp_path / "merged"
    summary = merge_runs(merged, list(reversed(shards)))  # given in any order

    expected = json.loads((whole / "summary.json").read_text())
    assert untimed(summary) == untimed(expected)
    assert untimed(json.loads((merged / "summary.json").read_text())) == untimed(expected)
    assert expected["complete"] and 0 < expected["n_solved"] < 11  # not a trivial run
    assert results(merged) == results(whole)
    assert RunDirectory(merged).read_task_order() == RunDirectory(whole).read_task_order()
    assert len(RunDirectory(merged).calls()) == len(RunDirectory(whole).calls())
    saved = RunDirectory(merged).require_config()
    assert saved.shard is None and saved.model == RunDirectory(whole).require_config().model
    record = json.loads((merged / "merged.json").read_text())
    assert record["count"] == count and [s["shard"] for s in record["shards"]] == [
        f"{i}/{count}" for i in range(count)
    ]


@pytest.fixture
def two_shards(data: Path, tmp_path: Path) -> list[Path]:
    shards = [tmp_path / "s0", tmp_path / "s1"]
    for index, out in enumerate(shards):
        run(config(data, out, f"{index}/2"))
    return shards


def test_merge_refuses_shards_of_different_runs(
    data: Path, two_shards: list[Path], tmp_path: Path
) -> None:
    other = tmp_path / "other"
    run(config(data, other, "1/2", attempts=2))
    with pytest.raises(
        MergeError, match=r"shard 1/2 \(.*other\) is not a shard of the same run.*attempts: 3 vs 2"
    ):
        merge_runs(tmp_path / "m", [two_shards[0], other])


def test_merge_refuses_twice_given_missing_and_unsharded(
    whole: Path, two_shards: list[Path], tmp_path: Path
) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(two_shards[0], twin)
    with pytest.raises(MergeError, match="shard 0/2 given twice"):
        merge_runs(tmp_path / "m1", [two_shards[0], twin, two_shards[1]])
    with pytest.raises(MergeError, match=r"missing shards 1/2 \(--allow-partial"):
        merge_runs(tmp_path / "m2", [two_shards[0]])
    with pytest.raises(MergeError, match="not a shard"):
        merge_runs(tmp_path / "m3", [two_shards[0], whole])
    assert not (tmp_path / "m1").exists() and not (tmp_path / "m2").exists()


def test_an_incomplete_shard_is_refused_unless_partial_is_allowed(
    two_shards: list[Path], tmp_path: Path
) -> None:
    results_path = RunDirectory(two_shards[1]).results_path
    lines = results_path.read_text().splitlines(keepends=True)
    results_path.write_text("".join(lines[:-1]))  # as if killed before its last task
    with pytest.raises(MergeError, match=r"shard 1/2 \(.*s1\) is incomplete: 4 of 5 tasks"):
        merge_runs(tmp_path / "m", two_shards)

    summary = merge_runs(tmp_path / "partial", two_shards, allow_partial=True)
    assert summary["complete"] is False and summary["n_tasks"] == 10
    assert any("incomplete: 4 of 5" in why for why in summary["partial_merge"])
    record = json.loads((tmp_path / "partial" / "merged.json").read_text())
    assert [s["complete"] for s in record["shards"]] == [True, False]

    missing = merge_runs(tmp_path / "half", two_shards[:1], allow_partial=True)
    assert missing["complete"] is False and missing["partial_merge"] == ["missing shards 1/2"]


def test_merge_refuses_a_task_in_two_shards(two_shards: list[Path], tmp_path: Path) -> None:
    order_path = RunDirectory(two_shards[1]).task_order_path
    order = json.loads(order_path.read_text())
    stolen = RunDirectory(two_shards[0]).read_task_order()[0]  # type: ignore[index]
    order_path.write_text(json.dumps([stolen, *order[1:]]))
    with pytest.raises(MergeError, match=f"task {stolen} is in two shards"):
        merge_runs(tmp_path / "m", two_shards)


def test_merge_into_a_used_directory_is_refused(two_shards: list[Path], tmp_path: Path) -> None:
    with pytest.raises(MergeError, match="not empty"):
        merge_runs(two_shards[0], two_shards)


def test_shard_parsing_and_online_refusal(data: Path, tmp_path: Path) -> None:
    assert ShardSpec.parse("2/3").take(list(range(8))) == [2, 5]
    for bad in ("3/3", "1", "a/b", "-1/2"):
        with pytest.raises(ValueError, match="--shard"):
            ShardSpec.parse(bad)
    with pytest.raises(ValueError, match="cannot split an --update online run"):
        config(data, tmp_path / "x", "0/2", update="online", memory=str(tmp_path / "m.json"))
