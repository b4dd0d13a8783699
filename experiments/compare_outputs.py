"""Are the outputs the same before and after a change? Runs a fixed set of scripted
``arcmemo`` commands with each of two checkouts and compares what they wrote.

    python experiments/compare_outputs.py OLD_CHECKOUT NEW_CHECKOUT
    python experiments/compare_outputs.py OLD NEW --barc ../BARC      # + the seed conversion
    python experiments/compare_outputs.py CHECKOUT --keep DIR          # one checkout, kept

A checkout is a repository root (``git worktree add ../old COMMIT`` makes one); each
command runs as ``python -m arcmemo`` with ``PYTHONPATH`` = that checkout, in a fresh
folder of its own, with the same inputs: the scripted model
``tests/fixtures/scripts/recorded_runs.py`` and the task files of *this* checkout, so only
the code under test differs. The runs: a memory from the ARC seed; an ARC run with that
memory, ``--select all`` and online updates; an AIME run; an ARC run killed after 5 model
calls and resumed; ``memory validate``/``show``/``stats`` of the memory written, ``table``
and ``report`` of the runs (and with ``--barc``, ``seeds import-barc`` of a BARC checkout).

Every file written is compared after normalising what differs from one run to the next
by nature: timestamps and dates, durations and latencies, the folder each checkout ran in,
the run ids and random hex ids, and the report's embedded timing; JSON files are compared
as data (key order ignored), JSON lines line by line, other files as text (binary files
by size). Lock files and the response cache's database are skipped (the calls they hold
are in ``calls.jsonl``). Exit status 0 when every command exited the same way and every
file is the same, 1 otherwise, with the differences listed (the first lines of each).

It lives here, not in the test suite, because it needs two checkouts and minutes; the test
suite's recorded runs of an older release are in ``tests/fixtures/legacy/``, which this
script also wrote (``--keep``).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
MODEL = FIXTURES / "scripts" / "recorded_runs.py"
ARC_TASKS = "66e6c45b,00576224,68b67ca3,e345f17b,bbb1b8b6,ca8de6ea"
STOP_AFTER = 5

# (name, environment, arguments); {model}, {arc}, {aime}, {barc} are filled in. Paths are
# relative to the folder the commands run in.
_COMMON = ["--model", "scripted:{model}", "--concurrency", "1", "--cache-dir", "cache"]
COMMANDS: list[tuple[str, dict[str, str], list[str]]] = [
    ("memory init", {}, ["memory", "init", "--domain", "arc", "--out", "memory.json"]),
    ("arc online", {}, [
        "run", "arc-agi-1", "--data", "{arc}", "--tasks", ARC_TASKS, *_COMMON,
        "--attempts", "2", "--feedback-rounds", "2", "--memory", "memory.json",
        "--memory-out", "memory-out.json", "--select", "all", "--update", "online",
        "--update-every", "2", "--out", "arc-online",
    ]),
    ("aime", {}, [
        "run", "aime", "--data", "{aime}", *_COMMON, "--attempts", "3", "--out", "aime",
    ]),
    ("arc interrupted", {"RECORDED_RUNS_STOP_AFTER": str(STOP_AFTER),
                         "RECORDED_RUNS_CALL_LOG": "arc-interrupted-calls.txt"}, [
        "run", "arc-agi-1", "--data", "{arc}", "--tasks", ARC_TASKS, *_COMMON,
        "--attempts", "2", "--feedback-rounds", "1", "--out", "arc-interrupted",
    ]),
]  # fmt: skip
# After the interrupted run is copied aside (its state as the kill left it):
AFTER_COPY: list[tuple[str, dict[str, str], list[str]]] = [
    ("arc resumed", {}, [
        "run", "arc-agi-1", "--data", "{arc}", "--tasks", ARC_TASKS, *_COMMON,
        "--attempts", "2", "--feedback-rounds", "1", "--out", "arc-interrupted",
    ]),
    ("memory validate", {}, ["memory", "validate", "memory-out.json"]),
    ("memory show", {}, ["memory", "show", "memory-out.json", "--view", "full"]),
    ("memory stats", {}, ["memory", "stats", "memory-out.json"]),
    ("table arc", {}, ["table", "arc-online", "arc-interrupted"]),
    ("table aime", {}, ["table", "aime"]),
    ("report arc", {}, ["report", "arc-online", "--out", "report-arc.html"]),
    ("report aime", {}, ["report", "aime", "--out", "report-aime.html"]),
]  # fmt: skip
BARC: tuple[str, dict[str, str], list[str]] = (
    "seeds import-barc",
    {},
    ["seeds", "import-barc", "{barc}", "--out", "barc-seeds"],
)
SKIPPED = re.compile(
    r"(\.lock$|^cache|^inputs/|\.sqlite|-wal$|-shm$|__pycache__"
    # Where the kill lands depends on timing (which check finished first), and so does the
    # killed and resumed run's accounting: only its results (and tables) are compared.
    r"|^arc-interrupted-at-kill/|^arc-interrupted-calls\.txt$|^_output/arc-(interrupted|resumed)"
    r"|^arc-interrupted/(calls\.jsonl|cut_off_calls\.jsonl|summary\.json)$)"
)

_NORMALISE = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d( UTC)?"), "<time>"),
    (re.compile(r"\b\d+:\d\d:\d\d\b"), "<clock>"),
    (re.compile(r"\b\d{8}-\d{6}\b"), "<stamp>"),
    (re.compile(r"\b[0-9a-f]{16}\b"), "<hex>"),
    (
        re.compile(
            r"\b[0-9a-f]{32}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
        ),
        "<hex>",
    ),
    (re.compile(r"\b\d+(\.\d+)? ?(s|ms|seconds?)\b"), "<duration>"),
    (re.compile(r"\b(pid|PID)[ =:]\d+"), "<pid>"),
]
_TIMING_KEYS = re.compile(
    r"(^|_)(at|time|times|seconds|elapsed|latency|duration|started|ended|finished|created|"
    r"updated|wall|pid|host|hostname|run_id)(_|$)|_s$|_ms$"
    r"|^sha256$"  # a memory snapshot's checksum: of a text holding its timestamps
)


def _run(checkout: Path, folder: Path, name: str, env: dict[str, str], args: list[str],
         fill: dict[str, str]) -> dict[str, Any]:  # fmt: skip
    command = [sys.executable, "-m", "arcmemo", *(a.format(**fill) for a in args)]
    environment = {
        **os.environ, "PYTHONPATH": str(checkout), "COLUMNS": "120", "NO_COLOR": "1",
        "ARCMEMO_CACHE_DIR": str(folder / "cache"), **env,
    }  # fmt: skip
    done = subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, check=False
    )
    (folder / "_output").mkdir(exist_ok=True)
    safe = name.replace(" ", "-")
    (folder / "_output" / f"{safe}.txt").write_text(
        f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
    )
    return {"name": name, "exit": done.returncode}


def run_all(checkout: Path, folder: Path, *, barc: Path | None) -> list[dict[str, Any]]:
    """Run every command with ``checkout`` in ``folder``; what each exited with."""
    # The inputs are copied in and named by relative paths, so the outputs hold no path of
    # this machine but the folder's own.
    inputs = folder / "inputs"
    shutil.copytree(FIXTURES / "arc" / "eval", inputs / "arc" / "eval")
    shutil.copytree(FIXTURES / "aime", inputs / "aime")
    (inputs / "scripts").mkdir()
    for script in (MODEL, MODEL.parent / "arc_plan.py"):
        shutil.copy(script, inputs / "scripts" / script.name)
    fill = {
        "model": f"inputs/scripts/{MODEL.name}",
        "arc": "inputs/arc/eval",
        "aime": "inputs/aime/problems.jsonl",
        "barc": str(barc) if barc else "",
    }
    outcomes = [_run(checkout, folder, *command, fill) for command in COMMANDS]
    if (folder / "arc-interrupted").exists():
        shutil.copytree(folder / "arc-interrupted", folder / "arc-interrupted-at-kill")
        shutil.copytree(folder / "cache", folder / "cache-at-kill")
    outcomes += [_run(checkout, folder, *command, fill) for command in AFTER_COPY]
    if barc is not None:
        outcomes.append(_run(checkout, folder, *BARC, fill))
    return outcomes


def normalise_text(text: str, folder: Path) -> str:
    for root in {str(folder), str(folder.resolve())}:
        text = text.replace(root, "<run folder>")
    for checkout in {str(ROOT), str(ROOT.resolve())}:
        text = text.replace(checkout, "<this checkout>")
    for pattern, replacement in _NORMALISE:
        text = pattern.sub(replacement, text)
    return text


def normalise_data(data: Any, folder: Path) -> Any:
    if isinstance(data, dict):
        return {
            key: "<varies>" if _TIMING_KEYS.search(str(key)) else normalise_data(value, folder)
            for key, value in data.items()
        }
    if isinstance(data, list):
        return [normalise_data(item, folder) for item in data]
    if isinstance(data, str):
        return normalise_text(data, folder)
    return data


def _comparable(path: Path, folder: Path) -> Any:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return f"<binary, {len(raw)} bytes>"
    if path.suffix == ".json":
        try:
            return normalise_data(json.loads(text), folder)
        except json.JSONDecodeError:
            pass
    if path.suffix == ".jsonl":
        rows = []
        for line in text.splitlines():
            try:
                rows.append(normalise_data(json.loads(line), folder))
            except json.JSONDecodeError:
                rows.append(normalise_text(line, folder))
        return rows
    return normalise_text(text, folder)


def _lines(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.splitlines()
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


def compare(old: Path, new: Path, ran_in: Path) -> list[str]:
    """The differences between two folders ``run_all`` filled (both in ``ran_in``, then
    moved), one message each."""

    def files(folder: Path) -> set[str]:
        found = (p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        return {name for name in found if not SKIPPED.search(name)}

    old_files, new_files = files(old), files(new)
    problems = [f"only in the old checkout's output: {n}" for n in sorted(old_files - new_files)]
    problems += [f"only in the new checkout's output: {n}" for n in sorted(new_files - old_files)]
    for name in sorted(old_files & new_files):
        before, after = _comparable(old / name, ran_in), _comparable(new / name, ran_in)
        if before != after:
            diff = difflib.unified_diff(_lines(before), _lines(after), "old", "new", lineterm="")
            problems.append(f"{name} differs:\n  " + "\n  ".join(list(diff)[2:14]))
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", type=Path, nargs="+", help="OLD NEW, or one with --keep")
    parser.add_argument("--barc", type=Path, help="A BARC checkout: compare import-barc too.")
    parser.add_argument("--keep", type=Path, help="Write the outputs here (one checkout).")
    options = parser.parse_args()
    if options.keep is not None:
        (checkout,) = options.checkouts
        outcomes = run_all(checkout.resolve(), options.keep.resolve(), barc=options.barc)
        print("\n".join(f"{o['name']}: exit {o['exit']}" for o in outcomes))
        return 0
    old, new = (c.resolve() for c in options.checkouts)
    with tempfile.TemporaryDirectory(prefix="compare-outputs-") as scratch:
        # Both run in the same folder, one after the other, so paths inside compare equal.
        work, results = Path(scratch) / "work", {}
        for label, checkout in (("old", old), ("new", new)):
            results[label] = run_all(checkout, work, barc=options.barc)
            work.rename(Path(scratch) / label)
        problems = [
            f"{o['name']}: exit {o['exit']} (old) against {n['exit']} (new)"
            for o, n in zip(results["old"], results["new"], strict=True)
            if o["exit"] != n["exit"]
        ]
        problems += compare(Path(scratch) / "old", Path(scratch) / "new", work)
    commands = len(results["old"])
    print(f"{commands} commands at {old} and at {new}; exits: "
          + ", ".join(f"{o['name']} {o['exit']}" for o in results["old"]))  # fmt: skip
    if not problems:
        print("no difference (after normalising times, durations, folders and random ids)")
        return 0
    print(f"{len(problems)} difference(s):")
    print("\n".join(problems))
    return 1


if __name__ == "__main__":
    sys.exit(main())
