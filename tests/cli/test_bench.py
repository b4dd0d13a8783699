"""``arcmemo bench generation`` against the fake JetSpec (tests/models/fake_jetspec)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import click
import pytest
from click.testing import CliRunner

from arcmemo.cli.main import cli
from arcmemo.cli.options import parse_model_args

FAKE_DIR = Path(__file__).resolve().parents[1] / "models" / "fake_jetspec"


def _activation() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "_fake_jetspec_activate", FAKE_DIR / "activate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    activation = _activation()
    module = activation.activate(monkeypatch)
    yield module
    activation.deactivate()


def write_model(directory: Path, **config: object) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "fake_model.json").write_text(json.dumps(config))
    return str(directory)


def test_bench_generation_prints_both_modes_and_checks_identity(
    fake: ModuleType, tmp_path: Path
) -> None:
    model = write_model(tmp_path / "m", reply="one two three four five")
    out = tmp_path / "result.json"
    args = ["bench", "generation", "--model", f"jetspec:{model}", "--model-arg", "draft=echo"]
    args += ["--model-arg", "tree_depth=3", "--prompts", "3", "--max-tokens", "16"]
    result = CliRunner().invoke(cli, [*args, "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "plain" in result.output and "speculative" in result.output
    assert "tokens/s" in result.output and "greedy outputs identical: yes (3/3)" in result.output
    saved = json.loads(out.read_text())
    assert saved["identical"] is True and saved["plain"]["prompts"] == 3
    assert saved["plain"]["generated_tokens"] == saved["speculative"]["generated_tokens"] == 18
    # 6 tokens: 1 from prefill + rounds of tree_depth + 1 = 4 accepted -> 2 rounds each
    assert saved["speculative"]["rounds"] == 6 and saved["plain"]["rounds"] == 18
    engine = fake.instances[0]
    assert [c["mode"] for c in engine.calls] == ["plain"] * 4 + ["tree"] * 4  # with warm-ups


def test_bench_generation_fails_when_outputs_differ(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="one two", tree_reply="one three")
    args = ["bench", "generation", "--model", f"jetspec:{model}", "--model-arg", "draft=random"]
    result = CliRunner().invoke(cli, [*args, "--prompts", "2", "--no-warmup"])
    assert result.exit_code == 1
    assert "greedy outputs identical: NO (0/2; differing prompts [0, 1])" in result.output


def test_bench_generation_needs_a_draft_and_a_jetspec_model(
    fake: ModuleType, tmp_path: Path
) -> None:
    model = write_model(tmp_path / "m", reply="x")
    no_draft = CliRunner().invoke(cli, ["bench", "generation", "--model", f"jetspec:{model}"])
    assert no_draft.exit_code != 0 and "draft=HEAD_DIR" in no_draft.output
    other = CliRunner().invoke(cli, ["bench", "generation", "--model", "openai:gpt-4o"])
    assert other.exit_code != 0 and "jetspec:MODEL_DIR" in other.output
    bad_option = CliRunner().invoke(
        cli, ["bench", "generation", "--model", f"jetspec:{model}", "--model-arg", "budget=x"]
    )
    assert bad_option.exit_code == 1 and "budget: " in bad_option.output


def test_bench_generation_reads_multi_line_prompts_from_json_lines(
    fake: ModuleType, tmp_path: Path
) -> None:
    model = write_model(tmp_path / "m", reply="one two")
    prompts = tmp_path / "prompts.jsonl"
    records = [{"prompt": "Grid:\n1 2\n3 4\nWhat next?", "id": "a"}, {"prompt": "second"}]
    prompts.write_text("\n".join(json.dumps(r) for r in records) + "\n\n")
    args = ["bench", "generation", "--model", f"jetspec:{model}", "--model-arg", "draft=echo"]
    args += ["--prompt-file", str(prompts), "--prompts", "3", "--no-warmup"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "greedy outputs identical: yes (3/3)" in result.output
    engine = fake.instances[0]
    tokenizer = engine.tokenizer
    seen = [" ".join(tokenizer.decode(c["prompt_ids"]).split()) for c in engine.calls]
    assert "Grid: 1 2 3 4 What next?" in seen[0] and "second" in seen[1]
    assert "Grid:" in seen[2]  # the pool starts over

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "ok"}\n{"text": "no prompt field"}\n')
    refused = CliRunner().invoke(cli, [*args[:6], "--prompt-file", str(bad)])
    assert refused.exit_code == 2 and "bad.jsonl:2" in refused.output and "prompt" in refused.output
    plain = tmp_path / "prompts.txt"
    plain.write_text("first line\n\nsecond line\n")
    lines = CliRunner().invoke(cli, [*args[:6], "--prompt-file", str(plain), "--prompts", "2"])
    assert lines.exit_code == 0 and "(2/2)" in lines.output


def test_parse_model_args() -> None:
    assert parse_model_args(("a=1", " b = x=y ")) == {"a": "1", "b": "x=y"}
    with pytest.raises(click.BadParameter, match="expected key=value"):
        parse_model_args(("oops",))
