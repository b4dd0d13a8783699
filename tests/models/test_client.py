"""ModelClient: cache, retries, limits, accounting and the call log (offline providers)."""

from __future__ import annotations

import asyncio
import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest

from arcmemo.core.tokens import Usage
from arcmemo.models import (
    Completion,
    GenerateParams,
    Limiter,
    Message,
    ModelCallError,
    ModelClient,
    ModelConfig,
    Provider,
    ProviderError,
    ResponseCache,
    RetryDecision,
    ScriptedProvider,
    open_model,
)
from arcmemo.models.accounting import CallRecord, usage_from_records
from arcmemo.models.prices import ModelPrice, PriceTable
from arcmemo.models.retry import BREAKER_THRESHOLD, ModelUnreachableError

MESSAGES = [Message(role="user", content="what is two plus two")]


class CountingProvider(Provider):
    """Answers 'answer-<k>' for the k-th sample it ever produced; fails on demand."""

    name = "counting"

    def __init__(self, failures: list[ProviderError | str] | None = None, delay: float = 0) -> None:
        super().__init__("m")
        self.failures = list(failures or [])
        self.delay = delay
        self.requests: list[int] = []
        self.produced = 0
        self.in_flight = 0
        self.max_in_flight = 0

    async def generate(self, messages: list[Message], params: GenerateParams) -> list[Completion]:
        self.requests.append(params.n)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.failures:
                failure = self.failures.pop(0)
                if failure == "hang":
                    await asyncio.sleep(3600)
                assert isinstance(failure, ProviderError)
                raise failure
            await asyncio.sleep(self.delay)
            completions = []
            for _ in range(params.n):
                completions.append(
                    Completion(
                        text=f"answer-{self.produced}",
                        usage=Usage(prompt_tokens=10, completion_tokens=5),
                        stats={"accept_len": 2.0 + self.produced},
                    )
                )
                self.produced += 1
            return completions
        finally:
            self.in_flight -= 1


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def _client(provider: Provider, tmp_path: Path, **kwargs: Any) -> ModelClient:
    config = kwargs.pop("config", ModelConfig())
    return ModelClient(
        provider,
        config=config,
        cache=kwargs.pop("cache", ResponseCache(tmp_path / "cache", read=config.cache)),
        prices=kwargs.pop("prices", PriceTable({"counting:m": ModelPrice(input=1.0, output=2.0)})),
        call_log_path=tmp_path / "calls.jsonl",
        sleep=kwargs.pop("sleep", RecordingSleep()),
        rng=random.Random(0),
        **kwargs,
    )


def test_rerun_is_free_and_larger_n_pays_only_for_new_samples(tmp_path: Path) -> None:
    provider = CountingProvider()
    first = asyncio.run(_client(provider, tmp_path).generate(MESSAGES, stage="solve", n=2))
    assert [c.text for c in first] == ["answer-0", "answer-1"]
    assert provider.requests == [2]

    rerun_client = _client(provider, tmp_path)
    rerun = asyncio.run(rerun_client.generate(MESSAGES, stage="solve", n=2))
    assert provider.requests == [2]  # zero provider calls
    assert [c.text for c in rerun] == ["answer-0", "answer-1"]
    assert all(c.cache_hit for c in rerun)
    assert rerun_client.usage_summary().total.cost_usd == 0.0

    more = asyncio.run(_client(provider, tmp_path).generate(MESSAGES, stage="solve", n=3))
    assert provider.requests == [2, 1]  # only the third sample was requested
    assert [c.text for c in more] == ["answer-0", "answer-1", "answer-2"]


def test_no_cache_read_still_writes(tmp_path: Path) -> None:
    provider = CountingProvider()
    asyncio.run(_client(provider, tmp_path).generate(MESSAGES, stage="solve"))
    no_read = _client(provider, tmp_path, config=ModelConfig(cache=False))
    fresh = asyncio.run(no_read.generate(MESSAGES, stage="solve"))
    assert fresh[0].text == "answer-1" and provider.requests == [1, 1]
    again = asyncio.run(_client(provider, tmp_path).generate(MESSAGES, stage="solve"))
    assert again[0].text == "answer-1"  # the no-read run refreshed the entry
    assert provider.requests == [1, 1]


def test_retries_honor_retry_after_and_succeed(tmp_path: Path) -> None:
    provider = CountingProvider(
        [
            ProviderError("slow down", decision=RetryDecision.RATE_LIMIT, retry_after=7.0),
            ProviderError("boom", decision=RetryDecision.TRANSIENT, status=500),
        ]
    )
    sleep = RecordingSleep()
    client = _client(provider, tmp_path, sleep=sleep)
    result = asyncio.run(client.generate(MESSAGES, stage="solve", task_id="t1"))
    assert result[0].text == "answer-0"
    assert len(sleep.delays) == 2
    assert sleep.delays[0] >= 7.0
    assert 0 <= sleep.delays[1] <= ModelConfig().backoff_base_s * 2
    lines = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    # One line per request: two failed, the third answered.
    assert [line["attempts"] for line in lines] == [1, 1, 1]
    assert [line["error"] is None for line in lines] == [False, False, True]
    assert not any(line["call_failed"] for line in lines) and lines[-1]["task_id"] == "t1"
    assert client.usage_summary().total.calls == 1
    assert client.usage_summary().stages["solve"].requests == 3


def test_backoff_is_bounded_full_jitter(tmp_path: Path) -> None:
    client = _client(CountingProvider(), tmp_path, config=ModelConfig(backoff_max_s=5))
    delays = [client.backoff_delay(attempt, None) for attempt in range(1, 30)]
    assert all(0 <= delay <= 5 for delay in delays)
    assert max(delays[5:]) > 1.0  # ceiling grows beyond the base


def test_non_retryable_error_fails_the_call_and_is_recorded(tmp_path: Path) -> None:
    provider = CountingProvider([ProviderError("bad request: sk-abcdefghijkl", status=400)])
    client = _client(provider, tmp_path)
    with pytest.raises(ModelCallError) as raised:
        asyncio.run(client.generate(MESSAGES, stage="abstract", task_id="t9"))
    assert (raised.value.stage, raised.value.task_id, raised.value.status) == (
        "abstract",
        "t9",
        400,
    )
    assert "sk-abcdefghijkl" not in raised.value.cause
    record = json.loads((tmp_path / "calls.jsonl").read_text())
    assert record["error"] and record["attempts"] == 1
    assert client.usage_summary().stages["abstract"].errors == 1


def test_retries_and_budget_run_out(tmp_path: Path) -> None:
    transient: list[ProviderError | str] = [
        ProviderError("x", decision=RetryDecision.TRANSIENT) for _ in range(10)
    ]
    client = _client(CountingProvider(transient), tmp_path, config=ModelConfig(request_retries=2))
    with pytest.raises(ModelCallError, match="after 2 retries"):
        asyncio.run(client.generate(MESSAGES, stage="solve"))
    limited: list[ProviderError | str] = [
        ProviderError("x", decision=RetryDecision.RATE_LIMIT, retry_after=500)
    ]
    client = _client(CountingProvider(limited), tmp_path, config=ModelConfig(retry_budget_s=10))
    with pytest.raises(ModelCallError, match="budget"):
        asyncio.run(client.generate(MESSAGES, stage="solve"))


def test_timeout_is_retried(tmp_path: Path) -> None:
    provider = CountingProvider(["hang"])
    client = _client(provider, tmp_path, config=ModelConfig(timeout_s=0.05))
    assert asyncio.run(client.generate(MESSAGES, stage="solve"))[0].text == "answer-0"
    assert len(provider.requests) == 2


def test_accounting_per_stage_with_cost_and_stats(tmp_path: Path) -> None:
    client = _client(CountingProvider(), tmp_path)

    async def run() -> None:
        await client.generate(MESSAGES, stage="solve", n=2)
        await client.generate([Message(role="user", content="other")], stage="abstract")
        await client.generate(MESSAGES, stage="solve", n=2)  # cached

    asyncio.run(run())
    summary = client.usage_summary()
    solve = summary.stages["solve"]
    assert (solve.calls, solve.samples, solve.cache_hits) == (2, 4, 2)
    assert solve.tokens.prompt_tokens == 20 and solve.tokens.completion_tokens == 10
    assert solve.cost_usd == pytest.approx((20 * 1.0 + 10 * 2.0) / 1e6)
    assert solve.provider_stats["accept_len"].count == 2
    assert summary.total.calls == 3 and summary.total.tokens.prompt_tokens == 30
    lines = (tmp_path / "calls.jsonl").read_text().splitlines()
    assert [json.loads(line)["cache_hit"] for line in lines] == [False, False, True]


class LabelledStatsProvider(CountingProvider):
    """Reports a statistic, a label that looks numeric, a flag and a text per completion."""

    stat_labels = frozenset({"engine"})

    async def generate(self, messages: list[Message], params: GenerateParams) -> list[Completion]:
        completions = await super().generate(messages, params)
        for completion in completions:
            completion.stats.update(engine=3, speculative=True, mode="plain")
        return completions


def test_call_log_carries_provider_statistics_and_gives_the_same_usage(tmp_path: Path) -> None:
    client = _client(LabelledStatsProvider(), tmp_path)

    async def run() -> None:
        await client.generate(MESSAGES, stage="solve", n=2)
        await client.generate([Message(role="user", content="other")], stage="abstract")
        await client.generate(MESSAGES, stage="solve", n=3)  # two cached, one fresh

    asyncio.run(run())
    lines = (tmp_path / "calls.jsonl").read_text().splitlines()
    records = [CallRecord.model_validate_json(line) for line in lines]
    # only numbers that measure something: no label, flag or text
    assert [r.provider_stats for r in records] == [
        [{"accept_len": 2.0}, {"accept_len": 3.0}],
        [{"accept_len": 4.0}],
        [{"accept_len": 5.0}],
    ]
    from_log = usage_from_records(records)
    assert from_log == client.usage_summary()
    solve = from_log.stages["solve"]
    assert (solve.calls, solve.samples, solve.cache_hits) == (2, 5, 2)
    assert solve.provider_stats["accept_len"].model_dump() == {
        "count": 3,
        "total": 10.0,
        "min": 2.0,
        "max": 5.0,
    }
    assert from_log.total.provider_stats["accept_len"].count == 4
    assert set(from_log.total.provider_stats) == {"accept_len"}
    assert from_log.models == ["counting:m"]


def test_usage_from_records_counts_failed_calls_as_their_cached_samples() -> None:
    def record(stage: str, error: str | None, cost: float | None) -> CallRecord:
        return CallRecord(
            ts="t",
            stage=stage,
            task_id=None,
            model="scripted:x" if stage == "solve" else "openai:y",
            n=3,
            cache_hits=1,
            cache_hit=False,
            tokens=Usage(prompt_tokens=5),
            cost_usd=cost,
            latency_s=0.5,
            attempts=2,
            error=error,
        )

    usage = usage_from_records(
        [record("solve", None, 0.25), record("solve", "boom", 0.25), record("abstract", None, None)]
    )
    solve = usage.stages["solve"]
    assert (solve.calls, solve.samples, solve.errors, solve.requests) == (2, 4, 1, 4)
    assert solve.cost_usd == 0.5 and usage.total.cost_usd is None
    assert usage.total.tokens.prompt_tokens == 15 and usage.total.latency_s == 1.5
    assert usage.models == ["openai:y", "scripted:x"]
    assert usage_from_records([]) == type(usage)()


def test_unknown_price_gives_null_cost(tmp_path: Path) -> None:
    client = _client(CountingProvider(), tmp_path, prices=PriceTable({}))
    asyncio.run(client.generate(MESSAGES, stage="solve"))
    assert client.usage_summary().total.cost_usd is None
    assert json.loads((tmp_path / "calls.jsonl").read_text())["cost_usd"] is None


def test_shared_limiter_bounds_concurrency_across_clients(tmp_path: Path) -> None:
    provider = CountingProvider(delay=0.01)
    limiter = Limiter(3)
    solver = _client(provider, tmp_path, cache=None, limiter=limiter)
    abstractor = _client(provider, tmp_path, cache=None, limiter=limiter)

    async def run() -> None:
        await asyncio.gather(
            *(
                client.generate([Message(role="user", content=str(i))], stage="s")
                for i in range(12)
                for client in (solver, abstractor)
            )
        )

    asyncio.run(run())
    assert provider.max_in_flight == 3
    assert limiter.max_in_flight == 3


def test_rpm_limit_waits_for_the_window() -> None:
    now = [0.0]
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    limiter = Limiter(10, rpm=2, clock=lambda: now[0], sleep=fake_sleep)

    async def run() -> None:
        for _ in range(3):
            async with limiter.slot():
                pass

    asyncio.run(run())
    assert waits == [60.0]


def test_open_model_with_scripted_file(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("'two plus two': '4'\n")
    config = ModelConfig(cache_dir=tmp_path / "cache")
    client = open_model(f"scripted:{script}", config=config, call_log_path=tmp_path / "c.jsonl")
    assert isinstance(client.provider, ScriptedProvider)
    result = asyncio.run(client.generate(MESSAGES, stage="solve"))
    assert result[0].text == "4" and result[0].usage.completion_tokens == 1
    assert client.usage_summary().total.cost_usd == 0.0
    asyncio.run(client.aclose())


class SingleSampleProvider(CountingProvider):
    supports_n = False


def test_single_sample_providers_keep_good_samples_when_one_fails(tmp_path: Path) -> None:
    provider = SingleSampleProvider([ProviderError("refused", status=400)])
    with pytest.raises(ModelCallError):
        asyncio.run(_client(provider, tmp_path).generate(MESSAGES, stage="solve", n=3))
    assert provider.requests == [1, 1, 1]
    rerun = asyncio.run(_client(provider, tmp_path).generate(MESSAGES, stage="solve", n=3))
    assert provider.requests == [1, 1, 1, 1]  # only the failed sample is asked again
    assert sum(c.cache_hit for c in rerun) == 2


def test_tpm_limit_uses_real_counts_once_known() -> None:
    now = [0.0]
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    limiter = Limiter(10, tpm=100, clock=lambda: now[0], sleep=fake_sleep)

    async def run() -> None:
        async with limiter.slot(60) as record:
            Limiter.record_tokens(record, 30)  # the call used fewer tokens than estimated
        async with limiter.slot(60):
            pass  # 30 + 60 <= 100: admitted at once
        async with limiter.slot(60):
            pass  # 90 + 60 > 100: waits for the window to move

    asyncio.run(run())
    assert waits == [60.0]


class SeedRecordingProvider(SingleSampleProvider):
    def __init__(self) -> None:
        super().__init__()
        self.seeds: list[int | None] = []

    async def generate(self, messages: list[Message], params: GenerateParams) -> list[Completion]:
        self.seeds.append(params.seed)
        return await super().generate(messages, params)


def test_single_sample_requests_each_get_their_own_seed(tmp_path: Path) -> None:
    provider = SeedRecordingProvider()
    client = _client(provider, tmp_path, config=ModelConfig(cache=False, cache_write=False))
    asyncio.run(client.generate(MESSAGES, stage="solve", n=3, seed=40))
    assert sorted(s for s in provider.seeds if s is not None) == [40, 41, 42]
    provider.seeds.clear()
    asyncio.run(client.generate(MESSAGES, stage="solve", n=1, seed=40))
    assert provider.seeds == [40]  # a lone sample keeps the seed it was given


def test_a_cache_namespace_separates_replicates_and_replays_its_own(tmp_path: Path) -> None:
    provider = CountingProvider()

    def client(namespace: str) -> ModelClient:
        return _client(provider, tmp_path, config=ModelConfig(cache_namespace=namespace))

    first = asyncio.run(client("").generate(MESSAGES, stage="solve", n=2))
    other = asyncio.run(client("replicate-1").generate(MESSAGES, stage="solve", n=2))
    again = asyncio.run(client("replicate-1").generate(MESSAGES, stage="solve", n=2))
    assert provider.requests == [2, 2]  # the second replicate paid; its rerun did not
    assert [c.text for c in first] != [c.text for c in other]
    assert [c.text for c in again] == [c.text for c in other] and all(c.cache_hit for c in again)


@pytest.mark.parametrize(
    "failure",
    [
        ProviderError("counting: HTTP 401: bad key", status=401),
        ProviderError("counting: HTTP 404: no such model", status=404),
        ProviderError(
            "counting: connection failed", decision=RetryDecision.TRANSIENT, kind="connection"
        ),
    ],
)
def test_the_breaker_stops_after_the_first_calls_all_fail_the_same_way(
    tmp_path: Path, failure: ProviderError
) -> None:
    provider = CountingProvider([failure] * 20)
    sleep = RecordingSleep()
    client = _client(provider, tmp_path, config=ModelConfig(cache=False), sleep=sleep)
    for _ in range(BREAKER_THRESHOLD - 1):
        with pytest.raises(ModelCallError):
            asyncio.run(client.generate(MESSAGES, stage="solve", task_id="t"))
    with pytest.raises(ModelUnreachableError, match=rf"first {BREAKER_THRESHOLD} calls all fail"):
        asyncio.run(client.generate(MESSAGES, stage="solve", task_id="t"))
    # A refused connection is retried once while nothing has been answered, not six times.
    assert len(provider.requests) <= 2 * BREAKER_THRESHOLD
    assert sum(sleep.delays) < 10


def test_the_breaker_stays_closed_once_a_call_was_answered(tmp_path: Path) -> None:
    failure = ProviderError("counting: HTTP 401: bad key", status=401)
    provider = CountingProvider()
    client = _client(provider, tmp_path, config=ModelConfig(cache=False))
    asyncio.run(client.generate(MESSAGES, stage="solve"))
    provider.failures = [failure] * 10
    for _ in range(BREAKER_THRESHOLD + 2):
        with pytest.raises(ModelCallError) as caught:
            asyncio.run(client.generate(MESSAGES, stage="solve"))
        assert caught.value.kind == "HTTP 401"


def test_a_partly_cached_call_asks_only_consecutive_samples_seeded_from_the_first(
    tmp_path: Path,
) -> None:
    provider = SeedRecordingProvider()
    provider.supports_n = True  # type: ignore[misc]
    client = _client(provider, tmp_path)
    asyncio.run(client.generate(MESSAGES, stage="solve", n=1, seed=10))
    provider.seeds.clear()
    asyncio.run(client.generate(MESSAGES, stage="solve", n=3, seed=10))
    assert provider.seeds == [11]  # samples 1 and 2 in one request, seeded as sample 1
    assert provider.requests[-1] == 2


class QueueingProvider(CountingProvider):
    timeout_excludes_queue = True


def test_a_provider_that_queues_times_requests_itself(tmp_path: Path) -> None:
    provider = QueueingProvider(delay=0.05)
    client = _client(provider, tmp_path, config=ModelConfig(timeout_s=0.01, cache=False))
    # The client imposes no deadline of its own (the provider starts its clock when it
    # starts the request); it hands its timeout over instead.
    (completion,) = asyncio.run(client.generate(MESSAGES, stage="solve"))
    assert completion.text.startswith("answer-") and provider.request_timeout_s == 0.01


def test_first_sample_gives_an_identical_request_its_own_answer(tmp_path: Path) -> None:
    provider = CountingProvider()
    client = _client(provider, tmp_path)
    (first,) = asyncio.run(client.generate(MESSAGES, stage="retry", first_sample=0))
    (second,) = asyncio.run(client.generate(MESSAGES, stage="retry", first_sample=1))
    (again,) = asyncio.run(client.generate(MESSAGES, stage="retry", first_sample=1))
    assert first.text != second.text and again.text == second.text and again.cache_hit


def test_a_request_is_serialised_once_and_its_cache_writes_run_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arcmemo.models import cache as cache_module

    serialised: list[str] = []
    message_key = cache_module._message_key

    def counting(message: Message) -> dict[str, Any]:
        serialised.append(message.content)
        return message_key(message)

    threads: list[str] = []
    cache = ResponseCache(tmp_path / "cache")
    get_many, put_many = cache.get_many, cache.put_many

    def recording_get(keys: Any) -> Any:
        threads.append(f"get on {threading.current_thread().name}")
        return get_many(keys)

    def recording_put(spec: str, entries: Any) -> None:
        threads.append(f"put on {threading.current_thread().name}")
        put_many(spec, entries)

    monkeypatch.setattr(cache_module, "_message_key", counting)
    monkeypatch.setattr(cache, "get_many", recording_get)
    monkeypatch.setattr(cache, "put_many", recording_put)
    messages = [Message(role="system", content="rules"), *MESSAGES]
    client = _client(CountingProvider(), tmp_path, cache=cache)

    async def generate() -> tuple[list[Completion], str]:
        completions = await client.generate(messages, stage="solve", n=5)
        return completions, threading.current_thread().name

    completions, loop_thread = asyncio.run(generate())
    assert len(completions) == 5
    assert serialised == ["rules", MESSAGES[0].content]  # once per request, not per sample
    # One read on the loop (never blocked by writers under WAL), one write off it.
    assert threads == [f"get on {loop_thread}", "put on arcmemo-cache_0"]
    # Committed when generate returned: another connection reads all five.
    keys = cache_module.cache_keys(
        CountingProvider().cache_identity(), messages, GenerateParams(), range(5)
    )
    assert all(ResponseCache(tmp_path / "cache").get_many(keys))


def test_a_call_log_line_torn_by_a_crash_is_cut_before_the_next_call(tmp_path: Path) -> None:
    asyncio.run(_client(CountingProvider(), tmp_path).generate(MESSAGES, stage="solve"))
    log = tmp_path / "calls.jsonl"
    with log.open("a", encoding="utf-8") as handle:
        handle.write('{"stage": "sol')  # a process died writing this line
    asyncio.run(_client(CountingProvider(), tmp_path).generate(MESSAGES, stage="retry"))
    lines = log.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["stage"] for line in lines] == ["solve", "retry"]
