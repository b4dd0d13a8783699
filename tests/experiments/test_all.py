"""``experiments/all.sh`` with a fake ``arcmemo`` on PATH: it prints the dry-run estimate of
every run and their total, runs nothing paid without a yes, and everything with ``--yes``."""

from __future__ import annotations

from pathlib import Path

from tests.support.experiment_scripts import run_all


def calls(tmp: Path) -> list[str]:
    return (tmp / "calls.log").read_text().splitlines()


ARC_RUNS = [
    "arc-baseline",
    "arc-cheatsheet",
    "arc-continual",
    "arc-oe",
    "arc-ps",
    "arc-ps-no-selection",
    "train-solve",
]


def test_estimate_first_and_nothing_paid_without_a_yes(tmp_path: Path) -> None:
    done = run_all(tmp_path, answer="n\n")
    assert done.returncode == 1, done.stderr
    rows = [line.split()[0] for line in done.stdout.splitlines()[2:] if line.startswith("  ")]
    # One row per run, however many scripts run it (continual.sh runs oe.sh too).
    assert rows[: len(ARC_RUNS) + 1] == [*ARC_RUNS, "total"]
    total = next(line for line in done.stdout.splitlines() if line.startswith("  total"))
    assert total.split() == [
        "total", "7", "-", "21", "7,000", "-", "14,000", "70", "-", "210", "$7.00", "-", "$14.00"
    ]  # fmt: skip
    assert "arcmemo abstract --from $RUNS/train-solve --memory $RUNS/memory-oe.json" in done.stdout
    aime_dir = tmp_path / ".local" / "share" / "arcmemo" / "aime"
    assert (
        f"skipped aime/baseline.sh: no AIME 2025 in {aime_dir} (arcmemo data fetch" in done.stderr
    )
    assert "[y/N]" in done.stderr and "nothing run" in done.stderr
    made = calls(tmp_path)
    assert made and all(
        c.startswith("memory ") or (c.startswith("run ") and c.endswith("--dry-run")) for c in made
    )
    assert not (tmp_path / "runs").exists()  # the estimate ran in a scratch folder


def test_aime_runs_on_the_splits_fetched_into_the_user_data_folder(tmp_path: Path) -> None:
    aime_dir = tmp_path / ".local" / "share" / "arcmemo" / "aime"
    aime_dir.mkdir(parents=True)
    (aime_dir / "aime_2025.jsonl").write_text("")
    done = run_all(tmp_path, answer="n\n")
    assert "skipped aime/baseline.sh" not in done.stderr
    assert "skipped aime/ps.sh: no AIME 2022 2023 in" in done.stderr
    assert any(c.startswith("run aime --split 2025") for c in calls(tmp_path))


def test_yes_runs_every_script(tmp_path: Path) -> None:
    for year in (2022, 2023, 2025):
        (tmp_path / f"aime_{year}.jsonl").write_text("")
    done = run_all(tmp_path, "--yes", ARCMEMO_DATA_DIR=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "[y/N]" not in done.stderr
    real = [c for c in calls(tmp_path) if "--dry-run" not in c]
    outs = {c.split("--out ")[1].split()[0] for c in real if c.startswith("run ")}
    runs = tmp_path / "runs"
    assert {str(runs / name) for name in ARC_RUNS} <= outs
    assert {str(runs / f"aime-{name}") for name in ("baseline", "ps", "oe")} <= outs
    assert any(c.startswith("abstract --from") for c in real)
    # The AIME pilot's option: OE lessons abstracted from the AIME training solves.
    assert any(
        c.startswith(f"abstract --from {runs}/aime-train-2022 --memory {runs}/memory-aime-oe.json")
        and "--memory-format oe" in c
        for c in real
    )
    assert any(c.startswith("table ") for c in real)


def test_answering_yes_runs_them(tmp_path: Path) -> None:
    done = run_all(tmp_path, answer="y\n")
    assert done.returncode == 0, done.stderr
    assert any(c.startswith("run ") and "--dry-run" not in c for c in calls(tmp_path))


def test_missing_barc_stops_before_anything(tmp_path: Path) -> None:
    done = run_all(tmp_path, BOOTSTRAP="seeds")
    assert done.returncode == 2 and "needs BARC_DIR" in done.stderr
    assert not (tmp_path / "calls.log").exists()
