"""``experiments/jetspec_gpu.py`` on a CPU: everything but the GPU runs.

The prompts of ``train`` and ``real`` (built by the benchmarks' own ``prompt``, the one the
runner calls), the trained model's tokenizer and chat template, the result tables of every
command and the argument parsing. A template change that breaks the recipe fails here, not
on a lent GPU.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arcmemo.benchmarks.arc.benchmark import ArcBenchmark
from arcmemo.benchmarks.arc.data import load_path
from arcmemo.models.base import Message

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "experiments" / "jetspec_gpu.py"


@pytest.fixture(scope="module")
def recipe() -> ModuleType:
    spec = importlib.util.spec_from_file_location("jetspec_gpu_recipe", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_documents_are_real_solve_prompts_with_answers(recipe: ModuleType) -> None:
    documents = recipe._synthetic_documents(8, seed=0)
    assert len(documents) == 8
    arc = [(m, a) for m, a in documents if "def transform(grid)" in a]
    aime = [(m, a) for m, a in documents if "\\boxed" in a]
    assert len(arc) == 6 and len(aime) == 2
    for messages, _ in documents:
        assert messages[0].role == "system" and messages[-1].role == "user"
        assert all("{{" not in m.content and "{%" not in m.content for m in messages)
    assert all("`transform`" in m[-1].content for m, _ in arc)
    assert all("Find the remainder" in m[-1].content for m, _ in aime)
    texts = recipe.training_texts(4, seed=0)
    assert len(texts) == 4
    assert all(t.startswith("<|im_start|>system\n") and t.endswith("<|im_end|>\n") for t in texts)


def test_eval_prompts_are_the_benchmark_prompts_of_the_fixture_tasks(
    recipe: ModuleType,
) -> None:
    prompts = recipe._eval_prompts()
    names = [name for name, _ in prompts]
    assert len(names) == 15 and names[-4:] == ["aime:0", "aime:1", "aime:2", "aime:3"]
    task = load_path(REPO / "tests" / "fixtures" / "arc" / "eval")[0]
    assert names[0] == f"arc:{task.id}"
    assert prompts[0][1] == ArcBenchmark().prompt(task, concepts="", previous=None)
    # the same task with the shipped seed memory, near 4k, 8k and 16k tokens (characters)
    long = dict(prompts[8:11])
    assert list(long) == ["arc+memory:4k", "arc+memory:8k", "arc+memory:16k"]
    for name, target in zip(long, (4000, 8000, 16000), strict=True):
        text = recipe._render(long[name])
        assert abs(len(text) - target) < 0.1 * target, (name, len(text))
        assert "related:" in long[name][-1].content  # concepts of the memory, in the prompt


def test_a_prompt_change_reaches_the_recipe(
    recipe: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = [Message(role="user", content="changed")]
    monkeypatch.setattr(ArcBenchmark, "prompt", lambda self, task, **kw: marker)
    task = load_path(REPO / "tests" / "fixtures" / "arc" / "eval")[0]
    assert recipe._arc_messages(task) == marker


def test_the_trained_tokenizer_renders_prompts_as_they_were_trained(
    recipe: ModuleType,
) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from arcmemo.models.jetspec.engine import chat_text

    texts = recipe.training_texts(8, seed=0)
    tokenizer = recipe.char_tokenizer(texts)
    unknown = tokenizer.unk_token_id
    for name, messages in recipe._eval_prompts():
        text = chat_text(tokenizer, messages, thinking=False)
        assert text == recipe._render(messages), name  # the training rendering
        ids = tokenizer(text, add_special_tokens=False).input_ids
        assert unknown not in ids, name
        assert tokenizer.decode(ids) == text
    prompts = recipe.real_prompts(tokenizer)
    lengths = [int(ids.shape[1]) for _, ids in prompts]
    assert lengths == sorted(lengths, reverse=True) and len(prompts) == 15


def _rows() -> dict[str, Any]:
    real = [
        {"config": "eager", "mode": mode, "prompt": prompt, "prompt_tokens": tokens,
         "generated": 160, "seconds": seconds, "tokens_per_s": 160 / seconds,
         "mean_accept_length": accept, "first_difference": difference}
        for mode, seconds, accept, difference in (
            ("plain", 2.0, None, None), ("spec", 1.0, 2.5, None))
        for prompt, tokens in (("arc:a", 5000), ("aime:0", 400))
    ]  # fmt: skip
    versus = [
        {"config": "hf-dynamic", "mode": "plain", "prompt_tokens": 1000, "ttft_s": 0.03,
         "first_call_s": 1.0, "generated": 32, "tokens_per_s": 50.0,
         "decode_tokens_per_s": 55.0, "peak_above_weights_gib": 0.2, "first_difference": None,
         "equal_to_hf": True},
        {"config": "cudagraph", "mode": "spec", "prompt_tokens": 1000, "ttft_s": 0.03,
         "first_call_s": 1.0, "generated": 32, "tokens_per_s": 60.0,
         "decode_tokens_per_s": 66.0, "peak_above_weights_gib": 0.3, "first_difference": 4,
         "equal_to_hf": False, "mean_accept_length": 1.5, "step_bytes": 2.0e9,
         "bandwidth_fraction": 0.4, "margins": {"hf": 0.01, "ours": 0.02}},
        {"config": "cudagraph", "mode": "plain", "prompt_tokens": 4000, "error": "OOM"},
    ]  # fmt: skip
    memory = [
        {"config": "eager-head", "speculative": spec, "kv_pool": pool, "prompt_tokens": 1000,
         "generated": 16, "peak_above_weights_gib": 1.0, "kv_pool_gib": 0.5,
         "weights_gib": 1.0, "decode_s": 0.5}
        for spec in (False, True) for pool in ("upstream", "shared")
    ]  # fmt: skip
    return {"real": real, "versus": versus, "memory": memory}


def test_real_table_groups_prompts_by_length_and_splits_a_round(recipe: ModuleType) -> None:
    """ARC with memory gets a line per length; a speculative row's round split gives the
    plain step, the round, its draft and the break-even (round over step) in ms."""
    rows = [
        {"config": "nogather-graphed", "mode": mode, "prompt": prompt, "prompt_tokens": tokens,
         "generated": 160, "seconds": seconds, "tokens_per_s": 160 / seconds,
         "mean_accept_length": accept, "first_difference": None, **split}
        for prompt, tokens in (("arc:a", 1500), ("arc+memory:4k", 4000), ("arc+memory:16k", 16000))
        for mode, seconds, accept, split in (
            ("plain", 0.4, None, {}),
            ("spec", 0.2, 3.0, {"round_s": 0.005, "draft_s": 0.001}),
        )
    ]  # fmt: skip
    lines = recipe._real_table(rows).splitlines()
    assert "break-even" in lines[0]
    by_set = {line.split()[1]: line.split() for line in lines[1:]}
    assert list(by_set) == ["arc", "arc+memory:4k", "arc+memory:16k"]
    # 400 tok/s plain: 2.50 ms a step; 5 ms a round, 1 ms of it drafting: break-even 2.00
    assert by_set["arc+memory:4k"][-4:] == ["2.50", "5.00", "1.00", "2.00"]
    assert by_set["arc+memory:4k"][6] == "2.00x"


def test_summary_prints_every_table(recipe: ModuleType, tmp_path: Path) -> None:
    rows = _rows()
    args = {"model": "qwen3-0.6b", "max_tokens": 32, "dtype": "fp32"}
    (tmp_path / "real.json").write_text(json.dumps({"args": args, "rows": rows["real"]}))
    (tmp_path / "versus-qwen3-0.6b-plain.json").write_text(
        json.dumps({"args": args, "rows": rows["versus"]})
    )
    (tmp_path / "memory.json").write_text(json.dumps({"args": args, "rows": rows["memory"]}))
    overhead = {"mode": "plain", "reps": 4, "median_ratio": 1.01, "ci95": [1.0, 1.02],
                "iqr": [1.0, 1.02], "min_max": [0.99, 1.03], "provider_ms_median": 0.5,
                "same_token_counts": True}  # fmt: skip
    (tmp_path / "overhead.json").write_text(
        json.dumps({"args": args, "options": {"attn_backend": "sdpa"}, "rows": [overhead]})
    )
    bench = {
        "plain": {"prompts": 3, "tokens_per_s": 10.0},
        "speculative": {"tokens_per_s": 12.0, "tokens_per_round": 2.0},
        "mismatches": [],
    }
    compare = {"results": [{"config": "eager-head", "bench": bench, "peak_gib": 1.0,
                            "wall_s": 3.0}, {"config": "sdpa-echo", "error": "boom"}]}  # fmt: skip
    (tmp_path / "compare-small-eager-head.json").write_text(json.dumps(compare))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "summary", "--out", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, check=True,
    )  # fmt: skip
    out = done.stdout
    assert "SUMMARY" in out
    assert "eager-head" in out and "3/3" in out and "FAILED: boom" in out
    assert "hook overhead (plain, 4 paired reps): median +1.00%" in out
    assert "peak GPU memory above the weights" in out
    # real: speedup is spec over plain tok/s; accepted length; equality count
    assert any(line.split()[:2] == ["eager", "arc"] and "2.00x" in line and "2.50" in line
               and "2/2" in line for line in out.splitlines())  # fmt: skip
    assert "FAILED: OOM" in out
    assert "from 4" in out
    assert "bandwidth" in out  # the versus table names its bandwidth column


def test_versus_line_reports_bandwidth_and_margins(recipe: ModuleType) -> None:
    row = _rows()["versus"][1]
    line = recipe._versus_line(row)
    assert " 40%" in line and "from 4" in line and "0.01/0.02" in line


def test_arguments(recipe: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert recipe.main(["summary", "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out").is_dir()
    with pytest.raises(SystemExit):
        recipe.main(["nonsense", "--out", str(tmp_path)])
    with pytest.raises(SystemExit):
        recipe.main(["versus", "--out", str(tmp_path), "--model", "qwen3-70b"])
    capsys.readouterr()
    with pytest.raises(SystemExit):
        recipe.main(["--help"])
    usage = capsys.readouterr().out
    for command in ("compare", "overhead", "memory", "versus", "profile", "train", "real"):
        assert command in usage


def test_decode_step_bytes(recipe: ModuleType) -> None:
    # Qwen3-0.6B's shape: bf16 weights read once a step (embeddings tied: the lm_head is
    # the embedding matrix, read once) plus the KV of the context
    shape = recipe.MODELS["qwen3-0.6b"]
    weights = recipe.weight_bytes(shape)
    assert 1.1e9 < weights < 1.3e9  # Qwen3-0.6B: 0.6B parameters in bf16 ~ 1.2 GB
    kv_per_token = 28 * 8 * 128 * 2 * 2  # layers x KV heads x head dim x (K, V) x bf16
    assert recipe.step_bytes(shape, 1000) == weights + 1000 * kv_per_token
    eight = recipe.weight_bytes(recipe.MODELS["qwen3-8b"])
    assert 15.0e9 < eight < 15.3e9  # 7.6B parameters without the embedding matrix


def test_every_call_of_the_shell_recipe_parses(recipe: ModuleType) -> None:
    """experiments/jetspec_gpu.sh's calls of this script: known commands, options, configs."""
    import shlex

    text = (REPO / "experiments" / "jetspec_gpu.sh").read_text().replace("\\\n", " ")
    calls = [line.split("$X ", 1)[1] for line in text.splitlines() if "$X " in line]
    assert len(calls) >= 10
    parser = recipe.build_parser()
    for call in calls:
        argv = shlex.split(call.split("|")[0].replace("$OUT", "out").replace("$MODELS", "m"))
        args = parser.parse_args([*argv, "--out", "out"])
        assert not recipe.known_configs(args.configs), call
    done = subprocess.run(["bash", "-n", str(REPO / "experiments" / "jetspec_gpu.sh")])
    assert done.returncode == 0
