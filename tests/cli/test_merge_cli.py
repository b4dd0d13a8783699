"""``arcmemo run --shard I/N`` and ``arcmemo merge`` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from click.testing import CliRunner, Result

from arcmemo.cli.main import cli

SUMS = Path(__file__).resolve().parents[1] / "fixtures" / "scripts" / "aime_sums.py"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "300"})


def run_args(data: Path, out: Path, *extra: str) -> list[str]:
    return [
        *("run", "aime", "--data", str(data), "--model", f"scripted:{SUMS}", "--attempts", "2"),
        *("--out", str(out), *extra),
    ]


def test_shards_run_and_merge_from_the_command_line(tmp_path: Path, aime_sums: ModuleType) -> None:
    data = aime_sums.write_problems(tmp_path / "sums.jsonl", 5)
    shards = [tmp_path / "s0", tmp_path / "s1"]
    for index, out in enumerate(shards):
        result = invoke(*run_args(data, out, "--shard", f"{index}/2"))
        assert result.exit_code == 0, result.output
    assert json.loads((shards[1] / "config.json").read_text())["shard"] == {"index": 1, "count": 2}
    assert json.loads((shards[1] / "summary.json").read_text())["n_tasks"] == 2

    result = invoke("merge", *map(str, shards), "--out", str(tmp_path / "all"))
    assert result.exit_code == 0, result.output
    assert "merged 2 shard(s)" in result.output and "5 tasks" in result.output
    assert "old form" not in result.output
    assert json.loads((tmp_path / "all" / "summary.json").read_text())["complete"] is True
    # The old form (OUT first) still merges, with a warning naming the new one.
    result = invoke("merge", str(tmp_path / "old"), *map(str, shards))
    assert result.exit_code == 0, result.output
    assert f"arcmemo merge RUN... --out {tmp_path / 'old'}" in result.output
    assert json.loads((tmp_path / "old" / "summary.json").read_text())["complete"] is True

    result = invoke("merge", str(shards[0]), "--out", str(tmp_path / "half"))
    assert result.exit_code == 1 and "missing shards 1/2" in result.output
    assert "Traceback" not in result.output
    result = invoke("merge", str(shards[0]), "--out", str(tmp_path / "half"), "--allow-partial")
    assert result.exit_code == 0 and "partial: missing shards 1/2" in result.output


def test_bad_shards_are_usage_errors(tmp_path: Path, aime_sums: ModuleType) -> None:
    data = aime_sums.write_problems(tmp_path / "sums.jsonl", 2)
    for shard, needle in (("2/2", "I must be 0..N-1"), ("half", "expected I/N")):
        result = invoke(*run_args(data, tmp_path / "r", "--shard", shard))
        assert result.exit_code == 2 and needle in result.output, result.output
    memory = tmp_path / "memory.json"
    result = invoke(
        *run_args(data, tmp_path / "r", "--shard", "0/2", "--update", "online"),
        *("--memory", str(memory)),
    )
    assert result.exit_code == 2 and "cannot split an --update online run" in result.output


def test_shard_help_says_it_counts_from_0() -> None:
    result = invoke("run", "arc-agi-1", "--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())  # click wraps the help
    assert "I counted from 0 (0..N-1: --shard 0/4 is the first of four)" in text
