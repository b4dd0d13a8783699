"""One count of model traffic: summary.json's requests, samples and cache replays are the
numbers of calls.jsonl, and the final table and the report say the same phrase."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from arcmemo.analysis.report import build_report
from arcmemo.analysis.report.summary import model_traffic
from arcmemo.cli.run import summary_table_rows
from arcmemo.models.accounting import CallRecord
from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import run_benchmark
from tests.support.paths import FIXTURES

AIME_FILE = FIXTURES / "aime" / "problems.jsonl"
SCRIPT = {
    "Find $2 + 3$.": ["So \\boxed{5}.", "\\boxed{6}"],
    "divisors of $2^{15}$": ["\\boxed{016}", "\\boxed{15}"],
    "divided by $1000$": ["\\boxed{37}", "\\boxed{73}"],
}


def _run(out: Path, cache: Path) -> dict[str, Any]:
    config = RunConfig(
        benchmark="aime", data=str(AIME_FILE), model="scripted:aime", attempts=2, out=out
    )
    client = ModelClient(
        ScriptedProvider.from_script(SCRIPT),
        config=ModelConfig(cache=True, cache_dir=cache),
        call_log_path=out / "calls.jsonl",
    )
    return asyncio.run(run_benchmark(config, models={"solver": client}))


def _log(out: Path) -> list[CallRecord]:
    return [CallRecord.model_validate_json(x) for x in (out / "calls.jsonl").read_text().split()]


def test_requests_samples_and_replays_agree_with_the_call_log(tmp_path: Path) -> None:
    fresh = _run(tmp_path / "fresh", tmp_path / "cache")
    for name, summary in (("fresh", fresh),):
        log = _log(tmp_path / name)
        assert summary["requests"] == sum(r.attempts for r in log)
        assert summary["samples"] == sum(len(r.samples) for r in log)
        assert summary["cache_hits"] == sum(r.cache_hits for r in log)
        saved = json.loads((tmp_path / name / "summary.json").read_text())
        assert (saved["requests"], saved["samples"]) == (summary["requests"], summary["samples"])
        phrase = model_traffic(summary)
        assert phrase == (
            f"{summary['requests']} ({summary['samples']} samples; "
            f"{summary['cache_hits']} replayed from the cache)"
        )
        assert ("model requests", phrase) in summary_table_rows(summary, ("score",))
        assert f'<div class="v">{phrase}</div>' in build_report(tmp_path / name)
    assert (fresh["requests"], fresh["samples"], fresh["cache_hits"]) == (3, 6, 0)
