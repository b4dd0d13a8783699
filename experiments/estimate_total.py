"""Add up the dry-run estimates (``estimate.json``) under a folder: one row per run, then
the total, each as a low - high range (``experiments/all.sh`` prints this before it asks).

    python experiments/estimate_total.py RUNS_FOLDER
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FIELDS = ("calls", "input_tokens", "output_tokens", "cost_usd")


def _span(span: dict[str, float] | None, money: bool = False) -> str:
    if span is None:
        return "unknown (no price)"
    if money:
        return f"${span['low']:,.2f} - ${span['high']:,.2f}"
    return f"{span['low']:,.0f} - {span['high']:,.0f}"


def add(left: dict[str, float] | None, right: dict[str, float] | None) -> dict[str, float] | None:
    if left is None or right is None:
        return None
    return {"low": left["low"] + right["low"], "high": left["high"] + right["high"]}


def totals(folder: Path) -> list[tuple[str, dict[str, dict[str, float] | None]]]:
    """Per run (its folder relative to ``folder``), the estimate's totals; the last row
    (named ``total``) sums them."""
    rows = []
    overall: dict[str, dict[str, float] | None] = {f: {"low": 0, "high": 0} for f in FIELDS}
    for path in sorted(folder.rglob("estimate.json")):
        total = json.loads(path.read_text(encoding="utf-8"))["total"]
        rows.append((str(path.parent.relative_to(folder)), total))
        overall = {f: add(overall[f], total[f]) for f in FIELDS}
    return [*rows, ("total", overall)]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    rows = totals(Path(argv[0]))
    if len(rows) == 1:
        print("no estimate.json found: no `arcmemo run` to estimate", file=sys.stderr)
        return 1
    header = ("run", "calls", "prompt tokens", "output tokens", "cost")
    table = [header] + [
        (
            name,
            _span(row["calls"]),
            _span(row["input_tokens"]),
            _span(row["output_tokens"]),
            _span(row["cost_usd"], money=True),
        )
        for name, row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    print("Estimate of every run (low: all solved at the first try; high: every retry used):")
    for line in table:
        print("  " + "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
