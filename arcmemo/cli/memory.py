"""``arcmemo memory``: create, inspect, check and compare memory files.

Every failure (a bad file, an unknown concept, a file that would be overwritten) ends in a
click error with a message naming the file and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import click
from rich.console import Console
from rich.markup import escape

from arcmemo.core.bulk import lasting
from arcmemo.core.tokens import estimate_tokens
from arcmemo.memory.diff import memory_diff
from arcmemo.memory.edits import yaml_text
from arcmemo.memory.render import VIEWS
from arcmemo.memory.schema import Concept, Memory
from arcmemo.memory.seeds import SeedFileError, available_domains, load_seed
from arcmemo.memory.store import MemoryFileError, MemorySaveError
from arcmemo.memory.untrusted import display_copy, unsafe_problems

_FILE = click.Path(dir_okay=False, path_type=Path)


def _load(path: Path) -> Memory:
    """The memory at ``path`` as it is shown (unsafe characters escaped: see
    arcmemo.memory.untrusted), kept out of the collector's walks until the command ends."""
    try:
        return click.get_current_context().with_resource(
            lasting(lambda: display_copy(Memory.load(path)))
        )
    except MemoryFileError as error:
        raise click.ClickException(str(error)) from None


def _load_to_edit(path: Path) -> Memory:
    """The memory at ``path`` as it is (for a command that saves it): refused, before any
    work, when its text holds characters a save would refuse."""
    try:
        loaded = click.get_current_context().with_resource(lasting(lambda: Memory.load(path)))
    except MemoryFileError as error:
        raise click.ClickException(str(error)) from None
    unsafe = unsafe_problems(loaded.model_dump(mode="json"))
    if unsafe:
        raise click.ClickException(str(MemorySaveError(path, unsafe)))
    return loaded


def _find(memory: Memory, name: str, path: Path) -> Concept:
    concept = memory.find(name)
    if concept is not None:
        return concept
    close = difflib.get_close_matches(name, [c.name for c in memory.concepts], n=3)
    hint = f"; did you mean: {', '.join(close)}?" if close else ""
    raise click.ClickException(f"{path}: no concept named {name!r}{hint}")


def _group_title(concept: Concept) -> tuple[int, str]:
    if concept.kind == "structure":
        return (0, "structures")
    return (1, f"routines: {concept.routine_subtype or 'misc'}")


def _grouped(concepts: list[Concept]) -> list[tuple[str, list[Concept]]]:
    groups: dict[tuple[int, str], list[Concept]] = {}
    for concept in concepts:
        groups.setdefault(_group_title(concept), []).append(concept)
    return [(key[1], sorted(groups[key], key=lambda c: c.id)) for key in sorted(groups)]


@click.group()
def memory() -> None:
    """Create, inspect, validate and compare concept memory files."""


@memory.command()
@click.option("--domain", required=True, help="Seed ontology to start from (arc, aime, ...).")
@click.option("--out", required=True, type=_FILE, help="Memory file to write.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@click.option(
    "--no-concepts",
    is_flag=True,
    help="Keep only the type vocabulary (for lesson or cheatsheet memories, or to start bare).",
)
def init(domain: str, out: Path, force: bool, no_concepts: bool) -> None:
    """Create a memory file from the seed ontology of a domain."""
    domains = available_domains()
    if domain not in domains:
        raise click.BadParameter(
            f"{domain!r} has no seed ontology; choose one of {', '.join(domains)}",
            param_hint="--domain",
        )
    if out.exists() and not force:
        raise click.ClickException(f"{out} already exists; pass --force to overwrite it")
    try:
        seeded = load_seed(domain)
    except SeedFileError as error:
        raise click.ClickException(str(error)) from None
    if no_concepts:
        seeded = seeded.model_copy(update={"concepts": [], "history": []})
    try:
        seeded.save(out)
    except OSError as error:
        raise click.ClickException(f"cannot write {out}: {error.strerror or error}") from None
    click.echo(
        f"wrote {out}: {len(seeded.concepts)} concepts, {len(seeded.types)} types (domain {domain})"
    )


def _print_concept(console: Console, concept: Concept, *, code: bool = False) -> None:
    retired = f"  [red]retired: {escape(concept.retired)}[/]" if concept.retired else ""
    console.print(f"- [bold cyan]{escape(concept.name)}[/]  [dim]usage {concept.usage}[/]{retired}")
    if concept.description:
        console.print(f"    {escape(concept.description)}")
    for param in concept.parameters:
        typed = f" [green]({escape(param.type)})[/]" if param.type else ""
        described = f": {escape(param.description)}" if param.description else ""
        console.print(f"    [bold]param[/] {escape(param.name)}{typed}{described}")
    if concept.output_type:
        console.print(f"    [bold]output[/] [green]{escape(concept.output_type)}[/]")
    for cue in concept.cues:
        console.print(f"    [yellow]cue[/] {escape(cue)}")
    for note in concept.implementation:
        console.print(f"    [blue]impl[/] {escape(note)}")
    if concept.relations:
        console.print(f"    [magenta]related[/] {escape(', '.join(concept.relations))}")
    for function in concept.functions:
        imported = f", imported by {len(function.imported_by)}" if function.imported_by else ""
        if function.hindsight:  # from failed programs: right for their own outputs only
            imported += f", hindsight of {', '.join(function.hindsight)}"
        console.print(
            f"    [bold]function[/] {escape(function.name)}{escape(function.signature)}  "
            f"[dim]{len(function.tests)} tests, from {len(function.sources)} tasks{imported}[/]"
        )
        if function.docstring:
            console.print(f"      {escape(function.docstring.strip().splitlines()[0])}")
        if code:  # a chosen concept shows its functions' code
            for line in function.source.rstrip().splitlines():
                console.print(f"      {escape(line)}")


def _print_text(memory: Memory, path: Path, concepts: list[Concept], whole: bool) -> None:
    """A readable listing grouped by kind and subtype; colors only on a terminal."""
    console = Console(highlight=False, soft_wrap=True)
    if whole:
        console.print(
            f"[bold]{escape(str(path))}[/]: domain {escape(memory.domain)}, "
            f"{len(memory.concepts)} concepts, {len(memory.types)} types, "
            f"{len(memory.lessons)} lessons"
        )
        if memory.types:
            console.print("\n[bold underline]types[/]")
            for typedef in sorted(memory.types, key=lambda t: t.name.lower()):
                console.print(f"  [green]{escape(typedef.name)}[/] := {escape(typedef.definition)}")
    for title, members in _grouped(concepts):
        console.print(f"\n[bold underline]{escape(title)}[/] ({len(members)})")
        for concept in members:
            _print_concept(console, concept, code=not whole)
    if whole and memory.lessons:
        console.print(f"\n[bold underline]lessons[/] ({len(memory.lessons)})")
        for index, lesson in enumerate(memory.lessons, start=1):
            mark = " [red](pitfall)[/]" if lesson.kind == "pitfall" else ""
            console.print(f"- [bold cyan]lesson {index}[/]{mark}")
            console.print(f"    [yellow]situation[/] {escape(lesson.situation)}")
            console.print(f"    [blue]suggestion[/] {escape(lesson.suggestion)}")


def _write_html(loaded: Memory, file: Path, out: Path) -> None:
    from arcmemo.analysis.report import render_memory_page
    from arcmemo.core.files import atomic_write_text

    try:
        atomic_write_text(out, render_memory_page(loaded, title=f"memory {file.name}"))
    except OSError as error:
        raise click.ClickException(f"cannot write {out}: {error.strerror or error}") from None
    click.echo(f"wrote {out}")


@memory.command()
@click.argument("file", type=_FILE)
@click.option(
    "--concept",
    "names",
    multiple=True,
    help="Show only this concept (repeatable); with --view solve, the selected concepts.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "yaml"]),
    default="text",
    show_default=True,
    help="Listing format.",
)
@click.option(
    "--view",
    type=click.Choice(VIEWS),
    default=None,
    help="Print the prompt rendering of this view instead of a listing.",
)
@click.option(
    "--budget", type=int, default=None, help="Token budget of the selection or solve view (--view)."
)
@click.option(
    "--html",
    "html_out",
    type=_FILE,
    default=None,
    help="Write the whole memory as a browsable, searchable HTML page to this file.",
)
def show(
    file: Path,
    names: tuple[str, ...],
    fmt: str,
    view: str | None,
    budget: int | None,
    html_out: Path | None,
) -> None:
    """Show a memory file, or some of its concepts."""
    loaded = _load(file)
    if html_out is not None:
        _write_html(loaded, file, html_out)
        return
    if view is not None:
        if fmt != "text":
            raise click.UsageError("--view prints prompt text; it cannot be combined with --format")
        if names and view != "solve":
            raise click.UsageError("--concept selects concepts only for --view solve")
        for name in names:
            _find(loaded, name, file)
        text = loaded.render(view, selected=list(names) or None, budget_tokens=budget)
        click.echo(text, nl=False)
        return
    chosen = [_find(loaded, name, file) for name in names]
    if fmt == "text":
        _print_text(loaded, file, chosen or loaded.concepts, whole=not names)
        return
    # With --concept, a list of the chosen concepts; otherwise the whole memory.
    data: Any = (
        [c.model_dump(mode="json") for c in chosen] if names else loaded.model_dump(mode="json")
    )
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        click.echo(yaml_text(data, sort_keys=False, allow_unicode=True, width=100), nl=False)


def _rows(rows: list[tuple[str, Any]]) -> list[str]:
    width = max((len(label) for label, _ in rows), default=0)
    return [f"  {label.ljust(width)}  {value}" for label, value in rows]


def _attribution_lines(loaded: Memory, top: int = 10) -> list[str]:
    """Helpful / unused / harmful verdicts, the most useful concepts, retired and pitfalls."""
    from arcmemo.memory.evidence import evidence_count, usefulness_key

    with_evidence = sorted((c for c in loaded.concepts if evidence_count(c)), key=usefulness_key)
    total = {
        v: sum(len(getattr(c.stats, v)) for c in loaded.concepts)
        for v in ("helpful", "unused", "harmful")
    }
    lines = [
        f"attribution: {total['helpful']} helpful, {total['unused']} unused, "
        f"{total['harmful']} harmful verdicts over {len(with_evidence)} concepts"
    ]
    if with_evidence:
        lines.append(f"most useful (helpful/unused/harmful, tasks helped), top {top}:")
        lines += _rows(
            [
                (
                    c.name + (" [retired]" if c.retired else ""),
                    f"{len(c.stats.helpful)}/{len(c.stats.unused)}/{len(c.stats.harmful)}"
                    + (f"  {', '.join(c.stats.helpful)}" if c.stats.helpful else ""),
                )
                for c in with_evidence[:top]
            ]
        )
    retired = [c.name for c in loaded.concepts if c.retired]
    lines.append(
        f"retired concepts: {len(retired)}" + (f" ({', '.join(retired)})" if retired else "")
    )
    pitfalls = sum(lesson.kind == "pitfall" for lesson in loaded.lessons)
    lines.append(f"pitfall lessons: {pitfalls}")
    return lines + _import_lines(loaded, top)


def _import_lines(loaded: Memory, top: int) -> list[str]:
    """Library functions and credit by import: which concepts' code verified programs used."""
    from arcmemo.memory.evidence import importers

    functions = [f for c in loaded.concepts for f in c.functions]
    if not functions:
        return []
    imported = sorted(
        ((c, importers(c)) for c in loaded.concepts if importers(c)),
        key=lambda pair: (-len(pair[1]), pair[0].id),
    )
    tasks = {t for _, found in imported for t in found}
    lines = [
        f"library: {len(functions)} functions in "
        f"{sum(bool(c.functions) for c in loaded.concepts)} concepts, "
        f"{sum(len(f.tests) for f in functions)} recorded tests; credit by import: "
        f"{len(imported)} concepts imported by {len(tasks)} tasks"
    ]
    if imported:
        lines.append(f"most imported (tasks), top {top}:")
        lines += _rows(
            [(c.name, f"{len(found)}  {', '.join(found)}") for c, found in imported[:top]]
        )
    return lines


@memory.command()
@click.argument("file", type=_FILE)
def stats(file: Path) -> None:
    """Counts by kind and subtype, usage distribution and rendered sizes in tokens."""
    loaded = _load(file)
    lines = [
        f"{file}:",
        f"domain {loaded.domain}, {len(loaded.concepts)} concepts, "
        f"{len(loaded.types)} types, {len(loaded.lessons)} lessons, "
        f"{len(loaded.solutions)} solutions, {len(loaded.history)} history entries"
    ]
    kinds = Counter(_group_title(c) for c in loaded.concepts)
    lines.append("concepts by kind/subtype:")
    lines += _rows([(title, count) for (_, title), count in sorted(kinds.items())])
    usage = Counter(c.usage for c in loaded.concepts)
    lines.append("usage (distinct source tasks + solved selections) -> concepts:")
    lines += _rows([(str(value), count) for value, count in sorted(usage.items())])
    lines.append(
        f"selections: {sum(c.stats.selected for c in loaded.concepts)} "
        f"({sum(c.stats.selected_solved for c in loaded.concepts)} in solved tasks)"
    )
    lines += _attribution_lines(loaded)
    lines.append("rendered size (estimated tokens):")
    lines += _rows([(view, estimate_tokens(loaded.render(view))) for view in VIEWS])
    click.echo("\n".join(lines))


@memory.command()
@click.argument("file", type=_FILE)
@click.pass_context
def validate(ctx: click.Context, file: Path) -> None:
    """Check a memory file; exit 0 when valid, 1 with the problems otherwise."""
    try:
        loaded = Memory.load(file)
    except MemoryFileError as error:
        click.echo(str(error), err=True)
        ctx.exit(1)
    unsafe = unsafe_problems(loaded.model_dump(mode="json"))
    if unsafe:
        click.echo(f"{file}: text that may not be shown or saved as it is", err=True)
        for where, what in unsafe:
            click.echo(f"  at {where}: {what}", err=True)
        ctx.exit(1)
    click.echo(
        f"ok: {len(loaded.concepts)} concepts, {len(loaded.types)} types, "
        f"{len(loaded.lessons)} lessons, {len(loaded.solutions)} solutions "
        f"(domain {loaded.domain}, schema_version {loaded.schema_version})"
    )


@memory.command()
@click.argument("old_file", metavar="A", type=_FILE)
@click.argument("new_file", metavar="B", type=_FILE)
def diff(old_file: Path, new_file: Path) -> None:
    """Concepts added, removed and changed (field by field) from memory A to memory B."""
    lines = memory_diff(_load(old_file), _load(new_file))
    click.echo("\n".join(lines) if lines else "no differences")


@memory.command()
def schema() -> None:
    """Print the JSON schema of memory files (the documentation of the format)."""
    click.echo(json.dumps(Memory.model_json_schema(), indent=2))


@memory.command("import")
@click.argument("source", type=click.Choice(["arc-memo"]))
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", required=True, type=_FILE, help="Memory file to write.")
@click.option(
    "--part",
    type=click.Choice(["memory", "selection", "annotations", "lessons"]),
    help="With a checkout folder: which artifact (selection: barc_init_mem.txt; annotations: "
    "prelim2.yaml + op3a.yaml; lessons: parsed_lessons.json; memory: memory.json). Files are "
    "recognised by name and content.",
)
@click.option(
    "--conventions",
    type=click.Choice(["paper", "arcmemo"]),
    default="paper",
    show_default=True,
    help="paper: the memory keeps the published code's rules (a concept is its exact name, "
    "inline types stay on their concept, a parameter written again takes the later value). "
    "arcmemo: arcmemo's merge rules (near-duplicate names merge, types move to the "
    "vocabulary).",
)
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@click.option("--report", "report_path", type=_FILE, help="Also write the report as JSON here.")
def import_(
    source: str,
    paths: tuple[Path, ...],
    out: Path,
    part: str | None,
    conventions: Literal["paper", "arcmemo"],
    force: bool,
    report_path: Path | None,
) -> None:
    """Import published artifacts (SOURCE arc-memo: the paper's repository) into a memory.

    PATHS are files of a checkout of the paper's repository, or the checkout itself with
    --part; several are imported into one memory, in order. Prints what was read and every
    quirk of the published data that was handled.
    """
    from arcmemo.core.files import atomic_write_text
    from arcmemo.memory.importers import PublishedFileError, import_arc_memo

    if out.exists() and not force:
        raise click.ClickException(f"{out} already exists; pass --force to overwrite it")
    try:
        imported, report = import_arc_memo(list(paths), part=part, conventions=conventions)
    except PublishedFileError as error:
        raise click.ClickException(str(error)) from None
    try:
        imported.save(out)
        if report_path is not None:
            atomic_write_text(report_path, report.model_dump_json(indent=2) + "\n")
    except MemoryFileError as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        raise click.ClickException(f"cannot write {out}: {error.strerror or error}") from None
    click.echo("\n".join(report.lines()))
    click.echo(f"wrote {out}: {len(imported.concepts)} concepts, {len(imported.lessons)} lessons")


# -- learning what helps: attribution, pruning, consolidation ---------------------------


def _save_as(memory: Memory, file: Path, out: Path | None) -> Path:
    """Save ``memory`` to ``out`` (default: ``file`` itself, keeping ``FILE.bak``)."""
    target = out or file
    try:
        memory.save(target)
    except MemoryFileError as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        raise click.ClickException(f"cannot write {target}: {error.strerror or error}") from None
    return target


@contextlib.contextmanager
def _sole_writer(file: Path, out: Path | None, dry_run: bool) -> Iterator[None]:
    """One memory file, one writer: from load to save, hold the writer lock that an online
    run or ``arcmemo abstract`` holds, so neither loses the other's updates."""
    from arcmemo.core.files import LockHeldError, held_lock
    from arcmemo.run.session import writer_lock_path

    target = out or file
    holder = f"pid {os.getpid()}, arcmemo memory"
    with contextlib.ExitStack() as stack:
        try:
            if not dry_run:
                stack.enter_context(held_lock(writer_lock_path(target), holder=holder))
            if dry_run or target != file:
                with held_lock(writer_lock_path(file), holder=holder, shared=True):
                    pass  # only checks that no live run is writing what is read
        except LockHeldError as error:
            written = error.path.with_name(error.path.name.removesuffix(".writer.lock"))
            raise click.ClickException(
                f"{written} is being written by another live run ({error.holder}); wait for "
                "it to end"
            ) from None
        yield


def _judge_opinions(
    judge_model: str, memory: Memory, results: list[Any], signal: Any, domain: str
) -> dict[str, dict[str, bool] | None]:
    """The judge's opinions by task id for ``arcmemo memory attribute --by judge``, in one
    event loop (None where a call failed or its answer could not be used: evidence decides)."""
    import asyncio

    from arcmemo.memory.judge import judge_usage
    from arcmemo.models.client import open_model
    from arcmemo.models.retry import ModelCallError

    judge = open_model(judge_model)

    async def one(result: Any) -> dict[str, bool] | None:
        try:
            confirmed = signal.confirmed_step(result)
            return await judge_usage(judge, memory, result, confirmed, domain=domain)
        except ModelCallError as error:
            click.echo(f"  {result.task_id}: the judge failed ({error}); evidence decides")
            return None

    async def every() -> list[dict[str, bool] | None]:
        try:
            return list(await asyncio.gather(*(one(r) for r in results)))
        finally:
            await judge.aclose()

    opinions = asyncio.run(every())
    return {r.task_id: o for r, o in zip(results, opinions, strict=True)}


_DRY_RUN = click.option("--dry-run", is_flag=True, help="Print what would change; save nothing.")
_OUT = click.option(
    "--out", type=_FILE, default=None, help="Write the result here instead of FILE (FILE.bak)."
)


@memory.command()
@click.argument("run", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--memory", "file", required=True, type=_FILE, help="Memory file to fold into.")
@click.option(
    "--by",
    "source",
    type=click.Choice(["evidence", "judge", "citations"]),
    default="evidence",
    show_default=True,
    help="What decides that a solution used a concept: evidence (imports, else words of "
    "the solution), judge (the --judge-model's opinion, one call per task; imports still "
    "decide for concepts with code) or citations (the solver's own list, runs with --cite: "
    "cited by the confirmed solution -> helpful; cited, none confirmed -> harmful).",
)
@click.option(
    "--judge-model",
    default=None,
    metavar="PROVIDER:MODEL",
    help="With --by judge: the model that judges (answers come from the response cache "
    "when it holds them).",
)
@_DRY_RUN
@_OUT
def attribute(
    run: Path, file: Path, source: str, judge_model: str | None, dry_run: bool, out: Path | None
) -> None:
    """Fold a fixed-memory run's selections and attribution into a memory file.

    For every final task of RUN (results.jsonl), each concept shown in a prompt the solver
    answered gets a verdict (helpful / unused / harmful, see arcmemo.memory.attribution)
    against the step the run's write signal confirms; the selection and citation counts are
    added too. An online run already wrote both into its memory; a run folded once is
    refused the second time.
    """
    from arcmemo.run.directory.reader import RunDirectory
    from arcmemo.run.directory.records import RunDirError

    rundir = RunDirectory(run)
    try:
        config = rundir.require_config()
        results = rundir.ordered_results()
    except RunDirError as error:
        raise click.ClickException(str(error)) from None
    if source == "judge" and judge_model is None:
        raise click.ClickException("--by judge needs --judge-model PROVIDER:MODEL")
    if source == "citations" and not config.cite:
        raise click.ClickException(
            f"{run}: the run did not ask its solver to cite (--cite), so it has no citations"
        )
    if config.update == "online":
        raise click.ClickException(
            f"{run}: an online run (--update online) already wrote its selections and "
            "attribution into the memory it grew; nothing to fold"
        )
    from arcmemo.benchmarks.base import BENCHMARKS
    from arcmemo.memory.attribution import attribute_task, record_attribution, summarize
    from arcmemo.memory.citations import attribute_by_citations
    from arcmemo.memory.schema import HistoryEntry
    from arcmemo.run.continual import record_selection_stats
    from arcmemo.signals.base import WRITE_SIGNALS

    with _sole_writer(file, out, dry_run):
        loaded = _load_to_edit(file)
        marker = f"attribution of run {run.resolve()}"
        if any(e.op == "stats" and e.target == marker for e in loaded.history):
            raise click.ClickException(f"{file}: {run} was already folded into this memory")
        if config.write_signal is None:
            raise click.ClickException(f"{run}: config.json names no write signal")
        signal = WRITE_SIGNALS.create(config.write_signal)
        entry_points = BENCHMARKS.get(config.benchmark.name).factory.entry_points  # type: ignore[attr-defined]
        final = [r for r in results if r.error is None]
        opinions: dict[str, dict[str, bool] | None] = {}
        if source == "judge" and judge_model is not None:
            domain = BENCHMARKS.get(config.benchmark.name).factory.domain  # type: ignore[attr-defined]
            opinions = _judge_opinions(judge_model, loaded, final, signal, domain)
        attributions = []
        for result in results:
            if result.error is not None:
                continue  # not a result: the task ended on a model-call failure
            confirmed = signal.confirmed_step(result)
            if source == "citations":
                attribution = attribute_by_citations(loaded, result, confirmed)
            else:
                judged = opinions.get(result.task_id)
                attribution = attribute_task(loaded, result, confirmed, judged, ignore=entry_points)
            attributions.append(attribution)
            record_selection_stats(loaded, result, confirmed is not None)
            record_attribution(loaded, attribution)
        summary = summarize(attributions)
        click.echo(f"{run}: {summary.line()}")
        for attribution in attributions:
            for verdict in attribution.verdicts:
                why = f" ({'; '.join(verdict.evidence)})" if verdict.evidence else ""
                click.echo(f"  {attribution.task_id}: {verdict.name}: {verdict.verdict}{why}")
        if dry_run:
            return
        why = f"{summary.line()} (by {source})"
        loaded.history.append(HistoryEntry(op="stats", target=marker, why=why))
        click.echo(f"wrote {_save_as(loaded, file, out)}")


@memory.command()
@click.argument("file", type=_FILE)
@click.option(
    "--min-evidence",
    type=click.IntRange(min=1),
    required=True,
    help="Retire concepts with at least this many attributed selections and none helpful.",
)
@_DRY_RUN
@_OUT
def prune(file: Path, min_evidence: int, dry_run: bool, out: Path | None) -> None:
    """Retire concepts that were selected often and never helped (kept in the file, with a
    history entry; never rendered or selected again)."""
    from arcmemo.memory.evidence import prune as retire_unhelpful

    with _sole_writer(file, out, dry_run):
        loaded = _load_to_edit(file)
        retired = retire_unhelpful(loaded, min_evidence)
        for concept in retired:
            click.echo(f"retire {concept.name!r}: {concept.retired}")
        if not retired:
            click.echo(f"nothing to retire (--min-evidence {min_evidence})")
        if dry_run or not retired:
            return
        click.echo(f"wrote {_save_as(loaded, file, out)}: {len(retired)} concepts retired")


@memory.command()
@click.argument("file", type=_FILE)
@click.option(
    "--name-threshold",
    type=click.FloatRange(0, 100),
    default=None,
    help="Least name similarity (rapidfuzz token_set_ratio, 0-100) of a pair; default 70.",
)
@click.option(
    "--content-threshold",
    type=click.FloatRange(-1, 1),
    default=None,
    help="Least content similarity (cosine of description, cues, notes) of a pair; default 0.35.",
)
@click.option(
    "--embedder", default="tfidf", show_default=True, help="tfidf (offline) or openai:MODEL."
)
@_DRY_RUN
@_OUT
def consolidate(
    file: Path,
    name_threshold: float | None,
    content_threshold: float | None,
    embedder: str,
    dry_run: bool,
    out: Path | None,
) -> None:
    """Merge near-duplicate concepts (similar names, confirmed by similar contents) with
    full provenance; review with --dry-run, or --out and `arcmemo memory diff`."""
    import asyncio

    with _sole_writer(file, out, dry_run):
        from arcmemo.core.registry import RegistryError
        from arcmemo.memory import consolidate as merging

        loaded = _load_to_edit(file)
        try:
            proposals = asyncio.run(
                merging.propose_merges(
                    loaded,
                    name_threshold=(
                        merging.NAME_THRESHOLD if name_threshold is None else name_threshold
                    ),
                    content_threshold=(
                        merging.CONTENT_THRESHOLD
                        if content_threshold is None
                        else content_threshold
                    ),
                    embedder=embedder,
                )
            )
        except RegistryError as error:
            raise click.BadParameter(str(error), param_hint="--embedder") from None
        for proposal in proposals:
            click.echo(proposal.line())
        if not proposals:
            click.echo("no near-duplicates found")
        if dry_run or not proposals:
            return
        merging.apply_merges(loaded, proposals)
        target = _save_as(loaded, file, out)
        click.echo(f"wrote {target}: {len(proposals)} merges, {len(loaded.concepts)} concepts")
