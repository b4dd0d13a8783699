"""``arcmemo select``: what a selector picks for one task, why, and the solve view."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arcmemo.cli.main import cli
from arcmemo.memory.schema import Concept
from arcmemo.memory.seeds import load_seed

LOOP = Path(__file__).resolve().parent.parent / "fixtures" / "loop"
SELECT_MODEL = f"scripted:{LOOP / 'select_only.yaml'}"
OWN_CONCEPT = "mirror every row"


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "300")  # rich must not wrap the lines under test


@pytest.fixture
def memory_path(tmp_path: Path) -> Path:
    """The seed memory plus a concept learned from training task 67a3c6ac only."""
    memory = load_seed("arc")
    memory.add(
        Concept(
            name=OWN_CONCEPT,
            kind="routine",
            routine_subtype="grid manipulation",
            cues=["each row reads backwards in the output"],
        ),
        task_id="67a3c6ac",
    )
    path = tmp_path / "memory.json"
    memory.save(path)
    return path


def select(task_id: str, memory_path: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli,
        ["select", task_id, "--split", "training", "--memory", str(memory_path), *args],
    )


def test_prints_selected_unknown_reasons_and_the_solve_view(memory_path: Path) -> None:
    result = select("68b16354", memory_path, "--model", SELECT_MODEL)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "selected for 68b16354 (llm)" in out
    assert "- reflect grid\n- rotate grid\n" in out
    assert "names matching nothing in memory: no such concept" in out
    assert "The output mirrors the input." in out  # the model's reasoning, under "why"
    view = out.split("solve-prompt concepts section")[1]
    seed = load_seed("arc")
    for name in ("reflect grid", "rotate grid"):
        concept = seed.find(name)
        assert concept is not None
        assert f"- concept: {name}" in view
        for note in concept.implementation:
            assert note in view
    titles = " ".join(line for line in view.splitlines() if "other concepts:" in line)
    assert "tile grid" in titles and OWN_CONCEPT in titles
    assert "- concept: tile grid" not in view


def test_a_tasks_own_concepts_are_hidden_from_it(memory_path: Path) -> None:
    result = select("67a3c6ac", memory_path, "--model", SELECT_MODEL)
    assert result.exit_code == 0, result.output
    assert OWN_CONCEPT not in result.output
    assert "- reflect grid" in result.output


def test_embedding_selector_needs_no_model_call(memory_path: Path) -> None:
    result = select(
        "68b16354", memory_path, "--select", "embedding", "--top-k", "2",
        "--model", "scripted:/nonexistent/script.py",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "selected for 68b16354 (embedding)" in result.output
    picked = result.output.split("why")[0].splitlines()
    assert len([line for line in picked if line.startswith("- ")]) == 2


def test_an_unknown_task_is_a_clean_error(memory_path: Path) -> None:
    result = select("00000000", memory_path, "--model", SELECT_MODEL)
    assert result.exit_code == 1
    assert "task ids not found: 00000000" in result.output
    assert "Traceback" not in result.output


def test_embedder_option_reaches_the_embedding_selector(
    memory_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = select(
        "68b16354", memory_path, "--select", "embedding",
        "--embedder", "openai:text-embedding-3-small", "--model", "scripted:/nonexistent/script.py",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "OPENAI_API_KEY" in result.output  # the openai embedder was used, and needs a key


def test_a_selection_that_resolves_to_nothing_is_a_printed_warning(
    memory_path: Path, tmp_path: Path
) -> None:
    script = tmp_path / "nothing.yaml"
    script.write_text(
        '"decide which of them are relevant to this puzzle": |\n'
        "  ```yaml\n  - name: warp drive\n  ```\n"
    )
    result = select("68b16354", memory_path, "--model", f"scripted:{script}")
    assert result.exit_code == 0, result.output
    assert (
        "warning: the llm selection chose nothing: no name resolved (warp drive)" in result.output
    )
    named = select("68b16354", memory_path, "--model", SELECT_MODEL)
    assert "warning:" not in named.output


# A selection model whose answer changes with each request it gets (not with a cache hit).
EACH_CALL_ANEW = """
ANSWERS = iter(["```yaml\\n- reflect grid\\n```", "```yaml\\n- tile grid\\n```"])

def respond(messages):
    return next(ANSWERS)
"""


def test_variants_shows_each_prompt_variants_own_selection(
    memory_path: Path, tmp_path: Path
) -> None:
    """Variant v asks for sample v of the request, as arcmemo run does: with the response
    cache on, the second variant still gets an answer of its own, not the first's again."""
    script = tmp_path / "each_call.py"
    script.write_text(EACH_CALL_ANEW)
    result = select("68b16354", memory_path, "--model", f"scripted:{script}", "--variants", "2")
    assert result.exit_code == 0, result.output
    parts = result.output.split("selected for 68b16354 (llm, prompt variant ")[1:]
    assert [part.split(")", 1)[0] for part in parts] == ["0 of 2", "1 of 2"]
    chosen = [re.findall(r"^- (.+)$", part.split(" why ")[0], re.M) for part in parts]
    assert chosen == [["reflect grid"], ["tile grid"]]
    # each variant's solve view shows its own choice in full
    views = [part.split("solve-prompt concepts section")[1] for part in parts]
    assert "- concept: reflect grid" in views[0] and "- concept: tile grid" not in views[0]
    assert "- concept: tile grid" in views[1] and "- concept: reflect grid" not in views[1]
    # One variant (the default) is the command as it was: one selection, no variant named.
    single = select("68b16354", memory_path, "--model", SELECT_MODEL)
    assert "prompt variant" not in single.output
