"""Terminal control sequences a program prints or raises reach no terminal through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from arcmemo.cli.main import cli
from tests.support.barc import GENERATOR, write_checkout

SAMPLES = Path(__file__).resolve().parents[2] / "puzzles" / "samples"
# Set the terminal's title, clear the screen, and an 8-bit CSI.
HOSTILE = "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31mred"


def _clean(output: str) -> None:
    for control in ("\x1b", "\x07", "\x9b"):
        assert control not in output, repr(output[-500:])


def test_seeds_import_barc_prints_no_control_sequences(tmp_path: Path) -> None:
    checkout = write_checkout(tmp_path / "BARC")
    raising = (
        "from common import *\n\nimport numpy as np\n\n# concepts:\n# rotation\n\n"
        "# description:\n# Rotate the grid.\n\ndef main(input_grid):\n"
        f"    print('{HOSTILE}')\n    raise ValueError('{HOSTILE}')\n" + GENERATOR
    )
    (checkout / "seeds" / "6150a2bd.py").write_text(raising)
    out = tmp_path / "seeds-out"
    result = CliRunner().invoke(cli, ["seeds", "import-barc", str(checkout), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "not used: 6150a2bd.py" in result.output and "pwned" in result.output
    _clean(result.output)


def test_puzzles_verify_prints_no_control_sequences(tmp_path: Path) -> None:
    folder = tmp_path / "samples"
    for sub in ("meta", "programs"):
        (folder / sub).mkdir(parents=True)
    name = "draw-line-0"
    (folder / f"{name}.json").write_text((SAMPLES / f"{name}.json").read_text())
    meta = json.loads((SAMPLES / "meta" / f"{name}.json").read_text())
    meta["generator_source"] = meta["generator_source"].replace(
        "out = concept_routine(", f"raise ValueError('{HOSTILE}')\n    out = concept_routine(", 1
    )
    (folder / "meta" / f"{name}.json").write_text(json.dumps(meta))
    result = CliRunner().invoke(cli, ["puzzles", "verify", str(folder)])
    assert result.exit_code == 1, result.output
    assert "pwned" in result.output
    _clean(result.output)
