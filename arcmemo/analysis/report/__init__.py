"""Static HTML reports of runs and memories (``arcmemo report``, ``memory show --html``)."""

from arcmemo.analysis.report.html import (
    build_report,
    render_memory_page,
    render_report,
    write_report,
)
from arcmemo.analysis.report.load import ReportError, RunData, load_run

__all__ = [
    "ReportError",
    "RunData",
    "build_report",
    "load_run",
    "render_memory_page",
    "render_report",
    "write_report",
]
