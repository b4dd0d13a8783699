"""Train a memory on a small ARC-AGI-1 slice with a scripted model whose success depends on
the memory, print the learning curve, and draw it (``learning-curve.svg``).

The model is ``chain_model.py`` beside this script: three training tasks of ARC-AGI-1, each
solved only when the concept an earlier one wrote is shown, and a validation task solved
only with the second epoch's concept and misled by the third's. Everything else (the
sandbox, the checks on the examples, the memory writes, selection, scoring) is arcmemo's.
No key, no network; about a minute on two cores.

    python experiments/training/learning_curve.py [OUT]   (default: runs/training-curve)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(out: Path) -> int:
    command = [
        sys.executable, "-m", "arcmemo", "train", "arc-agi-1",
        "--split", "training", "--tasks", "67a3c6ac,68b16354,74dd1130",
        "--val-split", "training", "--val-tasks", "3c9b0459",
        "--epochs", "3",
        "--model", f"scripted:{HERE / 'chain_model.py'}",
        "--select", "all",
        "--update-every", "10",
        "--attempts", "2",
        "--feedback-rounds", "0",
        "--cache-dir", str(out / "cache"),
        "--out", str(out / "train"),
    ]  # fmt: skip
    trained = subprocess.run(command, check=False)
    if trained.returncode:
        return trained.returncode
    report = subprocess.run(
        [sys.executable, "-m", "arcmemo", "report", str(out / "train")], check=False
    )
    print(f"learning curve: {out / 'train' / 'learning-curve.svg'}")
    return report.returncode


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("runs/training-curve")))
