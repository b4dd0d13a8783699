"""``summary.json`` and ``config.json``: typed, versioned, and older run directories (the
fixtures under ``tests/fixtures/rundir/v1``, written by arcmemo before format versions)
still load, report and table."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from arcmemo.analysis import tables
from arcmemo.analysis.report.html import render_report
from arcmemo.analysis.report.load import load_run
from arcmemo.benchmarks.aime.metrics import AimeMetrics
from arcmemo.benchmarks.arc.scoring import ArcMetrics, OracleCell
from arcmemo.benchmarks.base import BENCHMARKS
from arcmemo.core.spellings import SUMMARY_KEYS
from arcmemo.memory.schema import Memory
from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import RUNDIR_FORMAT, ConfigFile, RunDirError
from arcmemo.run.pipeline import run_benchmark
from arcmemo.run.summary import summarize_directory
from arcmemo.run.summary_file import SUMMARY_FORMAT, SummaryError, load_summary, parse_summary
from tests.support.paths import FIXTURES
from tests.support.report_runs import AIME_SCRIPT, ARC_TASKS

V1 = FIXTURES / "rundir" / "v1"


@pytest.fixture(scope="module")
def aime_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("aime") / "run"
    config = RunConfig(
        benchmark="aime",
        data=str(FIXTURES / "aime" / "problems.jsonl"),
        model="scripted:inline",
        attempts=3,
        out=out,
    )
    client = ModelClient(
        ScriptedProvider.from_script(AIME_SCRIPT),
        config=ModelConfig(),
        call_log_path=out / "calls.jsonl",
    )
    asyncio.run(run_benchmark(config, models={"solver": client}))
    return out


def _copy(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / run.name))


def test_summary_and_config_files_validate_against_their_models(aime_run: Path) -> None:
    raw = json.loads((aime_run / "summary.json").read_text())
    summary = parse_summary(raw, AimeMetrics)
    assert raw["format_version"] == summary.format_version == SUMMARY_FORMAT
    assert isinstance(summary.metrics, AimeMetrics)
    assert summary.metrics.by_metric is not None and summary.metrics.n_samples == 3
    assert summary.file_dict() == raw  # the file is exactly what the model writes
    assert summary.roles["solver"].calls == summary.calls == 3
    config = ConfigFile.model_validate_json((aime_run / "config.json").read_text())
    assert config.format_version == RUNDIR_FORMAT
    assert RunDirectory(aime_run).require_config().benchmark.name == "aime"


def test_a_summary_of_version_1_reads_whole_with_typed_metrics() -> None:
    for name, model in (("arc-online", ArcMetrics), ("aime", AimeMetrics)):
        rundir = RunDirectory(V1 / name)
        raw = rundir.read_summary()
        assert raw is not None and "format_version" not in raw
        summary = load_summary(rundir, raw["benchmark"])
        assert summary is not None and isinstance(summary.metrics, model)
        written = summary.file_dict()
        assert written.pop("format_version") == SUMMARY_FORMAT
        assert written.pop("roles") == {}  # not recorded then
        assert written.pop("prompt_too_long") == {} and written.pop("truncated") == 0
        assert written.pop("prompts_cut") == 0  # version 3
        # version 5: the code convention's keys, read from their retired spellings
        assert written == {SUMMARY_KEYS.get(key, key): value for key, value in raw.items()}
    arc = load_summary(RunDirectory(V1 / "arc-online"), "arc-agi-1")
    assert arc is not None and isinstance(arc.metrics, ArcMetrics)
    assert arc.metrics.by_retry is not None
    assert isinstance(arc.metrics.by_retry["2"]["oracle@2"], OracleCell)
    assert arc.write_precision is not None and arc.write_precision.signal == "train"


def test_a_summary_before_format_5_reads_its_published_keys_as_the_code_conventions() -> None:
    rundir = RunDirectory(FIXTURES / "legacy" / "6eae7ae" / "arc-online")
    old = rundir.read_summary()
    assert old is not None and old["format_version"] < 5 and "code_score" not in old
    summary = load_summary(rundir, "arc-agi-1")
    assert summary is not None and isinstance(summary.metrics, ArcMetrics)
    assert summary.metrics.code_score == old["published_score"] == 0.75
    assert summary.metrics.code_strict_by_retry is not None
    written = summary.file_dict()
    assert written["code_by_retry"] == old["published_by_retry"]
    assert written["code_strict_by_retry"] == old["published_strict_by_retry"]
    assert not [key for key in written if key.startswith("published")]


def test_files_of_a_newer_format_are_refused_in_one_line(tmp_path: Path) -> None:
    run = _copy(V1 / "aime", tmp_path)
    raw = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps({**raw, "format_version": 99}))
    with pytest.raises(SummaryError, match=r"summary\.json: format_version 99 .* newer arcmemo"):
        load_summary(RunDirectory(run), "aime")
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**config, "format_version": 99}))
    with pytest.raises(RunDirError, match=r"config\.json: format_version 99 .* newer arcmemo"):
        RunDirectory(run).read_config()


def test_an_old_online_run_directory_still_reports(tmp_path: Path) -> None:
    run = load_run(V1 / "arc-online", data=str(FIXTURES / "arc" / "eval"))
    assert run.config is not None and [r.task_id for r in run.results] == ARC_TASKS
    assert run.summary["score"] == pytest.approx(0.75) and run.summary["complete"] is True
    assert set(run.tasks) == set(ARC_TASKS)
    # full snapshots of format 1: the last one loaded, the others counted
    last = Memory.load(V1 / "arc-online" / "memory" / "batch-0002.json")
    assert run.last_snapshot == last
    assert run.snapshot_sizes[-1] == len(last.concepts) + len(last.lessons)
    assert len(run.snapshot_sizes) == 3
    assert "<html" in render_report(run).lower()
    aime = load_run(V1 / "aime", data=str(FIXTURES / "aime" / "problems.jsonl"))
    assert aime.summary["pass@1"] == pytest.approx(4 / 9)
    assert "<html" in render_report(aime).lower()


def test_old_run_directories_still_table_with_and_without_their_summary(tmp_path: Path) -> None:
    for name in ("arc-online", "aime"):
        saved = tables.load_run(V1 / name)
        assert saved.caveat is None
        table = tables.build_table([saved])
        assert "| " in tables.render(table, "md")
        partial = _copy(V1 / name, tmp_path)
        (partial / "summary.json").unlink()
        computed = tables.load_run(partial)
        assert computed.caveat is not None and "no summary.json" in computed.caveat
        # the numbers computed from results.jsonl are those the run wrote
        assert tables.build_table([computed]).rows == table.rows


def test_a_run_without_a_summary_is_summarized_by_the_same_builder(tmp_path: Path) -> None:
    run = _copy(V1 / "arc-online", tmp_path)
    saved = json.loads((run / "summary.json").read_text())
    (run / "summary.json").unlink()
    rundir = RunDirectory(run)
    config = rundir.require_config()
    benchmark = BENCHMARKS.create(config.benchmark)
    try:
        built = summarize_directory(rundir, config, benchmark).file_dict()
    finally:
        benchmark.close()
    assert "wall_seconds" not in built  # unknown for a run that did not end
    for key in ("n_tasks", "n_solved", "complete", "score", "by_retry", "tokens", "calls"):
        assert built[key] == saved[key], key
    precision = built["write_precision"]
    # Counted apart since that run: every solution it confirmed was written.
    assert precision.pop("confirmed") == precision["written"]
    assert precision.pop("confirmed_right") == precision["right"]
    assert precision == saved["write_precision"]
    # with a task short of the plan, the run is incomplete
    order = json.loads((run / "task_order.json").read_text())
    (run / "task_order.json").write_text(json.dumps([*order, "not-done-yet"]))
    assert load_run(run).summary["complete"] is False


def test_a_run_of_a_benchmark_not_installed_still_gets_its_counts_and_score(
    tmp_path: Path,
) -> None:
    run = _copy(V1 / "aime", tmp_path)
    (run / "summary.json").unlink()
    config = json.loads((run / "config.json").read_text())
    config["benchmark"]["name"] = "not-installed"
    (run / "config.json").write_text(json.dumps(config))
    loaded = load_run(run)
    assert loaded.benchmark is None
    scores = [r.score for r in loaded.results]
    assert loaded.summary["n_tasks"] == 3 and loaded.summary["n_solved"] == 3
    assert loaded.summary["score"] == pytest.approx(sum(scores) / len(scores))
    assert loaded.summary["complete"] is True
