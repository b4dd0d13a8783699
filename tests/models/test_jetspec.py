"""Tests of the ``jetspec:`` provider.

* Contract tests (always run, CPU): against the fake ``jetspec`` + ``torch`` in
  ``fake_jetspec/`` (documented surface, raises on misuse and on concurrent entry).
* Opt-in (CPU): with the real ``jetspec``, torch and transformers importable, a tiny
  random Qwen3 saved to a temporary folder; greedy speculative == plain decoding.
* GPU (``-m gpu``): the same check plus the generation benchmark on CUDA.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arcmemo.core.registry import RegistryError
from arcmemo.models.base import GenerateParams, Message, ProviderError
from arcmemo.models.jetspec import (
    KNOWN_ATTN_BACKENDS,
    SAMPLING_TEMPERATURE,
    JetSpecOptions,
    JetSpecProvider,
    apply_stop,
    split_thinking,
    summarize_stats,
)
from arcmemo.models.registry import PROVIDERS

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fake_activation = _load(HERE / "fake_jetspec" / "activate.py", "_fake_jetspec_activate")

USER = [Message(role="system", content="be brief"), Message(role="user", content="two plus two")]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The fake ``jetspec.inference_engine`` module, active for one test."""
    module = fake_activation.activate(monkeypatch)
    yield module
    fake_activation.deactivate()


def write_model(directory: Path, **config: Any) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "fake_model.json").write_text(json.dumps(config))
    return str(directory)


def write_head(directory: Path, block_size: int = 16, taps: tuple[int, ...] = (1, 3)) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    config = {"block_size": block_size, "dflash_config": {"target_layer_ids": list(taps)}}
    (directory / "config.json").write_text(json.dumps(config))
    return str(directory)


def generate(provider: JetSpecProvider, params: GenerateParams | None = None, **mode: bool) -> Any:
    async def go() -> Any:
        try:
            if mode:
                return await provider.generate_mode(USER, params or GenerateParams(), **mode)
            return await provider.generate(USER, params or GenerateParams())
        finally:
            await provider.aclose()

    return asyncio.run(go())


def engine_of(fake: ModuleType, index: int = 0) -> Any:
    return fake.instances[index]


# -- import hygiene ------------------------------------------------------------------------


def test_importing_arcmemo_models_imports_neither_torch_nor_jetspec() -> None:
    code = (
        "import sys, arcmemo, arcmemo.models, arcmemo.models.jetspec, arcmemo.cli.bench\n"
        "import arcmemo.models.jetspec.bench\n"
        "from arcmemo.models.registry import PROVIDERS\n"
        "PROVIDERS.get('jetspec')\n"
        "heavy = sorted(m for m in ('torch', 'jetspec', 'transformers') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert result.stdout.strip() == ""


# -- options -------------------------------------------------------------------------------


def jetspec_options(values: dict[str, str]) -> JetSpecOptions:
    """``--model-arg`` values validated as the registry does for ``jetspec:`` specs."""
    options = PROVIDERS.options("jetspec", values)
    assert isinstance(options, JetSpecOptions)
    return options


def test_options_parse_cli_strings_to_types() -> None:
    options = jetspec_options(
        {
            "draft": "/heads/q3",
            "tree_depth": "5",
            "budget": "64",
            "width": "3",
            "speculative": "false",
            "thinking": "on",
            "dtype": "fp32",
            "devices": "cuda:0, cuda:1",
            "session": "yes",
            "temperature": "0.6",
        }
    )
    assert (options.tree_depth, options.budget, options.width) == (5, 64, 3)
    assert options.speculative is False and options.thinking is True and options.session is True
    assert options.dtype == "float32" and options.temperature == 0.6
    assert options.devices == ("cuda:0", "cuda:1")
    assert options.engine_devices() == ["cuda:0", "cuda:1"]
    assert options.speculates is False
    assert jetspec_options({"draft": "/heads/q3"}).speculates is True
    assert jetspec_options({}).speculates is False


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"attn_backend": "triton"}, "unknown attention backend 'triton'"),
        ({"budget": "lots"}, "budget: "),
        ({"tree_depth": "0"}, "tree_depth: "),
        ({"speculative": "maybe"}, "speculative: "),
        ({"bugdet": "5"}, "bugdet: Extra inputs are not permitted"),
        ({"speculative": "true"}, "speculative=true needs draft"),
        ({"device": "cuda:0", "devices": "cuda:1"}, "either device or devices"),
        ({"draft": "random", "drafter": "graphed"}, "needs a draft head"),
        (
            {"attn_backend": "triton_paged_tree_cudagraph", "budget": "300"},
            "budget=300 exceeds 256",
        ),
    ],
)
def test_bad_options_give_clear_errors(options: dict[str, str], expected: str) -> None:
    with pytest.raises(RegistryError, match=r"^model provider 'jetspec': ") as caught:
        jetspec_options(options)
    assert expected in str(caught.value) and "its options: draft, drafter" in str(caught.value)


def test_every_known_backend_is_accepted() -> None:
    for backend in KNOWN_ATTN_BACKENDS:
        assert jetspec_options({"attn_backend": backend}).attn_backend == backend


# -- helpers -------------------------------------------------------------------------------


def test_apply_stop_cuts_at_the_earliest_stop_string() -> None:
    assert apply_stop("a b STOP c END d", ("END", "STOP")) == ("a b ", True)
    assert apply_stop("a b", ("x",)) == ("a b", False)
    assert apply_stop("a b", None) == ("a b", False)
    assert apply_stop("a b", ("",)) == ("a b", False)


def test_split_thinking() -> None:
    assert split_thinking("<think> hmm yes </think>\n\n42") == ("hmm yes", "42")
    assert split_thinking("42") == (None, "42")


# -- provider contract against the fake ------------------------------------------------------


def test_missing_jetspec_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jetspec", None)
    with pytest.raises(ProviderError, match="jetspec is not installed") as caught:
        JetSpecProvider.open("/models/qwen3")
    assert "pip install -e" in str(caught.value) and "transformers" in str(caught.value)


def test_prompt_uses_the_chat_template_without_extra_special_tokens(
    fake: ModuleType, tmp_path: Path
) -> None:
    provider = JetSpecProvider.open(write_model(tmp_path / "m", reply="four"))
    [completion] = generate(provider)
    engine = engine_of(fake)
    expected_text = engine.tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in USER],
        tokenize=False,
        add_generation_prompt=True,
        enable_thinking=False,
    )
    expected_ids = engine.tokenizer(expected_text, add_special_tokens=False).input_ids
    [call] = engine.calls
    assert call["prompt_ids"] == expected_ids  # no BOS added on top of the template
    assert engine.tokenizer.template_calls[0] == {
        "add_generation_prompt": True,
        "enable_thinking": False,
    }
    assert completion.usage.prompt_tokens == len(expected_ids)
    assert completion.text == "four"


def test_thinking_option_and_reasoning_split(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", thinking="add two and two", reply="four")
    [completion] = generate(JetSpecProvider.open(model, thinking="true"))
    assert engine_of(fake).tokenizer.template_calls[0]["enable_thinking"] is True
    assert completion.reasoning == "add two and two"
    assert completion.text == "four"
    # <think> add two and two </think> four <eos>
    assert completion.usage.completion_tokens == 8
    assert completion.usage.reasoning_tokens == 6


def test_engine_constructor_gets_the_options(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="x")
    provider = JetSpecProvider.open(
        model,
        dtype="fp32",
        device="cpu",
        attn_backend="triton_paged_tree",
        kv_block_size="32",
        fuse_gemms="true",
    )
    generate(provider)
    args = engine_of(fake).init_args
    assert args["dtype"] == "torch.float32" and args["device"] == "cpu"
    assert args["attn_backend"] == "triton_paged_tree" and args["block_size"] == 32
    assert args["fuse_gemms"] is True and args["model_name_or_path"] == model


def test_stop_strings_truncate_with_finish_reason_stop(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="alpha beta STOP gamma", eos=False)
    params = GenerateParams(stop=("STOP",), max_tokens=50)
    [completion] = generate(JetSpecProvider.open(model), params)
    assert completion.text == "alpha beta "
    assert completion.finish_reason == "stop"
    assert completion.usage.completion_tokens == 4  # the engine generated all four words


def test_finish_reason_length_and_eos(fake: ModuleType, tmp_path: Path) -> None:
    long_reply = write_model(tmp_path / "long", reply="a b c d e f", eos=True)
    [cut] = generate(JetSpecProvider.open(long_reply), GenerateParams(max_tokens=3))
    assert (cut.text, cut.finish_reason, cut.usage.completion_tokens) == ("a b c", "length", 3)
    [done] = generate(JetSpecProvider.open(long_reply), GenerateParams(max_tokens=30))
    assert (done.text, done.finish_reason, done.usage.completion_tokens) == (
        "a b c d e f",
        "stop",
        7,
    )


def test_sampling_parameters_and_seed(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="x")
    generate(JetSpecProvider.open(model), GenerateParams(temperature=0.7, max_tokens=12, seed=5))
    [call] = engine_of(fake).calls
    assert call["sampling"] == fake.SamplingParams(temperature=0.7, max_new_tokens=12)
    assert sys.modules["torch"].seeds == [5]

    generate(JetSpecProvider.open(model, temperature="0.2", max_tokens="40"))
    [call] = engine_of(fake, 1).calls
    assert call["sampling"] == fake.SamplingParams(temperature=0.2, max_new_tokens=40)
    assert sys.modules["torch"].seeds == [5]  # no seed, no reseeding


def test_several_samples_sample_with_a_seed_each(fake: ModuleType, tmp_path: Path) -> None:
    """No temperature and n > 1: the default temperature, sample i seeded with seed + i."""
    model = write_model(tmp_path / "m", reply="x y")
    params = GenerateParams(n=3, seed=10)
    first = generate(JetSpecProvider.open(model), params)
    assert len({c.text for c in first}) == 3 and all(c.text.endswith(" x y") for c in first)
    calls = engine_of(fake).calls
    assert len(calls) == 3
    assert {c["sampling"].temperature for c in calls} == {SAMPLING_TEMPERATURE}
    assert sys.modules["torch"].seeds == [10, 11, 12]
    assert [(c.stats["sample"], c.stats["seed"]) for c in first] == [(0, 10), (1, 11), (2, 12)]
    again = generate(JetSpecProvider.open(model), params)
    assert [c.text for c in again] == [c.text for c in first]  # a sample is its seed's
    # sample 1 asked for alone (the client's seed + 1) is the same sample 1
    [alone] = generate(JetSpecProvider.open(model), GenerateParams(temperature=0.7, seed=11))
    assert alone.text == first[1].text
    # no seed: torch's generator runs on, the samples still differ
    unseeded = generate(JetSpecProvider.open(model), GenerateParams(n=2))
    assert unseeded[0].text != unseeded[1].text
    assert sys.modules["torch"].seeds == [10, 11, 12] * 2 + [11]


def test_one_sample_without_temperature_is_greedy(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="x y")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [one] = generate(JetSpecProvider.open(model), GenerateParams(seed=3))
    assert one.text == "x y" and one.stats["temperature"] == 0.0 and one.stats["seed"] is None
    assert sys.modules["torch"].seeds == []  # greedy: nothing to seed


def test_greedy_samples_repeat_with_a_warning(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="x y")
    with pytest.warns(UserWarning, match="2 copies of one greedy decode"):
        completions = generate(JetSpecProvider.open(model), GenerateParams(n=2, temperature=0))
    assert [c.text for c in completions] == ["x y"] * 2
    with pytest.warns(UserWarning, match="copies of one greedy decode"):
        generate(JetSpecProvider.open(model, temperature="0"), GenerateParams(n=2))


def test_concurrent_requests_are_serialized_on_one_thread(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="same answer", delay_s=0.003)
    provider = JetSpecProvider.open(model, draft="echo")

    async def many() -> list[Any]:
        try:
            calls = [provider.generate(USER, GenerateParams()) for _ in range(30)]
            return await asyncio.gather(*calls)
        finally:
            await provider.aclose()

    results = asyncio.run(many())
    engine = engine_of(fake)
    assert [r[0].text for r in results] == ["same answer"] * 30
    assert len(engine.calls) == 30
    assert len(engine.threads) == 1 and threading.get_ident() not in engine.threads


def test_timeout_counts_from_the_engine_start_and_queue_wait_is_reported(
    fake: ModuleType, tmp_path: Path
) -> None:
    """Three requests of ~0.15 s each on one engine, 0.3 s timeout: the last one waits
    ~0.3 s in the queue and still succeeds, because the queue does not count."""
    model = write_model(tmp_path / "m", reply=" ".join(["w"] * 15), step_delay_s=0.01)
    provider = JetSpecProvider.open(model, timeout="0.3")

    async def three() -> list[Any]:
        try:
            return await asyncio.gather(*(provider.generate(USER, GenerateParams()) for _ in "abc"))
        finally:
            await provider.aclose()

    results = [completion for [completion] in asyncio.run(three())]
    queued = sorted(c.stats["queue_s"] for c in results)
    assert queued[-1] > 0.25 and queued[-1] > results[-1].stats["generation_s"]
    assert all(c.stats["generation_s"] < 0.3 for c in results)
    stats = provider.statistics(results[0])
    assert {"queue_s", "temperature", "tokens_per_s"} <= stats.keys()
    assert not {"engine", "sample", "seed"} & stats.keys()  # labels are not statistics


@pytest.mark.parametrize("draft", [None, "echo"])
def test_a_decode_past_its_timeout_is_stopped_and_retryable(
    fake: ModuleType, tmp_path: Path, draft: str | None
) -> None:
    model = write_model(tmp_path / "m", reply=" ".join(["w"] * 40), step_delay_s=0.02)
    provider = JetSpecProvider.open(model, **({"draft": draft, "tree_depth": "1"} if draft else {}))
    provider.request_timeout_s = 0.1  # what a client hands over

    async def late_then_quick() -> tuple[float, Any]:
        try:
            started = time.monotonic()
            with pytest.raises(ProviderError, match=r"timeout: decoding took longer than 0\.1 s"):
                await provider.generate(USER, GenerateParams())
            stopped = time.monotonic() - started
            [quick] = await provider.generate(USER, GenerateParams(max_tokens=2))
            return stopped, quick
        finally:
            await provider.aclose()

    stopped, quick = asyncio.run(late_then_quick())
    assert stopped < 0.5  # stopped at the next step, not after all 40 (0.8 s)
    assert quick.usage.completion_tokens == 2


def test_an_abandoned_request_stops_its_decode(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply=" ".join(["w"] * 50), step_delay_s=0.02)
    provider = JetSpecProvider.open(model)

    async def abandon() -> float:
        try:
            task = asyncio.ensure_future(provider.generate(USER, GenerateParams()))
            await asyncio.sleep(0.1)
            task.cancel()
            started = time.monotonic()
            await provider.generate(USER, GenerateParams(max_tokens=1))
            return time.monotonic() - started
        finally:
            await provider.aclose()

    assert asyncio.run(abandon()) < 0.5  # the engine was freed, not busy for 1 s more


def test_the_checkpoint_wraps_the_engine_sampler(fake: ModuleType, tmp_path: Path) -> None:
    from jetspec.inference_engine import engine as steps

    generate(JetSpecProvider.open(write_model(tmp_path / "m", reply="x")))
    assert steps.sample._arcmemo_checkpointed
    assert jetspec_options({"kv_pool": "upstream"}).kv_pool == "upstream"
    with pytest.raises(RegistryError, match="kv_pool"):
        jetspec_options({"kv_pool": "half"})


def test_arc_run_fills_per_stage_provider_statistics(fake: ModuleType, tmp_path: Path) -> None:
    """``arcmemo run`` with the provider: every stage of summary.json has numeric JetSpec
    statistics (labels left out), and the two attempts are different samples."""
    from click.testing import CliRunner

    from arcmemo.cli.main import cli

    model = write_model(tmp_path / "m", reply="no program here")
    out = tmp_path / "run"
    args = ["run", "arc-agi-1", "--data", str(REPO / "tests" / "fixtures" / "arc" / "eval")]
    args += ["--tasks", "66e6c45b", "--model", f"jetspec:{model}", "--model-arg", "draft=echo"]
    args += ["--attempts", "2", "--sandbox", "process", "--out", str(out)]
    result = CliRunner().invoke(cli, args, env={"ARCMEMO_CACHE_DIR": str(tmp_path / "cache")})
    assert (out / "summary.json").is_file(), result.output
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["stages"]) == {"solve", "retry"}
    for name, stage in summary["stages"].items():
        stats = stage["provider_stats"]
        assert {"tokens_per_s", "mean_accept_length", "queue_s", "generation_s"} <= set(stats)
        assert not {"engine", "sample", "seed", "mode", "device"} & set(stats), name
        assert all(isinstance(s["total"], float) for s in stats.values())
    assert "engine" not in summary["provider_stats"]
    [task] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    first_steps = [attempt["steps"][0]["completion"] for attempt in task["attempts"]]
    assert len(set(first_steps)) == 2, first_steps


def test_fake_engine_detects_concurrent_entry(fake: ModuleType, tmp_path: Path) -> None:
    """Guards the test above: without the worker queue, concurrent calls would fail."""
    engine = fake.JetSpecEngine(write_model(tmp_path / "m", reply="x", delay_s=0.05))
    prompt = engine.tokenizer("hi", return_tensors="pt").input_ids
    errors: list[BaseException] = []

    def call() -> None:
        try:
            engine.generate(prompt)
        except RuntimeError as error:
            errors.append(error)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors and "two threads" in str(errors[0])


def test_several_devices_get_one_engine_and_thread_each(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="x", delay_s=0.01)
    provider = JetSpecProvider.open(model, devices="cuda:0,cuda:1")

    async def many() -> None:
        try:
            await asyncio.gather(*(provider.generate(USER, GenerateParams()) for _ in range(8)))
        finally:
            await provider.aclose()

    asyncio.run(many())
    engines = sorted(fake.instances, key=lambda e: e.device)
    assert [e.device for e in engines] == ["cuda:0", "cuda:1"]
    assert [len(e.calls) for e in engines] == [4, 4]
    assert engines[0].threads.isdisjoint(engines[1].threads)


def test_speculative_decoding_with_a_draft_head_and_its_statistics(
    fake: ModuleType, tmp_path: Path
) -> None:
    model = write_model(tmp_path / "m", reply="w1 w2 w3 w4 w5 w6 w7 w8 w9")
    head = write_head(tmp_path / "head", block_size=16, taps=(1, 3))
    [completion] = generate(JetSpecProvider.open(model, draft=head, budget="64", width="5"))
    [call] = engine_of(fake).calls
    assert call["mode"] == "tree"
    # the head drafts 15 positions: tree depth 15, block size 16 (they must agree)
    assert (call["tree_depth"], call["block_size"]) == (15, 16)
    assert (call["budget"], call["tree_width"], call["algo"]) == (64, 5, "accum_logp")
    stats = completion.stats
    # 10 tokens = 1 from prefill + rounds of 3 accepted: 3, 3, 3
    assert stats["mode"] == "speculative" and stats["generated_tokens"] == 10
    assert stats["rounds"] == 3 and stats["tokens_per_round"] == pytest.approx(10 / 3)
    assert stats["mean_accept_length"] == pytest.approx(3.0)
    assert stats["mean_tree_size"] == pytest.approx(64.0)
    assert stats["generation_s"] >= 0 and stats["prompt_tokens"] == completion.usage.prompt_tokens
    assert completion.text == "w1 w2 w3 w4 w5 w6 w7 w8 w9" and completion.finish_reason == "stop"


def test_tree_depth_option_overrides_the_head_block(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="a b")
    head = write_head(tmp_path / "head", block_size=16)
    generate(JetSpecProvider.open(model, draft=head, tree_depth="20"))
    [call] = engine_of(fake).calls
    assert (call["tree_depth"], call["block_size"]) == (20, 21)


def test_first_token_eos_has_no_stats_keys(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="", eos=True)
    [completion] = generate(JetSpecProvider.open(model, draft="random"))
    assert completion.text == "" and completion.finish_reason == "stop"
    assert completion.stats["rounds"] == 0 and completion.stats["mean_accept_length"] is None
    assert completion.usage.completion_tokens == 1


def test_plain_decoding_without_draft_or_when_disabled(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="a b c")
    [plain] = generate(JetSpecProvider.open(model, draft="echo", speculative="false"))
    assert engine_of(fake).calls[0]["mode"] == "plain"
    assert plain.stats["mode"] == "plain" and plain.stats["tokens_per_round"] == 1.0
    assert plain.stats["rounds"] == 4

    forced_plain = JetSpecProvider.open(model, draft="echo", speculative="false")
    [tree] = generate(forced_plain, speculative=True)
    assert engine_of(fake, 1).calls[0]["mode"] == "tree" and tree.text == plain.text

    [default_plain] = generate(JetSpecProvider.open(model))
    assert engine_of(fake, 2).calls[0]["mode"] == "plain" and default_plain.text == "a b c"

    with pytest.raises(ProviderError, match="needs draft"):
        generate(JetSpecProvider.open(model), speculative=True)


def test_session_is_dropped_when_max_tokens_changes(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="a b c")
    provider = JetSpecProvider.open(model, draft="random", session="true")

    async def two() -> None:
        try:
            await provider.generate(USER, GenerateParams(max_tokens=8))
            await provider.generate(USER, GenerateParams(max_tokens=8))
            await provider.generate(USER, GenerateParams(max_tokens=16))
        finally:
            await provider.aclose()

    asyncio.run(two())  # the fake raises "tree session mismatch" unless the hook resets
    calls = engine_of(fake).calls
    assert [c["session"] for c in calls] == [True, True, True]
    assert [c["session_prompt_capacity"] for c in calls] == [256, 256, 256]


def test_model_load_failure_is_a_provider_error(fake: ModuleType, tmp_path: Path) -> None:
    provider = JetSpecProvider.open(str(tmp_path / "missing"))

    async def twice() -> list[BaseException]:
        errors: list[BaseException] = []
        for _ in range(2):
            try:
                await provider.generate(USER, GenerateParams())
            except ProviderError as error:
                errors.append(error)
        await provider.aclose()
        return errors

    errors = asyncio.run(twice())
    assert len(errors) == 2
    assert "cannot load" in str(errors[0]) and "missing" in str(errors[0])


def test_graphed_drafter_needs_cuda(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="x")
    head = write_head(tmp_path / "head")
    with pytest.raises(ProviderError, match="GraphedDraftHead requires a CUDA"):
        generate(JetSpecProvider.open(model, draft=head, drafter="graphed", device="cpu"))


def test_model_without_chat_template(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="x", chat_template="")
    with pytest.raises(ProviderError, match="no chat template"):
        generate(JetSpecProvider.open(model))


def test_summarize_stats_aggregates_completions(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="w1 w2 w3 w4 w5 w6")
    head = write_head(tmp_path / "head")
    with pytest.warns(UserWarning, match="greedy"):
        spec = generate(JetSpecProvider.open(model, draft=head), GenerateParams(n=2, temperature=0))
    plain = generate(JetSpecProvider.open(model))
    summary = summarize_stats([c.stats for c in [*spec, *plain]] + [{"other": 1}])
    assert summary.generated_tokens == 21
    # speculative: 7 tokens in rounds of 3, 3 -> 2 rounds each; plain: 7 steps
    assert summary.rounds == 2 + 2 + 7
    assert summary.mean_accept_length == pytest.approx(3.0)


def test_generation_bench_needs_a_draft_and_closes_the_provider(
    fake: ModuleType, tmp_path: Path
) -> None:
    from arcmemo.models.jetspec.bench import BenchError, repeat_prompts, run_generation_bench

    model = write_model(tmp_path / "m", reply="x")
    with pytest.raises(BenchError, match="draft=HEAD_DIR"):
        asyncio.run(run_generation_bench(model, {}, ["hi"], max_tokens=4))
    assert not [t for t in threading.enumerate() if t.name.startswith("jetspec-engine")]
    assert repeat_prompts(["a", "b"], 5) == ["a", "b", "a", "b", "a"]
    with pytest.raises(BenchError, match="no prompt"):
        repeat_prompts([], 1)


def test_cache_identity_ignores_the_drafter(fake: ModuleType, tmp_path: Path) -> None:
    model = write_model(tmp_path / "m", reply="x")
    a = JetSpecProvider.open(model, draft="random").cache_identity()
    b = JetSpecProvider.open(model, draft="echo").cache_identity()
    c = JetSpecProvider.open(model, draft="echo", dtype="fp32").cache_identity()
    assert a == b and a != c


def test_closing_a_compiled_engine_drops_the_compile_caches(
    fake: ModuleType, tmp_path: Path
) -> None:
    """A later compiled engine in the process must not meet guards of this one's dead
    modules (it crashed in dynamo's recompilation report); eager engines leave them be."""
    import torch

    model = write_model(tmp_path / "m", reply="x")
    before = torch._dynamo.resets
    generate(JetSpecProvider.open(model, attn_backend="triton_paged_tree"))
    assert torch._dynamo.resets == before
    generate(JetSpecProvider.open(model, attn_backend="triton_paged_tree_cudagraph"))
    assert torch._dynamo.resets == before + 1


class _Ids:
    def __init__(self, length: int) -> None:
        self.shape = (1, length)


class _Cache:
    def __init__(self, length: int) -> None:
        self.length = length

    def get_seq_length(self) -> int:
        return self.length


class _Runner:
    """JetSpec's ModelRunner.forward signature, recording what each call asked for."""

    def __init__(self) -> None:
        self.asked: list[bool] = []

    def forward(
        self,
        input_ids: Any,
        past_key_values: Any,
        position_ids: Any = None,
        output_hidden_states: bool = False,
        target_layer_ids: Any = None,
        attention_mask: Any = None,
        cache_position: Any = None,
        last_position_logits_only: bool = False,
    ) -> bool:
        self.asked.append(last_position_logits_only)
        return last_position_logits_only


def test_a_prefill_asks_for_the_last_position_logits_only() -> None:
    from arcmemo.models.jetspec import hooks

    runner = _Runner()
    assert hooks.trim_prefill_logits(runner)
    assert not hooks.trim_prefill_logits(runner)  # already wrapped
    assert runner.forward(_Ids(4000), _Cache(0), None, output_hidden_states=True)  # prefill
    assert not runner.forward(_Ids(1), _Cache(4000), None)  # a plain step
    assert not runner.forward(_Ids(33), _Cache(4000), None, attention_mask=None)  # a verify
    assert not runner.forward(_Ids(33), _Cache(0), None, attention_mask="tree mask")
    assert runner.asked == [True, False, False, False]

    class Older:  # a JetSpec whose runner has no such option is left as it is
        def forward(self, input_ids: Any, past_key_values: Any, position_ids: Any = None) -> None:
            return None

    older = Older()
    assert not hooks.trim_prefill_logits(older)
    assert "forward" not in vars(older)


def test_round_buffers_are_wrapped_for_compaction_only_when_an_engine_asks() -> None:
    """JetSpec's logical-KV round buffers stay its own unless an engine sets round_ring; once
    wrapped, the cache that leased the round compacts (slots, accepted length) before the
    slots are staged, and with no compacting cache the call passes straight through."""
    import types

    from arcmemo.models.jetspec import hooks

    calls: list[tuple[str, Any]] = []

    class Buffers:  # the shape of jetspec.inference_engine.engine._LogicalRoundBuffers
        slots = "window"

        def stage_slots(self, wlen: int, node_blks: Any, n_nodes: int) -> str:
            calls.append(("staged", (wlen, node_blks, n_nodes)))
            return "staged"

    original = Buffers.stage_slots
    module = types.SimpleNamespace(_LogicalRoundBuffers=Buffers)
    hooks.install(module)
    assert Buffers.stage_slots is original
    hooks.install(module, compaction=True)
    wrapped = Buffers.stage_slots
    assert wrapped is not original
    hooks.install(module, compaction=True)
    assert Buffers.stage_slots is wrapped  # idempotent

    class Cache:
        def compact(self, slots: Any, accepted: int) -> None:
            calls.append(("compact", (slots, accepted)))

    try:
        hooks._settings.compacting = Cache()
        assert Buffers().stage_slots(5, "blocks", 16) == "staged"
        hooks._settings.compacting = None
        assert Buffers().stage_slots(7, "blocks", 16) == "staged"
    finally:
        hooks._settings.compacting = None
    assert calls == [
        ("compact", ("window", 5)),
        ("staged", (5, "blocks", 16)),
        ("staged", (7, "blocks", 16)),
    ]


def test_lean_option() -> None:
    assert JetSpecOptions().lean is True
    assert JetSpecOptions.model_validate({"lean": "false"}).lean is False
    with pytest.raises(ValueError, match="lean"):
        JetSpecOptions.model_validate({"lean": "fast"})


def test_context_index_proposes_what_followed_the_longest_match() -> None:
    from arcmemo.models.jetspec.lookup import ContextIndex

    index = ContextIndex(max_ngram=3)
    # "1 2 3 4" then "9 2 3 5" then "2 3": the 2-gram "2 3" was followed by 5 (latest), 4
    index.extend([1, 2, 3, 4, 7, 9, 2, 3, 5, 8, 2, 3])
    assert index.candidates(depth=2, width=3) == [[5, 8], [4, 7]]  # "3" adds none new
    assert index.per_depth(depth=2, width=2) == [[5, 4], [8, 7]]
    index.extend([5])  # "2 3 5": the 3-gram match comes first now
    assert index.candidates(depth=3, width=1) == [[8, 2, 3]]
    assert ContextIndex().candidates(depth=4, width=3) == []
    fresh = ContextIndex()
    fresh.extend([6, 6])  # a continuation shorter than the depth near the end
    assert fresh.candidates(depth=4, width=3) == [[6]]


class _Row:
    def __init__(self, tokens: list[int]) -> None:
        self.tokens, self.shape = tokens, (1, len(tokens))
        self.reads: list[int] = []

    def __getitem__(self, key: Any) -> Any:
        found = self.tokens[key[1]] if isinstance(key, tuple) else self.tokens
        part: list[int] = found if isinstance(found, list) else [found]
        self.reads.append(len(part))

        class Part:
            def tolist(self) -> list[int]:
                return list(part)

        return Part()


def test_lookup_drafter_reads_back_only_the_new_tokens() -> None:
    from arcmemo.models.jetspec.lookup import PromptLookupDrafter

    drafter = PromptLookupDrafter(vocab_size=16)
    first = _Row([1, 2, 3, 1, 2])
    drafter._sync(first)
    grown = _Row([1, 2, 3, 1, 2, 3, 1])
    drafter._sync(grown)
    assert grown.reads == [3]  # the last known token and the two new ones
    assert drafter.index.tokens == grown.tokens
    other = _Row([5, 5, 5, 5, 5, 5, 5, 5])  # another context: indexed anew
    drafter._sync(other)
    assert drafter.index.tokens == other.tokens
    drafter.reset_cache()
    assert drafter.index.tokens == []


# -- real JetSpec: CPU opt-in and GPU ----------------------------------------------------------


def _real_runtime_or_skip() -> ModuleType:
    """The experiments helper that builds tiny random models; skip without real JetSpec."""
    for name in ("torch", "transformers", "jetspec"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"real {name} is not importable (install JetSpec from source to run this)")
    return _load(REPO / "experiments" / "jetspec_gpu.py", "_jetspec_gpu_experiment")


def _lossless_check(
    tmp_path: Path,
    device: str,
    backend: str,
    monkeypatch: Any,
    extra: dict[str, str] | None = None,
    drafts: tuple[str, ...] = ("echo", "random", "head"),
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    helper = _real_runtime_or_skip()
    model_dir = helper.write_tiny_qwen3(tmp_path / "target", layers=2, hidden=64, vocab=128)
    head_dir = helper.write_random_draft_head(tmp_path / "head", model_dir, block_size=5)
    for draft in (head_dir if d == "head" else d for d in drafts):
        options = {"draft": draft, "dtype": "fp32", "device": device, "attn_backend": backend}
        options |= {"budget": "16", "width": "3", "tree_depth": "4", **(extra or {})}
        provider = JetSpecProvider.open(model_dir, **options)
        params = GenerateParams(max_tokens=24, temperature=0.0)

        async def both(
            provider: JetSpecProvider = provider, params: GenerateParams = params
        ) -> tuple[Any, Any, Any]:
            try:
                plain = await provider.generate_mode(USER, params, speculative=False)
                tree = await provider.generate_mode(USER, params, speculative=True)
                direct = await provider.run_on_engine(
                    lambda loaded: loaded.engine.generate(
                        loaded.encode(loaded.render_prompt(USER)),
                        loaded.sampling_params(params),
                    )
                )
                return plain[0], tree[0], direct
            finally:
                await provider.aclose()

        plain, tree, direct = asyncio.run(both())
        assert tree.text == plain.text, draft
        assert (
            tree.usage.completion_tokens
            == plain.usage.completion_tokens
            == len(direct["token_ids"])
        )
        assert plain.stats["mode"] == "plain" and tree.stats["mode"] == "speculative"
        if draft == "echo" and tree.stats["rounds"]:
            assert tree.stats["mean_accept_length"] > 1.0  # the echo drafter is always right


def test_real_jetspec_greedy_speculative_equals_plain_on_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _lossless_check(tmp_path, "cpu", "sdpa", monkeypatch)


def test_real_jetspec_session_survives_changing_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session is tagged with max_new_tokens and caps the prompt; the hook resets it."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    helper = _real_runtime_or_skip()
    model_dir = helper.write_tiny_qwen3(tmp_path / "target", layers=2, hidden=64, vocab=128)
    options = {"draft": "random", "dtype": "fp32", "device": "cpu", "session": "true"}
    provider = JetSpecProvider.open(model_dir, **options | {"budget": "8", "width": "2"})
    requests = [(12, "two plus two"), (12, "be brief"), (20, "two plus two " * 100), (12, "be")]

    async def run() -> list[tuple[str, str]]:
        pairs = []
        try:
            for max_tokens, content in requests:
                messages = [Message(role="user", content=content)]
                params = GenerateParams(max_tokens=max_tokens)
                [tree] = await provider.generate(messages, params)
                [plain] = await provider.generate_mode(messages, params, speculative=False)
                pairs.append((tree.text, plain.text))
        finally:
            await provider.aclose()
        return pairs

    for tree_text, plain_text in asyncio.run(run()):
        assert tree_text == plain_text


def _cuda_or_skip() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")


@pytest.mark.gpu
@pytest.mark.parametrize("kv_pool", ["shared", "upstream"])
def test_real_jetspec_lossless_on_gpu_triton(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kv_pool: str
) -> None:
    _cuda_or_skip()
    _lossless_check(tmp_path, "cuda", "triton_paged_tree", monkeypatch, {"kv_pool": kv_pool})


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("backend", "extra", "drafts"),
    [
        ("triton_paged_tree_compiled", {}, ("echo", "head")),
        ("triton_paged_tree_cudagraph", {"session": "true"}, ("head",)),
        (
            "triton_paged_tree_cudagraph_nogather",
            {"session": "true", "drafter": "graphed"},
            ("head",),
        ),
    ],
)
def test_real_jetspec_lossless_on_gpu_graphed_backends(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    backend: str,
    extra: dict[str, str],
    drafts: tuple[str, ...],
) -> None:
    """The compiled and CUDA-graph backends (sessions, the graphed drafter) are lossless
    through the provider, with arcmemo's shared KV pool."""
    _cuda_or_skip()
    _lossless_check(tmp_path, "cuda", backend, monkeypatch, extra, drafts)


@pytest.mark.gpu
def test_nogather_round_blocks_are_compacted_losslessly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a ring of two rounds the cache compacts the accepted tokens' keys and values
    every round or two, across two prompts of one session: tokens stay plain decoding's."""
    _cuda_or_skip()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    helper = _real_runtime_or_skip()
    model_dir = helper.write_tiny_qwen3(tmp_path / "target", layers=2, hidden=64, vocab=128)
    head_dir = helper.write_random_draft_head(tmp_path / "head", model_dir, block_size=5)
    options = {"draft": head_dir, "dtype": "fp32", "device": "cuda", "session": "true"}
    options |= {"attn_backend": "triton_paged_tree_cudagraph_nogather", "drafter": "graphed"}
    options |= {"budget": "16", "width": "3", "tree_depth": "4", "round_ring": "2"}
    provider = JetSpecProvider.open(model_dir, **options)
    params = GenerateParams(max_tokens=64, temperature=0.0)
    prompts = [USER, [Message(role="user", content="count to ten and then back " * 8)]]

    async def run() -> tuple[list[tuple[str, str]], int]:
        try:
            texts = []
            for messages in prompts:
                [tree] = await provider.generate_mode(messages, params, speculative=True)
                [plain] = await provider.generate_mode(messages, params, speculative=False)
                texts.append((tree.text, plain.text))
            compactions = await provider.run_on_engine(
                lambda loaded: loaded.engine._tree_session["cache"].compactions
            )
            return texts, compactions
        finally:
            await provider.aclose()

    texts, compactions = asyncio.run(run())
    for tree, plain in texts:
        assert tree == plain
    assert compactions >= 4


@pytest.mark.gpu
def test_generation_benchmark_on_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _cuda_or_skip()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    helper = _real_runtime_or_skip()
    from arcmemo.models.jetspec.bench import DEFAULT_PROMPTS, run_generation_bench

    model_dir = helper.write_tiny_qwen3(tmp_path / "target", layers=4, hidden=256, vocab=512)
    options = {"draft": "echo", "dtype": "fp32", "device": "cuda"}
    options |= {"attn_backend": "triton_paged_tree", "tree_depth": "7", "budget": "32"}
    result = asyncio.run(
        run_generation_bench(model_dir, options, DEFAULT_PROMPTS[:3], max_tokens=32)
    )
    assert result.identical, result.mismatches
    assert result.plain.tokens_per_s > 0 and result.speculative.tokens_per_s > 0
    assert (
        result.speculative.mean_accept_length is None or result.speculative.mean_accept_length > 1
    )


@pytest.mark.gpu
@pytest.mark.parametrize("backend", ["triton_paged_tree", "triton_paged_tree_cudagraph"])
def test_lean_paths_decode_as_jetspecs_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """Last-position logits and SDPA at prefill, chunked attention over the pool and the
    lean slot reservation give JetSpec's own tokens (fp32)."""
    _cuda_or_skip()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    helper = _real_runtime_or_skip()
    model_dir = helper.write_tiny_qwen3(tmp_path / "target", layers=2, hidden=64, vocab=128)
    messages = [Message(role="user", content="two plus two be brief " * 60)]
    params = GenerateParams(max_tokens=24, temperature=0.0)
    texts = {}
    for lean in ("true", "false"):
        options = {"dtype": "fp32", "device": "cuda", "attn_backend": backend, "lean": lean}
        provider = JetSpecProvider.open(model_dir, **options)

        async def run(provider: JetSpecProvider = provider) -> Any:
            try:
                return await provider.generate_mode(messages, params, speculative=False)
            finally:
                await provider.aclose()

        [completion] = asyncio.run(run())
        assert completion.usage.prompt_tokens > 200
        texts[lean] = completion.text
    assert texts["true"] == texts["false"]


@pytest.mark.gpu
def test_engines_of_different_backends_reopen_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nogather, then cudagraph, then the eager kernel, each closed before the next opens:
    a cudagraph engine after a closed nogather one used to crash at its first capture."""
    _cuda_or_skip()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    helper = _real_runtime_or_skip()
    model_dir = helper.write_tiny_qwen3(tmp_path / "target", layers=2, hidden=64, vocab=128)
    head_dir = helper.write_random_draft_head(tmp_path / "head", model_dir, block_size=5)
    params = GenerateParams(max_tokens=24, temperature=0.0)
    configs = [
        ("triton_paged_tree_cudagraph_nogather", {"session": "true", "drafter": "graphed"}),
        ("triton_paged_tree_cudagraph", {"session": "true"}),
        ("triton_paged_tree_compiled", {}),
        ("triton_paged_tree", {}),
    ]
    texts = []
    for backend, extra in configs:
        options = {"draft": head_dir, "dtype": "fp32", "device": "cuda", "attn_backend": backend}
        options |= {"budget": "16", "width": "3", "tree_depth": "4", **extra}
        provider = JetSpecProvider.open(model_dir, **options)

        async def both(provider: JetSpecProvider = provider) -> tuple[str, str]:
            try:
                [tree] = await provider.generate_mode(USER, params, speculative=True)
                [plain] = await provider.generate_mode(USER, params, speculative=False)
                return tree.text, plain.text
            finally:
                await provider.aclose()

        texts.append((backend, *asyncio.run(both())))
    reference = texts[-1][2]
    for backend, tree_text, plain_text in texts:
        assert tree_text == plain_text == reference, backend


def test_merging_chunks_gives_attention_over_all_keys() -> None:
    """Chunks (one without a visible key) merged by their log-sum-exps equal one softmax."""
    torch = pytest.importorskip("torch")
    from arcmemo.models.jetspec.hooks import merge_chunks

    generator = torch.Generator().manual_seed(0)
    scores = torch.randn(3, 5, 40, generator=generator, dtype=torch.float64)  # heads, rows, keys
    scores[..., 30:] = float("-inf")  # the last chunk of 10 keys is all masked
    values = torch.randn(3, 40, 8, generator=generator, dtype=torch.float64)
    whole = torch.softmax(scores, dim=-1) @ values
    outs, lses = [], []
    for chunk in scores.split(10, dim=-1):
        lse = torch.logsumexp(chunk, dim=-1)
        outs.append(torch.softmax(chunk, dim=-1) @ values[:, : chunk.shape[-1]])
        values = values[:, chunk.shape[-1] :]
        lses.append(lse)
    out, lse = torch.stack(outs), torch.stack(lses)
    assert torch.isnan(out[-1]).all()  # softmax over all -inf: the kernel may give NaN too
    assert torch.allclose(merge_chunks(out, lse).double(), whole, atol=1e-5)
    # a kernel may report a finite log-sum-exp and zeros for a chunk with no visible key
    out[-1], lse[-1] = 0.0, 0.0
    seen = torch.tensor([True, True, True, False])[:, None, None]
    assert torch.allclose(merge_chunks(out, lse, seen).double(), whole, atol=1e-5)
    assert not torch.allclose(merge_chunks(out, lse).double(), whole, atol=1e-3)


def _pool_attention_case(
    device: str, dtype: str, rows: int, context: int, remapped: int = 0
) -> tuple[Any, Any]:
    """The chunked pool attention over a scattered block table (a plain step: one row; a
    tree verify: 33 rows under an ancestor mask; ``remapped``: the nogather backends'
    logical slots for the last keys) and dense attention over the same keys in fp64.
    Scores are small, so a chunk counted in by mistake takes a large share of the mass."""
    import torch

    from arcmemo.models.jetspec import hooks

    hooks.configure_thread(kv_pool="shared", lean=True)
    attend = hooks._pool_attention(lambda *args: pytest.fail("the kernel was called"))
    generator = torch.Generator().manual_seed(0)

    def normal(*shape: int) -> Any:
        drawn = torch.randn(*shape, generator=generator)
        return drawn.to(device=device, dtype=getattr(torch, dtype))

    block, kv_heads, group, dim, blocks = 16, 8, 2, 128, 700
    k_pool, v_pool = normal(blocks, block, kv_heads, dim), normal(blocks, block, kv_heads, dim)
    table = torch.randperm(blocks, generator=generator)[:520].to(torch.int32).view(1, -1)
    q = 0.01 * normal(rows, kv_heads * group, dim)
    parents = torch.randint(0, 2, (rows, rows), generator=generator).tril().bool()
    parents |= torch.eye(rows, dtype=torch.bool)
    qq_bias = torch.zeros(rows, rows).masked_fill(~parents, float("-inf"))
    total = context + rows
    slots = (table[0].long()[:, None] * block + torch.arange(block)).flatten()[:total]
    logical: tuple[Any, ...] = (None, None, None)
    if remapped:  # the last keys read from other slots (free ones: past the table's use)
        start = total - remapped
        other = torch.randperm(blocks * block, generator=generator)[:remapped]
        slots = torch.cat([slots[:start], other])
        logical = (
            other.view(1, -1).to(device),
            torch.tensor([start], device=device),
            torch.tensor([remapped], device=device),
        )
    on = {"device": device}
    out = attend(
        q, k_pool, v_pool, table.to(device), torch.tensor([0, rows], dtype=torch.int32, **on),
        torch.tensor([total], dtype=torch.int32, **on), qq_bias.to(device), dim**-0.5, group,
        block, *logical,
    )  # fmt: skip
    keys = k_pool.reshape(-1, kv_heads, dim)[slots.to(device)].double().cpu()
    values = v_pool.reshape(-1, kv_heads, dim)[slots.to(device)].double().cpu()
    bias = torch.zeros(rows, total, dtype=torch.float64)
    bias[:, context:] = qq_bias.double()
    keys, values = keys.repeat_interleave(group, 1), values.repeat_interleave(group, 1)
    scores = torch.einsum("nhd,whd->hnw", q.double().cpu(), keys) * dim**-0.5 + bias
    reference = torch.einsum("hnw,whd->nhd", torch.softmax(scores, dim=-1), values)
    return out.double().cpu(), reference


def _relative_error(out: Any, reference: Any) -> float:
    return float((out - reference).norm() / reference.norm())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("rows", "remapped"), [(1, 0), (33, 0), (33, 40)])
@pytest.mark.parametrize("context", [12, 7900])
def test_lean_pool_attention_equals_dense_attention_on_cpu(
    dtype: str, rows: int, remapped: int, context: int
) -> None:
    """Everything around the CUDA kernel (gathering the table, the masks, the tree bias, the
    nogather remap, grouped queries, chunking and merging) on CPU, where :func:`attend_chunks`
    keeps the kernel's contract, an empty chunk's finite log-sum-exp included; a short
    context in a wide table leaves most chunks without a visible key."""
    pytest.importorskip("torch")
    out, reference = _pool_attention_case("cpu", dtype, rows, context, remapped)
    assert _relative_error(out, reference) < (1e-5 if dtype == "float32" else 1e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("rows", "remapped"), [(1, 0), (33, 0), (33, 40)])
@pytest.mark.parametrize("context", [12, 7900])
def test_lean_pool_attention_equals_dense_attention(
    dtype: str, rows: int, remapped: int, context: int
) -> None:
    """The same on CUDA, through torch's memory-efficient kernel."""
    _cuda_or_skip()
    out, reference = _pool_attention_case("cuda", dtype, rows, context, remapped)
    assert _relative_error(out, reference) < (1e-4 if dtype == "float32" else 1e-2)


@pytest.mark.gpu
def test_the_cuda_kernel_keeps_the_contract_the_cpu_stand_in_copies() -> None:
    """attend_chunks on CUDA (torch's kernel) and on CPU (the stand-in) agree, rows with no
    visible key included: what the kernel reports there (a log-sum-exp of 0 in current
    PyTorch, -inf in older releases) is recorded in the assertion message."""
    _cuda_or_skip()
    import torch

    from arcmemo.models.jetspec.hooks import attend_chunks

    generator = torch.Generator().manual_seed(1)
    query = torch.randn(3, 4, 6, 64, generator=generator)
    keys, values = torch.randn(2, 3, 4, 256, 64, generator=generator)
    bias = torch.zeros(3, 4, 6, 256)
    bias[1] = float("-inf")  # a chunk with no visible key
    bias[2, :, :, 100:] = float("-inf")
    cpu_out, cpu_lse = attend_chunks(query, keys, values, bias, 0.125)
    gpu_out, gpu_lse = attend_chunks(query.cuda(), keys.cuda(), values.cuda(), bias.cuda(), 0.125)
    gpu_out, gpu_lse = gpu_out.cpu(), gpu_lse.cpu()
    assert torch.allclose(gpu_out[[0, 2]], cpu_out[[0, 2]], atol=1e-4)
    assert torch.allclose(gpu_lse[[0, 2]], cpu_lse[[0, 2]], atol=1e-4)
    empty = gpu_lse[1].unique().tolist()
    assert empty in ([0.0], [float("-inf")]), f"the kernel's log-sum-exp of an empty row: {empty}"
    assert not torch.isfinite(gpu_out[1]).all() or torch.equal(gpu_out[1], cpu_out[1])


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["triton_paged_tree", "triton_paged_tree_compiled"])
def test_lean_pool_attention_decodes_as_hugging_face_on_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """JetSpec's kernel backends on CPU, where its triton kernel cannot run, so every paged
    attention is the lean pool attention: greedy plain and speculative (echo drafter, trees of
    several rows) tokens equal Hugging Face ``generate``'s, for a prompt of 12 tokens and 300
    new ones (a block table of three chunks, the later two without a visible key at first)
    and one of 700 tokens and 24 new ones."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    helper = _real_runtime_or_skip()
    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton is not importable: the lean attention replaces a name in its module")
    import torch
    from transformers import AutoModelForCausalLM

    from arcmemo.models.jetspec import hooks

    model_dir = helper.write_tiny_qwen3(tmp_path / "target", layers=2, hidden=64, vocab=128)
    generator = torch.Generator().manual_seed(3)
    lengths = [(12, 300), (700, 24)]  # prompt tokens, new tokens
    prompts = [torch.randint(10, 128, (1, n), generator=generator) for n, _ in lengths]
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    with torch.no_grad():
        expected = [
            model.generate(ids, max_new_tokens=new, do_sample=False)[0, ids.shape[1] :].tolist()
            for ids, (_, new) in zip(prompts, lengths, strict=True)
        ]
    chunked: list[int] = []
    attend_chunks = hooks.attend_chunks
    monkeypatch.setattr(
        hooks, "attend_chunks", lambda *a: chunked.append(a[0].shape[0]) or attend_chunks(*a)
    )
    options = {"draft": "echo", "dtype": "fp32", "device": "cpu", "attn_backend": backend}
    provider = JetSpecProvider.open(model_dir, **options, budget="16", width="3", tree_depth="4")

    async def decode_all() -> list[tuple[list[int], dict]]:
        decoded = []
        try:
            for ids, (_, new) in zip(prompts, lengths, strict=True):
                params = GenerateParams(max_tokens=new, temperature=0.0)
                for speculative in (False, True):

                    def job(
                        loaded: Any, ids: Any = ids, speculative: bool = speculative,
                        params: GenerateParams = params,
                    ) -> Any:  # fmt: skip
                        return loaded.decode(ids, loaded.sampling_params(params), speculative)

                    result, _ = await provider.run_on_engine(job)
                    decoded.append(([int(t) for t in result["token_ids"]], result))
        finally:
            await provider.aclose()
        return decoded

    decoded = asyncio.run(decode_all())
    for index, (tokens, result) in enumerate(decoded):
        assert tokens == expected[index // 2], (index, result.get("rounds"))
    assert all(len(tokens) > 20 for tokens, _ in decoded)
    assert decoded[3][1]["rounds"] < len(decoded[3][0])  # the echo drafter's trees were accepted
    assert chunked and max(chunked) >= 3  # the pool attention served, over several chunks


def test_layer_shared_ids_hold_the_same_keys_in_a_layers_share_of_memory() -> None:
    """The nogather backends' cache (one block id for all layers, a tensor per layer): each
    layer's keys and values read back as JetSpec's own cache holds them, through prefill,
    plain steps across block boundaries and a logical round's reservation, with one id per
    block of positions (JetSpec's pool: one per layer, each tensor spanning all of them)."""
    _real_runtime_or_skip()
    import torch
    from jetspec.inference_engine.paged_kv_cache import PagedKVCache

    from arcmemo.models.jetspec import hooks

    layers, generator = 3, torch.Generator().manual_seed(0)
    steps = [torch.randn(layers, 2, 1, 2, n, 8, generator=generator) for n in (13, 1, 1, 1, 5)]
    caches = []
    for logical_kv in (True, False):
        hooks.configure_thread(kv_pool="shared", layers=layers, lean=True, logical_kv=logical_kv)
        hooks.expect_tokens(40)
        cache = hooks.shared_pool_class(PagedKVCache)(block_size=4)
        caches.append(cache)
        for kv in steps:
            for layer in range(layers):
                cache.update(kv[layer, 0], kv[layer, 1], layer)
        cache.reserve_capacity(32, block_table_tokens=40, extra_shared_blocks=6)
        cache.reserve_tree_slots(0, 1, 21, block_table_width=11)
    shared_ids, own = caches
    assert shared_ids._ids_shared and not own._ids_shared
    for layer in range(layers):
        for mine, theirs in zip(shared_ids._logical_kv(layer), own._logical_kv(layer), strict=True):
            assert mine.shape[-2] == 22 and torch.equal(mine, theirs), layer
    tables = shared_ids._seq_block_tables[0]
    assert tables[0] == tables[1] == tables[2] and len(tables[0]) == 6
    assert len({id(t) for t in shared_ids._kpool.values()}) == layers
    _, round_blocks = shared_ids.reserve_logical_slots(8)  # layer-shared, as upstream
    assert len(round_blocks) == 2 and not set(round_blocks) & set(tables[0])
    # ids: the positions' blocks plus the rounds', not times the layers
    assert shared_ids._num_blocks <= 32 // 4 + 1 + 6 < own._num_blocks
    assert shared_ids.reserved_block_table_width == own.reserved_block_table_width == 11


def test_lean_decode_slots_are_jetspecs_own() -> None:
    """The lean reservation of a plain step's slot hands out the same blocks, tables,
    slots and lengths as JetSpec's own, step after step across block boundaries."""
    _real_runtime_or_skip()
    import torch
    from jetspec.inference_engine.paged_kv_cache import PagedKVCache

    from arcmemo.models.jetspec import hooks

    caches = []
    for lean in (True, False):
        hooks.configure_thread(kv_pool="shared", layers=3, lean=lean)
        hooks.expect_tokens(60)
        cache = hooks.shared_pool_class(PagedKVCache)(block_size=4)
        for layer in range(3):
            cache.update(torch.randn(1, 2, 13, 8), torch.randn(1, 2, 13, 8), layer)
        cache.reserve_capacity(40)
        caches.append(cache)
    for past in range(13, 30):
        lean, own = (c.reserve_tree_slots(0, 1, past, block_table_width=12) for c in caches)
        for mine, theirs in zip(lean, own, strict=True):
            pairs = zip(mine, theirs, strict=True) if isinstance(mine, list) else [(mine, theirs)]
            for a, b in pairs:
                assert a.dtype == b.dtype and torch.equal(a, b), past
    assert caches[0]._seq_block_tables == caches[1]._seq_block_tables
    assert caches[0]._seq_filled == caches[1]._seq_filled
    assert caches[0]._free_blocks == caches[1]._free_blocks
