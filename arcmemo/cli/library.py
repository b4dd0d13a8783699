"""``arcmemo library``: the executable concept library (build, stats, test, refactor)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import click

from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import (
    open_role_model,
    run_role_options,
    sandbox_options,
    sandbox_spec,
)
from arcmemo.memory.untrusted import display_copy
from arcmemo.sandbox.text import clean_text, visible_text

BUILD_REPORT_SUFFIX = ".library-build.json"
REFACTOR_REPORT = "refactor-report.json"

_programs_option = click.option(
    "--from-programs",
    "programs_dir",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="A folder of <task id>.py verified programs (as `arcmemo seeds import-barc` writes).",
)
_memory_option = click.option(
    "--memory",
    "memory_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The memory file.",
)
_split_option = click.option(
    "--split", default=None, help="Where the programs' tasks are (default: found by id)."
)
_data_option = click.option("--data", default=None, help="Task file or folder of the tasks.")


@click.group()
def library() -> None:
    """Tested library functions extracted from verified programs, kept in the memory."""


def _read_programs(folder: Path) -> dict[str, str]:
    files = sorted(folder.glob("*.py"))
    if not files:
        raise FileNotFoundError(f"{folder}: no <task id>.py program files")
    return {path.stem: path.read_text(encoding="utf-8") for path in files}


@contextmanager
def _opened(options: dict[str, Any]) -> Iterator[Any]:
    from arcmemo.benchmarks.base import BENCHMARKS
    from arcmemo.sandbox import SANDBOXES

    benchmark = BENCHMARKS.create("arc-agi-1")
    sandbox = SANDBOXES.create(sandbox_spec(options))
    try:
        yield benchmark, sandbox
    finally:
        sandbox.close()
        benchmark.close()


def _pairs(
    benchmark: Any, ids: list[str], split: str | None, data: str | None, *, tests: bool
) -> dict[str, list[Any]]:
    if split is None and data is None:
        tasks = benchmark.find_tasks(ids)
    else:
        tasks = benchmark.load(split=split, data=data, task_ids=ids, limit=None)
    pairs: dict[str, list[Any]] = {}
    for task in tasks:
        examples = [(pair.input, pair.output) for pair in task.train]
        if tests and task.test_outputs is not None:
            examples += list(zip(task.test_inputs, task.test_outputs, strict=True))
        pairs[task.id] = examples
    return pairs


class RunPrograms(NamedTuple):
    """What :func:`_run_programs` reads from a run."""

    programs: dict[str, str]
    pairs: dict[str, list[Any]]
    unverified: int
    train: dict[str, int]  # hindsight task -> how many of its pairs are train pairs
    model: str  # the run's solver model


def _run_programs(benchmark: Any, run_dir: Path, *, hindsight: bool) -> RunPrograms:
    """A finished run's train-verified programs with their tasks' train pairs, and with
    ``hindsight`` the hindsight programs of its other tasks (:mod:`arcmemo.library.hindsight`)
    with their hindsight tasks' pairs; and how many tasks had no verified program."""
    from arcmemo.library.hindsight import hindsight_id, hindsight_pairs
    from arcmemo.run.directory.reader import RunDirectory

    rundir = RunDirectory(run_dir)
    config = rundir.require_config()
    results = {r.task_id: r for r in rundir.ordered_results()}
    tasks = benchmark.load(split=config.split, data=config.data, task_ids=list(results), limit=None)
    programs: dict[str, str] = {}
    pairs: dict[str, list[Any]] = {}
    train: dict[str, int] = {}
    unverified = 0
    for task in tasks:
        finals = [a.steps[-1] for a in results[task.id].attempts if a.steps]
        verified = next((s for s in finals if s.verified and s.candidate), None)
        if verified is not None and verified.candidate:
            programs[task.id] = verified.candidate
            pairs[task.id] = [(pair.input, pair.output) for pair in task.train]
            continue
        unverified += 1
        inputs = [pair.input for pair in task.train]
        for step in finals if hindsight else []:
            found = hindsight_pairs(step, inputs, task.test_inputs)
            if found is not None and step.candidate:
                programs[hindsight_id(task.id)] = step.candidate
                pairs[hindsight_id(task.id)] = found
                train[hindsight_id(task.id)] = len(inputs)
                break
    return RunPrograms(programs, pairs, unverified, train, str(config.model))


@library.command("build")
@click.option(
    "--from-programs",
    "programs_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="A folder of <task id>.py verified programs (as `arcmemo seeds import-barc` writes).",
)
@click.option(
    "--from",
    "run_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="A finished run directory: its train-verified programs.",
)
@click.option(
    "--hindsight",
    is_flag=True,
    help="With --from: also each unsolved task's failed program that ran on every train and "
    "test input, as the program of the hindsight task its outputs define (never a solution "
    "of the task itself).",
)
@click.option(
    "--puzzles",
    "puzzles_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="With --hindsight: also save each hindsight task as a helper puzzle in this folder, "
    "for the concept whose library function its program calls (see `arcmemo puzzles show`).",
)
@_memory_option
@_split_option
@_data_option
@sandbox_options
def build_command(
    programs_dir: Path | None,
    run_dir: Path | None,
    hindsight: bool,
    puzzles_dir: Path | None,
    memory_path: Path,
    split: str | None,
    data: str | None,
    **options: Any,
) -> None:
    """Trace the programs' helpers on their tasks' train pairs in the sandbox and write the
    functions whose recorded tests pass into the memory (created when missing); the full
    report goes to MEMORY.library-build.json."""
    from arcmemo.core.files import atomic_write_text
    from arcmemo.library import build_library
    from arcmemo.library.hindsight import PREFIX, mark_hindsight
    from arcmemo.memory.schema import Memory
    from arcmemo.memory.store import editing, save_memory

    if (programs_dir is None) == (run_dir is None):
        raise click.UsageError("give exactly one of --from-programs DIR or --from RUN_DIR")
    if hindsight and run_dir is None:
        raise click.UsageError("--hindsight reads a run's failed programs: give --from RUN_DIR")
    if puzzles_dir is not None and not hindsight:
        raise click.UsageError("--puzzles saves hindsight tasks: give --hindsight")
    with user_errors():
        programs = _read_programs(programs_dir) if programs_dir is not None else {}
        with _opened(options) as (benchmark, sandbox):
            if run_dir is not None:
                read = _run_programs(benchmark, run_dir, hindsight=hindsight)
                programs, pairs, unverified = read.programs, read.pairs, read.unverified
            else:
                pairs = _pairs(benchmark, list(programs), split, data, tests=False)
            if not memory_path.exists():
                save_memory(Memory(domain="arc"), memory_path)
            with editing(memory_path) as memory:
                report = build_library(
                    programs,
                    pairs,
                    memory,
                    sandbox,
                    entry_points=type(benchmark).entry_points,
                )
                only_hindsight = mark_hindsight(memory)
                saved = (
                    _hindsight_puzzles(memory, read, puzzles_dir, str(memory_path))
                    if puzzles_dir is not None
                    else []
                )
        if puzzles_dir is not None:
            click.echo(f"{len(saved)} hindsight puzzles written to {clean_text(str(puzzles_dir))}")
        if hindsight:
            taken = sum(1 for task in programs if task.startswith(PREFIX))
            click.echo(
                f"{taken} hindsight programs of {unverified} tasks without a verified one; "
                f"{only_hindsight} functions of the memory come only from hindsight programs "
                "(marked hindsight; no task's solved count changes)"
            )
        report_path = memory_path.with_name(memory_path.name + BUILD_REPORT_SUFFIX)
        atomic_write_text(report_path, report.model_dump_json(indent=2) + "\n")
    click.echo(
        f"{report.functions} library functions ({report.functions_tested} with tests, "
        f"{report.tests_passed}/{report.tests} tests passing) from {report.helpers} helpers "
        f"of {report.programs} programs ({report.candidates} after the AST dedupe, "
        f"{report.merged_by_behaviour} merged by behaviour); {report.extended} functions "
        f"the memory had extended; {report.attached} joined existing concepts, "
        f"{report.proposed} concepts proposed"
    )
    for where, why in list(report.dropped.items())[:20]:
        click.echo(f"dropped {where}: {why}")
    for task, why in list(report.errors.items())[:20]:
        click.echo(f"no calls from {task}: {why}")
    click.echo(f"report: {report_path}")


def _hindsight_puzzles(
    memory: Any, read: RunPrograms, folder: Path, memory_name: str
) -> list[Path]:
    """Each hindsight task as a helper puzzle for the concept of the first library function
    its program was traced calling (:mod:`arcmemo.benchmarks.arc.puzzles.hindsight`)."""
    from arcmemo.benchmarks.arc.puzzles.hindsight import write_hindsight_puzzle
    from arcmemo.library.hindsight import original_task

    written: list[Path] = []
    for task, program in read.programs.items():
        original = original_task(task)
        if original is None:
            continue
        found = next(
            (
                (concept, function)
                for concept in memory.concepts
                if concept.retired is None
                for function in concept.functions
                if any(call.task_id == task for call in function.tests)
            ),
            None,
        )
        if found is None:
            continue
        concept, function = found
        path = write_hindsight_puzzle(
            folder,
            concept=concept,
            function=function.name,
            task_id=original,
            program=program,
            pairs=read.pairs[task],
            train=read.train[task],
            model=read.model,
            memory=memory_name,
        )
        if path is not None:
            written.append(path)
    return written


@library.command("stats")
@click.argument("memory_path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
def stats_command(memory_path: Path, as_json: bool) -> None:
    """Count the memory's library: functions, tests, reuse and the tokens sharing saves."""
    from arcmemo.library.stats import REUSE_THRESHOLD, library_stats
    from arcmemo.memory.store import load_memory

    with user_errors():
        stats = library_stats(display_copy(load_memory(memory_path)))
    if as_json:
        click.echo(stats.model_dump_json(indent=2))
        return
    click.echo(f"functions            {stats.functions} ({stats.functions_tested} with tests)")
    click.echo(f"recorded tests       {stats.tests}")
    click.echo(f"concepts with code   {stats.concepts} ({stats.proposed_concepts} proposed)")
    click.echo(f"reused (>= {REUSE_THRESHOLD} tasks)     {stats.reused}")
    if stats.hindsight:
        click.echo(f"hindsight only       {stats.hindsight} (from failed programs that ran)")
    click.echo(f"imported             {stats.imported} functions, {stats.imports} imports")
    saved = stats.tokens_in_programs - stats.tokens_library
    click.echo(
        f"tokens               {stats.tokens_library} in the library, "
        f"{stats.tokens_in_programs} as copies in programs ({saved} saved by sharing)"
    )
    for name, count in stats.top_reused.items():
        click.echo(f"  {name}: {count} tasks")


@library.command("test")
@click.argument("memory_path", type=click.Path(path_type=Path, dir_okay=False))
@sandbox_options
def test_command(memory_path: Path, **options: Any) -> None:
    """Re-run every function's recorded tests standalone in the sandbox; exit 1 when any
    fails."""
    from arcmemo.library import run_recorded_tests
    from arcmemo.memory.store import load_memory
    from arcmemo.sandbox import SANDBOXES

    with user_errors():
        memory = load_memory(memory_path)
        with SANDBOXES.create(sandbox_spec(options)) as sandbox:
            results = run_recorded_tests(memory, sandbox)
    failing = [r for r in results if not r.ok]
    tests = sum(r.tests for r in results)
    passed = sum(r.passed for r in results)
    for result in failing:
        click.echo(visible_text(f"FAIL {result.name}: {'; '.join(result.failures[:3])}"))
    click.echo(
        f"{passed}/{tests} recorded tests pass; "
        f"{len(results) - len(failing)}/{len(results)} functions pass all theirs"
    )
    if failing:
        sys.exit(1)


@library.command("refactor")
@_programs_option
@_memory_option
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder for the refactored <task id>.py programs and refactor-report.json.",
)
@_split_option
@_data_option
@sandbox_options
@run_role_options("abstract")
def refactor_command(
    programs_dir: Path,
    memory_path: Path,
    out: Path,
    split: str | None,
    data: str | None,
    **options: Any,
) -> None:
    """Rewrite the programs to import the library functions with their helpers' behaviour,
    re-verify each on its task (train and labelled test pairs; a failing one is kept as it
    was) and report the tokens before and after. With a model for the abstract role
    (--model-role abstract=SPEC, --aux-model or --model), the model proposes shared helpers
    for groups of programs (see docs/learning-from-failure.md)."""
    from arcmemo.core.files import atomic_write_text
    from arcmemo.library.refactor import refactor_programs
    from arcmemo.memory.store import load_memory

    with user_errors():
        model = open_role_model(options, "abstract", call_log_path=out / "calls.jsonl")
    if model is not None:
        _model_refactor(programs_dir, memory_path, out, split, data, model, options)
        return
    with user_errors():
        programs = _read_programs(programs_dir)
        memory = load_memory(memory_path)
        with _opened(options) as (benchmark, sandbox):
            pairs = _pairs(benchmark, list(programs), split, data, tests=True)
            report, kept = refactor_programs(
                programs, pairs, memory, sandbox, entry_points=type(benchmark).entry_points
            )
        out.mkdir(parents=True, exist_ok=True)
        for task_id, text in kept.items():
            atomic_write_text(out / f"{task_id}.py", text)
        atomic_write_text(out / REFACTOR_REPORT, report.model_dump_json(indent=2) + "\n")
    for program in report.programs:
        if not program.passed:
            click.echo(f"kept {program.task_id} as it was: {program.error}")
    changed = sum(1 for p in report.programs if p.imports and p.passed)
    click.echo(
        f"{report.passing}/{len(report.programs)} programs pass ({changed} import library "
        f"functions); tokens {report.tokens_before} -> {report.tokens_after} "
        f"(+{report.library_tokens} for the library functions they import, once)"
    )
    click.echo(f"report: {out / REFACTOR_REPORT}")


def _model_refactor(
    programs_dir: Path,
    memory_path: Path,
    out: Path,
    split: str | None,
    data: str | None,
    model: Any,
    options: dict[str, Any],
) -> None:
    """``library refactor`` with a model: :mod:`arcmemo.library.model_refactor`."""
    from arcmemo.core.files import atomic_write_text
    from arcmemo.library.model_refactor import refactor_sync
    from arcmemo.memory.store import editing
    from arcmemo.sandbox.text import clean_text

    with user_errors():
        programs = _read_programs(programs_dir)
        with _opened(options) as (benchmark, sandbox):
            tasks = (
                benchmark.find_tasks(list(programs))
                if split is None and data is None
                else (benchmark.load(split=split, data=data, task_ids=list(programs), limit=None))
            )
            inputs = {t.id: ([p.input for p in t.train], list(t.test_inputs)) for t in tasks}
            programs = {t: s for t, s in programs.items() if t in inputs}
            with editing(memory_path) as memory:
                report, kept = refactor_sync(programs, inputs, memory, sandbox, model)
        out.mkdir(parents=True, exist_ok=True)
        for task_id, text in kept.items():
            atomic_write_text(out / f"{task_id}.py", text)
        atomic_write_text(out / REFACTOR_REPORT, report.model_dump_json(indent=2) + "\n")
    for failed in report.failed_proposals[:20]:
        click.echo(clean_text(f"unusable proposal for {failed}"))
    for rewrite in report.rewrites:
        if not rewrite.kept:
            click.echo(clean_text(f"rejected {rewrite.task_id}: {rewrite.rejected}"))
    for name, why in report.functions_rejected.items():
        click.echo(clean_text(f"function {name} not kept: {why}"))
    for name in report.functions_pruned:
        click.echo(clean_text(f"pruned {name}: no program imports it any more"))
    by = ", ".join(f"{count} by {how}" for how, count in report.groups_by.items())
    click.echo(
        f"{report.groups} groups ({by or 'none'}), {report.model_calls} model calls, "
        f"{report.proposals} usable proposals; rewrites kept {report.kept}, rejected "
        f"{report.rejected}; functions kept {len(report.functions_kept)}, reused "
        f"{len(report.functions_reused)}; tokens "
        f"{report.tokens_before} -> {report.tokens_after} "
        f"(+{report.library_tokens} for the kept functions, once)"
    )
    click.echo(f"report: {out / REFACTOR_REPORT}")
