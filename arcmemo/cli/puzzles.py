"""``arcmemo puzzles``: generate helper puzzles that exercise concepts, re-check them, show them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from arcmemo.cli.errors import user_errors
from arcmemo.cli.options import model_options, open_cli_model, sandbox_options, sandbox_spec
from arcmemo.memory.untrusted import display_copy
from arcmemo.sandbox.text import clean_text, visible_text


@contextlib.contextmanager
def _puzzle_errors() -> Iterator[None]:
    from arcmemo.benchmarks.arc.puzzles.generate import PuzzleGenerationError
    from arcmemo.benchmarks.arc.puzzles.store import PuzzleStoreError

    with user_errors():
        try:
            yield
        except (PuzzleGenerationError, PuzzleStoreError) as error:
            raise click.ClickException(str(error)) from None


@click.group("puzzles")
def puzzles() -> None:
    """Helper puzzles: a generator program per concept, kept only if the concept is needed."""


@puzzles.command("generate")
@click.option(
    "--memory",
    "memory_path",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="Memory file holding the concepts.",
)
@click.option("--concepts", required=True, help="Comma-separated concept names or ids.")
@click.option("--per-concept", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="First puzzle seed.")
@click.option("--train", type=click.IntRange(min=4), default=4, show_default=True)
@click.option("--test", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Sandbox seconds to build one puzzle.",
)
@click.option("--repairs", type=click.IntRange(min=0), default=1, show_default=True)
@click.option(
    "--references",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="Folder of reference routines (<concept id>.py) of the memory's concepts, run as "
    "rival rules by the crux check [default: the checkout's puzzles/handwritten].",
)
@click.option(
    "--no-references", is_flag=True, help="Try no other concept as a rival (baselines only)."
)
@click.option(
    "--review-model",
    help="provider:model that reviews a concept routine with no property test (off if unset).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Puzzle folder to write (created if needed).",
)
@model_options
@sandbox_options
def generate(
    memory_path: Path,
    concepts: str,
    per_concept: int,
    seed: int,
    train: int,
    test: int,
    timeout: float,
    repairs: int,
    references: Path | None,
    no_references: bool,
    review_model: str | None,
    out: Path,
    **options: Any,
) -> None:
    """Write verified puzzles for each concept into OUT (failures go to OUT/failures)."""
    from arcmemo.benchmarks.arc.puzzles.generate import (
        generate_puzzles,
        resolve_concepts,
        routine_hints,
    )
    from arcmemo.benchmarks.arc.puzzles.references import default_reference_dir
    from arcmemo.benchmarks.arc.puzzles.store import write_outcome
    from arcmemo.benchmarks.arc.puzzles.verify import PuzzleConfig
    from arcmemo.memory.schema import Memory
    from arcmemo.models.client import open_model
    from arcmemo.models.config import ModelConfig
    from arcmemo.sandbox import SANDBOXES

    console = Console(stderr=True)
    with _puzzle_errors():
        memory = display_copy(Memory.load(memory_path))
        names = [name.strip() for name in concepts.split(",") if name.strip()]
        if not names:
            raise click.UsageError("--concepts names no concept")
        chosen = resolve_concepts(memory, names)
        config = PuzzleConfig(train=train, test=test, timeout_s=timeout)
        seeds = list(range(seed, seed + per_concept))
        out.mkdir(parents=True, exist_ok=True)
        (out / "logs").mkdir(exist_ok=True)
        model = open_cli_model(options, out / "logs" / "calls.jsonl")
        reviewer = (
            open_model(
                review_model,
                config=ModelConfig(
                    concurrency=options["concurrency"], cache=not options["no_cache"]
                ),
                call_log_path=out / "logs" / "review-calls.jsonl",
            )
            if review_model
            else None
        )
        reference_dir = None if no_references else references or default_reference_dir()
        written: list[Path] = []

        def done(concept: Any, outcome: Any) -> None:
            paths = write_outcome(
                out,
                concept,
                outcome,
                model=model.spec,
                memory=str(memory_path),
                config=config,
                hints=routine_hints(concept),
                wanted=len(seeds),
            )
            written.extend(paths)
            rounds = len(outcome.attempts)
            line = f"{concept.id}: {len(paths)}/{len(seeds)} puzzles after {rounds} attempt(s)"
            if outcome.error:
                line += f"; model call failed: {outcome.error}"
            elif len(paths) < len(seeds):
                final = outcome.final
                reasons = final.error if final and final.error else None
                if reasons is None and final is not None:
                    reasons = "; ".join(
                        f"seed {p.seed} {p.report.summary()}" for p in final.puzzles if not p.passed
                    )
                line += f"; failed ({reasons}), see {out / 'failures' / (concept.id + '.json')}"
            color = "[green]" if len(paths) == len(seeds) else "[red]"
            console.print(color + escape(clean_text(line)))

        async def go() -> None:
            try:
                await generate_puzzles(
                    model,
                    memory,
                    chosen,
                    sandbox=sandbox,
                    seeds=seeds,
                    config=config,
                    repairs=repairs,
                    on_done=done,
                    references=reference_dir,
                    reviewer=reviewer,
                )
            finally:
                await model.aclose()
                if reviewer is not None:
                    await reviewer.aclose()

        sandbox = SANDBOXES.create(sandbox_spec(options))
        try:
            asyncio.run(go())
        finally:
            sandbox.close()
        console.print(f"wrote {len(written)} puzzles to {out}")
        if not written:
            raise click.ClickException("no puzzle passed its checks")


@puzzles.command("verify")
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@sandbox_options
def verify(folder: Path, **options: Any) -> None:
    """Rebuild every puzzle of FOLDER from its generator and seed and re-run every check.

    Exits with status 1 when any puzzle fails a check or differs from its file.
    """
    from arcmemo.benchmarks.arc.puzzles.recheck import recheck_folder
    from arcmemo.benchmarks.arc.puzzles.store import task_paths
    from arcmemo.sandbox import SANDBOXES

    console = Console()
    with _puzzle_errors():
        paths = task_paths(folder)
        sandbox = SANDBOXES.create(sandbox_spec(options))
        try:
            results = recheck_folder(sandbox, paths)
        finally:
            sandbox.close()
    failed = 0
    for result in results:
        if result.passed:
            console.print(f"[green]ok[/green]   {result.puzzle_id}", highlight=False)
            for line in _concept_check_lines(result.report):
                console.print(clean_text(f"     {line}"), highlight=False, markup=False)
            continue
        failed += 1
        summary = result.report.summary() if result.report else "not checked"
        headline = escape(clean_text(f"{result.puzzle_id}: {summary}"))
        console.print(f"[red]FAIL[/red] {headline}", highlight=False)
        for problem in result.problems:
            console.print(clean_text(f"     {problem}"), highlight=False, markup=False)
        for check in result.report.failed() if result.report else []:
            for detail in check.details:
                text = clean_text(f"     [{check.name}] {detail}")
                console.print(text, highlight=False, markup=False)
        for line in _concept_check_lines(result.report, failed=False):
            console.print(clean_text(f"     {line}"), highlight=False, markup=False)
    console.print(f"{len(results) - failed}/{len(results)} puzzles pass every check")
    if failed:
        raise SystemExit(1)


def _concept_check_lines(report: Any, *, failed: bool = True) -> list[str]:
    """How the concept checks were made: ``[name] status: note`` (failed ones only when
    ``failed``; their details are printed elsewhere)."""
    if report is None:
        return []
    return [
        f"[{check.name}] {check.status}" + (f": {check.note}" if check.note else "")
        for check in report.checks
        if check.name in ("implements_concept", "concept_is_crux")
        and (failed or check.status != "failed")
    ]


@puzzles.command("show")
@click.argument("reference", type=click.Path(path_type=Path))
def show(reference: Path) -> None:
    """Print the grids of the puzzle DIR/ID in color, with its concept and report."""
    from arcmemo.benchmarks.arc import parse_task
    from arcmemo.benchmarks.arc.puzzles.display import task_view
    from arcmemo.benchmarks.arc.puzzles.store import meta_path, read_json, read_meta, resolve_puzzle

    console = Console()
    with _puzzle_errors():
        path = resolve_puzzle(reference)
        task = parse_task(path.stem, read_json(path), str(path))
        meta = read_meta(path) if meta_path(path).is_file() else None
    console.print(f"[bold]{task.id}[/bold]", highlight=False)
    if meta is not None:
        made = (
            f"origin hindsight of {meta.hindsight_of} (its failed program's own outputs, "
            f"calling {meta.exercised_by}); model {meta.model}"
            if meta.origin == "hindsight"
            else f"origin generated; seed {meta.seed}; model {meta.model}"
        )
        console.print(
            visible_text(
                f"concept {meta.concept_name} ({meta.concept_id}, version "
                f"{meta.concept_version}); {made}; checks when made: {meta.report.summary()}"
            ),
            highlight=False,
            markup=False,
        )
        for check in meta.report.checks:
            line = f"  [{check.name}] {check.status}" + (f": {check.note}" if check.note else "")
            console.print(visible_text(line), highlight=False, markup=False)
            for detail in check.details:
                console.print(visible_text(f"    - {detail}"), highlight=False, markup=False)
    train = [(pair.input, pair.output) for pair in task.train]
    test = list(zip(task.test_inputs, task.expected, strict=True))
    console.print(task_view(train, test))
