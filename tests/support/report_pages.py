"""Reading a generated report page: a task's section with its details decoded."""

from __future__ import annotations

import re

from arcmemo.analysis.report.links import anchor
from arcmemo.analysis.report.pack import unpack

DATA_OPEN = '<script type="application/x-deflate-base64" class="task-data">'


def task_section(page: str, task_id: str) -> str:
    """One task's section as the browser shows it opened: heading, then the details that the
    page keeps packed until the task is opened."""
    start = page.index(f'<section class="task" id="{anchor("task", task_id)}"')
    end = page.index("\n</section>", start)
    section = page[start:end]
    head, data = section.split(DATA_OPEN, 1)
    return head + unpack(data.removesuffix("</script>"))


def grid_attr(grid: list[list[int]]) -> str:
    """How a grid drawn without marks appears in the page (rows of one digit per cell)."""
    return 'data-g="' + ",".join("".join(str(v) for v in row) for row in grid) + '"'


MEMORY_DATA = re.compile(
    r'<script type="application/x-deflate-base64" class="mem-data" data-anchors="([^"]*)">'
    r"([^<]*)</script>"
)


def memory_groups(page: str) -> list[tuple[list[str], str]]:
    """The packed memory groups of a page: the anchors each names, and its entries as the
    browser shows them once the group is opened."""
    return [(anchors.split(), unpack(data)) for anchors, data in MEMORY_DATA.findall(page)]


def with_memory_entries(page: str) -> str:
    """``page`` with every memory group's entries unpacked in place."""
    return MEMORY_DATA.sub(lambda match: unpack(match.group(2)), page)
