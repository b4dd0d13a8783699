"""Building the self-contained HTML pages: a run report and a memory browser.

Templates live next to this module (``templates/*.html.j2``) so they ship in the wheel. A
benchmark may draw its tasks its own way: its
:meth:`~arcmemo.benchmarks.base.Benchmark.report_template` returns a template that extends
``report.html.j2`` and overrides its task blocks; without one the page shows the generic
view. Autoescaping is on: every string from a run (model completions, programs, errors,
concept text) is escaped; only the SVG charts built in :mod:`arcmemo.analysis.report.plots` are
inserted as markup. A task's details go into the page packed (:mod:`arcmemo.analysis.report.pack`)
and the page's script unpacks and inserts them when the task is opened; ARC's grids are
compact strings it draws then. The task table's rows and the tasks' headings wait in inert
``<template>`` elements, and the script shows them a page (:data:`TASKS_PER_PAGE`) at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from functools import cache
from itertools import islice
from pathlib import Path
from typing import Any

import jinja2

from arcmemo.analysis.report import charts, links, summary
from arcmemo.analysis.report.compare import add_compare_scores, compare
from arcmemo.analysis.report.load import RunData, load_run
from arcmemo.analysis.report.memory_view import concept_groups, memory_view
from arcmemo.analysis.report.pack import pack
from arcmemo.analysis.report.tasks import display, task_views
from arcmemo.core.bulk import paused_gc
from arcmemo.core.files import atomic_write_text
from arcmemo.memory.schema import Memory, concept_id

TEMPLATES = Path(__file__).resolve().parent / "templates"
# Rows of the task table (and task headings) the page shows at a time: a page of 500 lays
# out in a fraction of a second, the 400 tasks of ARC's evaluation set in one page.
TASKS_PER_PAGE = 500


@cache
def environment() -> jinja2.Environment:
    """The report's jinja2 environment (strict, autoescaping)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pack"] = pack
    # As filters too, to map over a group's members (its data-anchors).
    env.filters["mem_anchor"] = links.memory_anchor
    env.filters["lesson_anchor"] = links.lesson_anchor
    # A set: an entry's relations are looked up in it (a list was a scan per relation).
    env.filters["concept_ids"] = lambda concepts: frozenset(c.id for c in concepts)
    env.globals.update(
        mem_anchor=links.memory_anchor,
        lesson_anchor=links.lesson_anchor,
        task_anchor=lambda task_id: links.anchor("task", task_id),
        config_rows=summary.config_rows,
        run_alerts=summary.run_alerts,
        concept_key=concept_id,
        display=display,
    )
    return env


@cache
def _page_template(source: str | None) -> jinja2.Template:
    """The report page: a benchmark's own (extending ``report.html.j2``) or the generic one."""
    env = environment()
    return env.get_template("report.html.j2") if source is None else env.from_string(source)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _unique_labels(runs: list[RunData]) -> None:
    """Give runs with the same folder name distinct labels (their paths)."""
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
    for run in runs:
        if seen[run.label] > 1:
            run.label = str(run.path)


def render_report(main: RunData, others: list[RunData] | None = None) -> str:
    """The report page of ``main``, compared with ``others`` when given."""
    return "".join(_report_pieces(main, others))


def _report_pieces(main: RunData, others: list[RunData] | None) -> Iterator[str]:
    """The report page of ``main`` in the pieces the template renders it in."""
    others = others or []
    runs = [main, *others]
    _unique_labels(runs)
    index = links.MemoryIndex(main.final_memory)
    tasks = task_views(main, index)
    add_compare_scores(tasks, others)
    context: dict[str, Any] = {
        "title": f"arcmemo report: {main.label}",
        "generated_at": _now(),
        "main": main,
        "runs": runs,
        "notes": [(r.label, note) for r in runs for note in r.notes],
        "summary_table": summary.summary_table(runs),
        "charts": charts.plot_list(runs, tasks),
        "tasks": tasks,
        "tasks_per_page": TASKS_PER_PAGE,
        "comparisons": [compare(main, other) for other in others],
        "memory": memory_view(main, index),
    }
    source = main.benchmark.report_template() if main.benchmark is not None else None
    return _page_template(source).generate(**context)


def _batched(pieces: Iterator[str], size: int = 4096) -> Iterator[str]:
    """``pieces`` joined ``size`` at a time (fewer, larger writes)."""
    while batch := "".join(islice(pieces, size)):
        yield batch


def _load(
    run_dir: Path, compare: list[Path] | None, data: str | None
) -> tuple[RunData, list[RunData]]:
    main = load_run(Path(run_dir), data=data)
    return main, [load_run(Path(path)) for path in compare or []]


def build_report(
    run_dir: Path, *, compare: list[Path] | None = None, data: str | None = None
) -> str:
    """Load ``run_dir`` (and the runs to compare) and render the report page.

    ``data`` overrides where the main run's tasks are reloaded from (a moved task folder).
    """
    with paused_gc():  # reading a run builds millions of lasting objects (arcmemo.core.bulk)
        return render_report(*_load(run_dir, compare, data))


def write_report(
    run_dir: Path,
    out: Path | None = None,
    *,
    compare: list[Path] | None = None,
    data: str | None = None,
) -> Path:
    """Write the report of ``run_dir`` (default ``RUN_DIR/report.html``); returns its path."""
    target = Path(out) if out is not None else Path(run_dir) / "report.html"
    with paused_gc():  # reading a run builds millions of lasting objects (arcmemo.core.bulk)
        # written as it is rendered: the page of a big run is never whole in memory
        atomic_write_text(target, _batched(_report_pieces(*_load(run_dir, compare, data))))
    target.chmod(0o644)  # a page to share, unlike the private temp file it was written as
    return target


def render_memory_page(memory: Memory, *, title: str) -> str:
    """A browsable page of a whole memory, grouped by kind and subtype, with a search box."""
    return (
        environment()
        .get_template("memory.html.j2")
        .render(
            title=title,
            generated_at=_now(),
            memory=memory,
            groups=concept_groups(memory.concepts),
        )
    )
