"""The report of a training directory (``arcmemo report DIR`` where DIR holds
``training.json``): the learning curve (validation score per epoch with its spread over
attempts), the memory's size per epoch, and the best epoch marked."""

from __future__ import annotations

from html import escape
from pathlib import Path

from markupsafe import Markup

from arcmemo.analysis.report.plots import Series, line_chart
from arcmemo.core.files import atomic_write_text
from arcmemo.train.record import TrainingRecord, read_record

# What a chart needs outside the report's page (a standalone .svg file).
_STANDALONE_STYLE = (
    "<style>text{font:11px sans-serif}.title{font-weight:bold}"
    ".axis{stroke:#444}.grid{stroke:#ddd}</style>"
)


def curve_charts(record: TrainingRecord) -> list[Markup]:
    """Validation score per epoch (with score ± spread) and memory size per epoch."""
    epochs = [e for e in record.epochs if e.validation.score is not None]
    score = [(float(e.epoch), float(e.validation.score or 0.0)) for e in epochs]
    series = [Series(f"validation {record.metric}", score)]
    if any(e.validation.spread for e in epochs):
        series += [
            Series("+ spread", [(x, y + (e.validation.spread or 0)) for (x, y), e in
                                zip(score, epochs, strict=True)]),
            Series("- spread", [(x, max(0.0, y - (e.validation.spread or 0))) for (x, y), e in
                                zip(score, epochs, strict=True)]),
        ]  # fmt: skip
    best = "" if record.best_epoch is None else f" (best: epoch {record.best_epoch})"
    size = [
        Series(name, [(float(e.epoch), float(getattr(e.memory_size, name))) for e in record.epochs])
        for name in ("concepts", "lessons", "functions")
    ]
    return [
        line_chart(
            series, title=f"learning curve{best}", x_label="epoch",
            y_label=f"validation {record.metric}", y_max=1.0,
        ),
        line_chart(size, title="memory size", x_label="epoch", y_label="entries"),
    ]  # fmt: skip


def standalone_svg(chart: Markup) -> str:
    """A chart as an .svg file of its own (for docs)."""
    head, sep, rest = str(chart).partition(">")
    return f"{head}{sep}{_STANDALONE_STYLE}{rest}\n"


def training_rows(record: TrainingRecord) -> list[list[str]]:
    rows = []
    for e in record.epochs:
        val = e.validation
        spread = "" if val.spread is None else f" ± {val.spread:.3f}"
        rows.append([
            f"{e.epoch}{' (best)' if e.epoch == record.best_epoch else ''}",
            "-" if e.train is None or e.train.score is None else f"{e.train.score:.3f}",
            "-" if val.score is None else f"{val.score:.3f}{spread}",
            str(e.memory_size.concepts), str(e.memory_size.lessons),
            str(e.memory_size.functions),
            ", ".join(e.added) or "-", ", ".join(e.changed) or "-", ", ".join(e.retired) or "-",
            e.memory,
        ])  # fmt: skip
    return rows


def training_page(record: TrainingRecord) -> str:
    head = ["epoch", "train", f"validation {record.metric}", "concepts", "lessons",
            "functions", "added", "changed", "retired", "memory"]  # fmt: skip
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>"
        for row in training_rows(record)
    )
    charts = "\n".join(str(c) for c in curve_charts(record))
    stopped = f"<p>Stopped: {escape(record.stopped)}</p>" if record.stopped else ""
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>training · {escape(record.benchmark)}</title>{_STANDALONE_STYLE}"
        "<style>table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
        "</style></head><body>"
        f"<h1>Training a memory · {escape(record.benchmark)}</h1>"
        f"<p>train split {escape(str(record.train_split))} ({len(record.train_tasks)} tasks), "
        f"validation split {escape(str(record.val_split))} ({len(record.val_tasks)} tasks); "
        f"best epoch: {record.best_epoch} (highest validation {escape(record.metric)}, ties "
        "to the earliest); its memory is best-memory.json. Each epoch's runs have reports "
        f"of their own (arcmemo report DIR/epoch-NNN/validation).</p>{stopped}"
        f"{charts}<table><tr>{cells}</tr>{body}</table></body></html>\n"
    )


def write_training_report(directory: Path, out: Path | None = None) -> Path:
    record = read_record(directory)
    assert record is not None, f"{directory} holds no training.json"
    target = out or directory / "report.html"
    atomic_write_text(target, training_page(record))
    charts = curve_charts(record)
    atomic_write_text(directory / "learning-curve.svg", standalone_svg(charts[0]))
    return target
