"""Building the self-contained HTML pages: a run report and a memory browser.

Templates live next to this module (``templates/*.html.j2``) so they ship in the wheel.
Autoescaping is on: every string from a run (model completions, programs, errors, concept
text) is escaped; only the SVG charts built in :mod:`arcmemo.report.plots` are inserted as
markup.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from arcmemo.files import atomic_write_text
from arcmemo.memory.ontology import Memory, concept_id
from arcmemo.memory.render import lesson_name
from arcmemo.report import views
from arcmemo.report.load import RunData, load_run

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _mem_anchor(concept_key: str) -> str:
    return views.anchor("mem", concept_key)


def _lesson_anchor(index: int) -> str:
    return views.anchor("mem", concept_id(lesson_name(index)))


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
    env.globals.update(
        mem_anchor=_mem_anchor,
        lesson_anchor=_lesson_anchor,
        task_anchor=lambda task_id: views.anchor("task", task_id),
        config_rows=views.config_rows,
        concept_key=concept_id,
    )
    return env


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


def _summary_table(runs: list[RunData]) -> list[tuple[str, list[str]]]:
    """Metric rows with one column per run (metrics a run lacks show as a dash)."""
    per_run = [dict(views.summary_rows(r.summary)) for r in runs]
    names: list[str] = []
    for rows in per_run:
        names += [n for n in rows if n not in names]
    return [(name, [rows.get(name, "–") for rows in per_run]) for name in names]


def render_report(main: RunData, others: list[RunData] | None = None) -> str:
    """The report page of ``main``, compared with ``others`` when given."""
    others = others or []
    runs = [main, *others]
    _unique_labels(runs)
    index = views.MemoryIndex(main.final_memory)
    tasks = views.task_views(main, index)
    comparisons = [views.compare(main, other) for other in others]
    for task in tasks:
        task.compare_scores = [
            other.result_by_id[task.id].score if task.id in other.result_by_id else None
            for other in others
        ]
    context: dict[str, Any] = {
        "title": f"arcmemo report: {main.label}",
        "generated_at": _now(),
        "main": main,
        "runs": runs,
        "notes": [(r.label, note) for r in runs for note in r.notes],
        "summary_table": _summary_table(runs),
        "charts": views.plot_list(runs, tasks),
        "tasks": tasks,
        "comparisons": comparisons,
        "memory": views.memory_view(main, index),
    }
    return environment().get_template("report.html.j2").render(**context)


def build_report(
    run_dir: Path, *, compare: list[Path] | None = None, data: str | None = None
) -> str:
    """Load ``run_dir`` (and the runs to compare) and render the report page.

    ``data`` overrides where the main run's tasks are reloaded from (a moved task folder).
    """
    main = load_run(Path(run_dir), data=data)
    others = [load_run(Path(path)) for path in compare or []]
    return render_report(main, others)


def write_report(
    run_dir: Path,
    out: Path | None = None,
    *,
    compare: list[Path] | None = None,
    data: str | None = None,
) -> Path:
    """Write the report of ``run_dir`` (default ``RUN_DIR/report.html``); returns its path."""
    page = build_report(run_dir, compare=compare, data=data)
    target = Path(out) if out is not None else Path(run_dir) / "report.html"
    atomic_write_text(target, page)
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
            groups=views.concept_groups(memory.concepts),
        )
    )
