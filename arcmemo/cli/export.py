"""``arcmemo export NAME RUN``: a run's predictions in other tools' formats.

Each registered benchmark names its formats (:attr:`~arcmemo.benchmarks.base.Benchmark.exporters`,
ARC's ``submission``); a run is written by its own benchmark's exporter of that name.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from arcmemo.benchmarks.outputs import ExportedRun, Exporter
from arcmemo.cli.errors import user_errors


def _exporters() -> dict[str, Exporter]:
    """Every registered benchmark's exporters by name (the first of a name, for its help)."""
    from arcmemo.benchmarks.base import BENCHMARKS

    found: dict[str, Exporter] = {}
    for _, cls in BENCHMARKS.classes():
        for exporter in cls.exporters:
            found.setdefault(exporter.name, exporter)
    return found


def export_run(run: Path, name: str, out: Path | None) -> tuple[int, Path]:
    """Write ``run`` through its benchmark's exporter ``name``; the number of tasks and the
    file written."""
    from arcmemo.benchmarks.base import BENCHMARKS
    from arcmemo.core.files import atomic_write_text
    from arcmemo.run.directory.reader import RunDirectory
    from arcmemo.run.directory.records import RunDirError

    rundir = RunDirectory(run)
    config = rundir.require_config()
    own = {e.name: e for e in BENCHMARKS.get(config.benchmark.name).cls.exporters}
    exporter = own.get(name)
    if exporter is None:
        wanted = _exporters()[name]
        raise RunDirError(
            f"{run}: a {config.benchmark.name} run; {wanted.label} are for {wanted.runs} runs"
        )
    target = out or run / exporter.default_file
    results = rundir.ordered_results()
    if exporter.write is not None:
        atomic_write_text(target, exporter.write(results))
        return len(results), target
    assert exporter.write_files is not None
    if target.exists() and not target.is_dir():
        raise RunDirError(f"--out {target}: a file; {exporter.label} are a directory")
    exported = ExportedRun(
        results=results,
        name=run.resolve().name,
        model=config.solver_spec,
        sampling=config.solver.sampling.model_dump(exclude_none=True),
    )
    files = exporter.write_files(exported)
    target.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        atomic_write_text(target / name, text)
    return len(results), target


def _command(exporter: Exporter) -> click.Command:
    @click.command(exporter.name, help=exporter.help)
    @click.argument("run", type=click.Path(path_type=Path, file_okay=False, exists=True))
    @click.option(
        "--out",
        type=click.Path(
            path_type=Path, dir_okay=exporter.directory, file_okay=not exporter.directory
        ),
        help=f"Where to write (default: RUN/{exporter.default_file})"
        + (": a directory, one file per task." if exporter.directory else "."),
    )
    def command(run: Path, out: Path | None) -> None:
        with user_errors():
            count, target = export_run(run, exporter.name, out)
        Console(stderr=True).print(f"{count} tasks written to {target}", highlight=False)

    return command


class ExportGroup(click.Group):
    """One command per exporter of the registered benchmarks, found when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_exporters())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        exporter = _exporters().get(cmd_name)
        return _command(exporter) if exporter is not None else None


@click.group("export", cls=ExportGroup)
def export() -> None:
    """Write a finished run's predictions in another format."""
