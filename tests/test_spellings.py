"""One word per idea: retired spellings live only in the alias table (arcmemo.core.spellings),
the glossary and the changelog, and what older arcmemo wrote with them still reads."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from arcmemo.benchmarks.base import RunDefaults
from arcmemo.core.spellings import RETIRED, renamed_fields
from arcmemo.models.config import ModelConfig
from arcmemo.run.config import RunConfig
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import Batch

ROOT = Path(__file__).resolve().parents[1]
# Where the words users and contributors read are; and the files that list retired spellings.
SEARCHED = ("arcmemo", "prompts", "docs", "README.md")
LISTS_RETIRED = {"arcmemo/core/spellings.py", "docs/glossary.md", "CHANGELOG.md"}
V1_ARC = ROOT / "tests" / "fixtures" / "rundir" / "v1" / "arc-online"


def _text_files() -> list[Path]:
    files: list[Path] = []
    for name in SEARCHED:
        path = ROOT / name
        found = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        files += [p for p in found if "__pycache__" not in p.parts and p.suffix != ".png"]
    return files


def test_no_retired_spelling_outside_the_alias_table_glossary_and_changelog() -> None:
    patterns = [(r.old, re.compile(r.pattern)) for r in RETIRED if r.pattern is not None]
    assert patterns, "the alias table names no spelling to look for"
    found = []
    for path in _text_files():
        relative = path.relative_to(ROOT).as_posix()
        if relative in LISTS_RETIRED:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            found += [f"{relative}:{number}: {old}" for old, p in patterns if p.search(line)]
    assert not found, "retired spellings (use the new word; see docs/glossary.md):\n" + "\n".join(
        found
    )


def test_the_check_finds_a_retired_flag() -> None:
    (pattern,) = [r.pattern for r in RETIRED if r.old == "--retries"]
    assert pattern is not None
    assert re.search(pattern, "run it with --retries 2")
    assert not re.search(pattern, "--request-retries 2 and --feedback-rounds 2")


def test_the_glossary_lists_every_retired_spelling_with_its_replacement() -> None:
    glossary = (ROOT / "docs" / "glossary.md").read_text()
    assert "## Retired spellings" in glossary
    retired = glossary.split("## Retired spellings", 1)[1]
    rows = retired.splitlines()
    for spelling in RETIRED:
        assert any(f"`{spelling.old}`" in row and f"`{spelling.new}`" in row for row in rows), (
            spelling
        )


def test_old_field_names_read_as_the_new_ones() -> None:
    config = RunConfig(
        benchmark="arc-agi-1",
        model="scripted:x",
        retries=1,  # type: ignore[call-arg]
        models={"max_retries": 3},
        out=Path("run"),
    )
    assert config.feedback_rounds == 1 and config.models.request_retries == 3
    assert ModelConfig(max_retries=0).request_retries == 0
    assert RunDefaults(retries=2).feedback_rounds == 2  # type: ignore[call-arg]
    batch = Batch.model_validate({"index": 0, "round": 1, "pass_number": 0, "task_ids": []})
    assert batch.rerun == 1
    # The new spelling wins where a file has both.
    assert renamed_fields({"retries": 1, "feedback_rounds": 2}, {"retries": "feedback_rounds"}) == {
        "feedback_rounds": 2
    }


def test_a_run_directory_written_with_the_old_spellings_reads(tmp_path: Path) -> None:
    # Recorded by an older arcmemo: config.json says retries and models.max_retries, the
    # schedule's batches round.
    run = Path(shutil.copytree(V1_ARC, tmp_path / "arc-online"))
    saved = (run / "config.json").read_text()
    assert '"retries"' in saved and '"max_retries"' in saved
    assert '"round"' in (run / "schedule.json").read_text()
    rundir = RunDirectory(run)
    config = rundir.require_config()
    assert config.feedback_rounds == 2 and config.models.request_retries == 6
    schedule = rundir.read_schedule()
    assert schedule is not None and all(b.rerun == 0 for b in schedule.batches)
    assert (run / "config.json").read_text() == saved  # read, never rewritten


@pytest.mark.parametrize("old", ["format", "retries"])
def test_inspect_task_arguments_keep_their_old_names(old: str) -> None:
    from arcmemo.core.spellings import INSPECT_TASK_ARGS

    heard: list[str] = []
    renamed = renamed_fields({old: 1}, INSPECT_TASK_ARGS, warn=heard.append)
    assert renamed == {INSPECT_TASK_ARGS[old]: 1}
    assert heard == [f"{old} is deprecated; use {INSPECT_TASK_ARGS[old]}"]
