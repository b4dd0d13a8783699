"""The paper's hand-annotated puzzles as arcmemo's abstraction few-shot examples.

    python experiments/paper_examples.py ARC_MEMO_DIR --programs DIR --out FILE

ARC_MEMO_DIR is a checkout of matt-seb-ho/arc_memo; its ``op3a.yaml`` (puzzle id ->
pseudocode, summary, concepts) is what the paper's PS abstraction showed as examples, each
with the puzzle's BARC seed solution. DIR holds those solutions as ``<task id>.py``
(``arcmemo seeds import-barc``); their inlined helper library is left out, as the
abstraction prompt leaves it out of the program being abstracted. A puzzle without a seed
program shows its pseudocode in its place, as the paper's code did. The file written is an
examples file (``--memory-format-arg examples=FILE``), validated before it is written; the
abstraction leaves out the example of the seed being abstracted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from arcmemo.abstraction.examples import Example, ExampleSet
from arcmemo.core.files import atomic_write_text
from arcmemo.core.inlined_library import without_library

ANNOTATIONS = Path("data/abstract_anno/op3/op3a.yaml")


def read_annotations(path: Path) -> dict[str, dict[str, Any]]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise SystemExit(f"{path}: cannot be read: {error}") from None
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise SystemExit(f"{path}: expected puzzle id -> {{pseudocode, summary, concepts}}")
    return {str(k): v for k, v in raw.items()}


def build(annotations: dict[str, dict[str, Any]], programs: Path) -> tuple[ExampleSet, list[str]]:
    """The examples, and the puzzles that had no seed program."""
    examples, without = [], []
    for task, note in annotations.items():
        pseudocode = str(note.get("pseudocode") or "").strip()
        source = programs / f"{task}.py"
        if source.is_file():
            program = without_library(source.read_text(encoding="utf-8")).strip()
        else:
            program = pseudocode
            without.append(task)
        fields = {
            "task": task,
            "program": program,
            "summary": str(note.get("summary") or "").strip(),
            "pseudocode": pseudocode,
            "concepts": note.get("concepts") or [],
        }
        try:
            examples.append(Example.model_validate(fields))
        except ValueError as error:
            raise SystemExit(f"op3a.yaml: puzzle {task}: {error}".splitlines()[0]) from None
    return ExampleSet(domain="arc", examples=examples), without


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("arc_memo_dir", type=Path, help="a checkout of matt-seb-ho/arc_memo")
    parser.add_argument("--programs", type=Path, required=True, help="<task id>.py seeds")
    parser.add_argument("--out", type=Path, required=True, help="examples file to write")
    args = parser.parse_args(argv)
    if not args.programs.is_dir():
        raise SystemExit(f"{args.programs}: no such folder of seed programs")
    annotations = read_annotations(args.arc_memo_dir / ANNOTATIONS)
    examples, without = build(annotations, args.programs)
    text = yaml.safe_dump(
        examples.model_dump(mode="json", exclude_defaults=True),
        sort_keys=False,
        allow_unicode=True,
        width=10_000,
    )
    atomic_write_text(args.out, text)
    print(
        f"wrote {args.out}: {len(examples.examples)} examples from {ANNOTATIONS}"
        + (f"; pseudocode in place of a program for {', '.join(without)}" if without else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
