"""Batch mode of ModelClient through the real SDKs' batch methods against a fake server."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arcmemo.models import ModelCallError, ModelClient, ModelConfig, ResponseCache
from arcmemo.models.accounting import CallRecord, StageUsage, usage_from_records
from arcmemo.models.base import Message
from arcmemo.models.batch import (
    BatchProgress,
    BatchSettings,
    BatchUnsupportedError,
    pending_batches,
    read_batch_log,
)
from arcmemo.models.batch_mode import BatchMode
from arcmemo.models.prices import BATCH_DISCOUNT, ModelPrice, PriceTable
from arcmemo.models.registry import create_provider
from arcmemo.models.scripted import ScriptedProvider
from tests.support.fake_batch_server import FakeBatchServer
from tests.support.model_clients import RecordingSleep

SPECS = ("openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5")
PRICES = PriceTable({spec: ModelPrice(input=2.0, output=8.0) for spec in SPECS})


class Stop(Exception):
    """Raised by a progress callback: the process 'dies' while a batch is pending."""


@pytest.fixture
def batch_server() -> Iterator[FakeBatchServer]:
    with FakeBatchServer() as server:
        yield server


def make_client(
    spec: str, server: FakeBatchServer, directory: Path, *, batch: bool = True, **settings: Any
) -> ModelClient:
    base_url = server.openai_base_url if spec.startswith("openai:") else server.url
    options = {"prompt_cache": "false"} if spec.startswith("anthropic:") else {}
    quick = {"quiet_s": 0.05, "poll_s": 0.01, "submit_retries": 0} | settings
    return ModelClient(
        create_provider(spec, base_url=base_url, **options),
        config=ModelConfig(timeout_s=5),
        cache=ResponseCache(directory / "cache"),
        prices=PRICES,
        call_log_path=directory / "calls.jsonl",
        sleep=RecordingSleep(),
        rng=random.Random(0),
        batch=BatchMode(directory / "batches.jsonl", BatchSettings(**quick)) if batch else None,
    )


def prompt(text: str) -> list[Message]:
    return [Message(role="system", content="be brief"), Message(role="user", content=text)]


async def ask(client: ModelClient, texts: list[str], n: int = 2) -> list[list[str]]:
    answers = await asyncio.gather(
        *(client.generate(prompt(text), stage="solve", task_id=text, n=n) for text in texts)
    )
    return [[c.text for c in completions] for completions in answers]


def calls(directory: Path) -> list[CallRecord]:
    lines = (directory / "calls.jsonl").read_text().splitlines()
    return [CallRecord.model_validate_json(line) for line in lines]


def usage_by_task(directory: Path) -> dict[str | None, StageUsage]:
    """Each task's calls summed (a call logs one line per request)."""
    records = calls(directory)
    tasks = {record.task_id for record in records}
    return {
        task: usage_from_records(r for r in records if r.task_id == task).total for task in tasks
    }


def comparable(record: CallRecord) -> dict[str, Any]:
    return record.model_dump(exclude={"ts", "call_id", "latency_s", "batch", "cost_usd", "status"})


@pytest.mark.parametrize("spec", SPECS)
def test_concurrent_calls_go_out_as_one_batch_and_match_the_synchronous_answers(
    spec: str, batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    texts = ["alpha", "beta", "gamma"]

    async def both() -> tuple[list[list[str]], list[list[str]]]:
        batched = make_client(spec, batch_server, tmp_path / "batch")
        plain = make_client(spec, batch_server, tmp_path / "sync", batch=False)
        try:
            return await ask(batched, texts), await ask(plain, texts)
        finally:
            await batched.aclose()
            await plain.aclose()

    batched, plain = asyncio.run(both())
    assert batched == plain
    assert batch_server.batches_created == 1
    synchronous = [
        r for r in batch_server.requests if r.path.endswith(("/completions", "/messages"))
    ]
    assert len(synchronous) == (3 if spec.startswith("openai:") else 6)  # only the sync client's
    by_task = lambda d: sorted(calls(d), key=lambda r: r.task_id or "")  # noqa: E731
    assert [comparable(r) for r in by_task(tmp_path / "batch")] == [
        comparable(r) for r in by_task(tmp_path / "sync")
    ]
    assert all(r.batch for r in calls(tmp_path / "batch"))
    first_run = len(calls(tmp_path / "batch"))
    # The answers are in the cache, keyed as a synchronous run keys them.
    again = make_client(spec, batch_server, tmp_path / "batch")
    assert asyncio.run(ask(again, texts)) == plain
    assert batch_server.batches_created == 1
    assert all(r.cache_hit for r in calls(tmp_path / "batch")[first_run:])
    records = read_batch_log(tmp_path / "batch" / "batches.jsonl")
    assert [r.event for r in records] == ["submitted", "collected"]
    assert pending_batches(records, spec) == []


@pytest.mark.parametrize("spec", SPECS)
def test_batch_cost_is_half_the_price_table(
    spec: str, batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    answers: dict[str, list[Any]] = {}

    async def both() -> None:
        for name, batch in (("batch", True), ("sync", False)):
            client = make_client(spec, batch_server, tmp_path / name, batch=batch)
            answers[name] = await client.generate(prompt("three"), stage="solve", task_id="3")
            await ask(client, ["one", "two"])
            await client.aclose()

    asyncio.run(both())
    # A batch answer carries its batch price (what a run's step records as its cost).
    for completion in answers["batch"]:
        full = PRICES.cost_usd(spec, completion.usage)
        assert full and completion.cost_usd == pytest.approx(full * BATCH_DISCOUNT)
    assert all(c.cost_usd is None for c in answers["sync"])
    batched = {r.task_id: r for r in calls(tmp_path / "batch")}
    plain = {r.task_id: r for r in calls(tmp_path / "sync")}
    for task_id, record in batched.items():
        full = PRICES.cost_usd(spec, record.tokens)
        assert full is not None and full > 0
        assert record.cost_usd == pytest.approx(full * BATCH_DISCOUNT)
        assert plain[task_id].cost_usd == pytest.approx(full)
        assert record.batch and not plain[task_id].batch


def test_per_request_errors_follow_the_synchronous_rules(
    batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    """A 500 inside a batch is sent again synchronously; a 404 fails the call at once."""
    spec = SPECS[0]
    batch_server.fail_next_requests(500, 404)

    async def run() -> list[Any]:
        client = make_client(spec, batch_server, tmp_path)
        try:
            return await asyncio.gather(
                *(
                    client.generate(prompt(text), stage="solve", task_id=text)
                    for text in ("retried", "refused", "fine")
                ),
                return_exceptions=True,
            )
        finally:
            await client.aclose()

    retried, refused, fine = asyncio.run(run())
    assert [c.text for c in retried] == ["reply to retried #0"]
    assert isinstance(refused, ModelCallError) and refused.status == 404
    assert [c.text for c in fine] == ["reply to fine #0"]
    synchronous = [r for r in batch_server.requests if r.path.endswith("/completions")]
    assert [_last_user(r.body) for r in synchronous] == ["retried"]
    records = usage_by_task(tmp_path)
    assert records["retried"].requests == 2 and not records["retried"].batch_calls
    assert records["refused"].requests == 1 and records["refused"].errors == 1
    assert records["fine"].requests == 1 and records["fine"].batch_calls == 1
    # The synchronous answer is billed at full price, the batch answer at half.
    assert records["retried"].cost_usd == pytest.approx(
        PRICES.cost_usd(spec, records["retried"].tokens)
    )


def test_a_400_on_a_request_for_several_samples_gets_the_synchronous_n_fallback(
    batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    """A server that rejects n > 1 with 400: synchronously the provider falls back to single
    calls, so a batch's 400 is handed to that path rather than failing the call."""
    batch_server.state.reject_n = True

    async def run() -> list[list[str]]:
        client = make_client(SPECS[0], batch_server, tmp_path)
        try:
            return await ask(client, ["many"], n=2)
        finally:
            await client.aclose()

    assert asyncio.run(run()) == [["reply to many #0", "reply to many #0"]]
    synchronous = [r.body.get("n", 1) for r in batch_server.requests]
    assert synchronous == [2, 1, 1]  # the rejected n, then one call per sample
    (usage,) = usage_by_task(tmp_path).values()
    assert usage.calls == 1 and usage.errors == 0 and not usage.batch_calls
    # One line per request: the batch's refusal, the rejected n, one per sample.
    assert usage.requests == len(calls(tmp_path)) == 4


@pytest.mark.parametrize("spec", SPECS)
def test_an_expired_batch_answers_what_it_finished_and_the_rest_goes_synchronous(
    spec: str, batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    batch_server.expire_next_batch(answered=1)

    async def run() -> list[list[str]]:
        client = make_client(spec, batch_server, tmp_path)
        try:
            return await ask(client, ["a", "b", "c"], n=1)
        finally:
            await client.aclose()

    assert asyncio.run(run()) == [["reply to a #0"], ["reply to b #0"], ["reply to c #0"]]
    synchronous = [
        r for r in batch_server.requests if r.path.endswith(("/completions", "/messages"))
    ]
    assert sorted(_last_user(r.body) for r in synchronous) == ["b", "c"]
    records = {r.task_id: r for r in calls(tmp_path)}
    assert records["a"].batch and not records["b"].batch and not records["c"].batch
    (collected,) = [r for r in read_batch_log(tmp_path / "batches.jsonl") if r.event == "collected"]
    assert collected.state in {"expired", "ended"} and collected.answered == 1


@pytest.mark.parametrize("spec", SPECS)
def test_a_restarted_client_awaits_the_recorded_batch_instead_of_resubmitting(
    spec: str, batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    def die(progress: BatchProgress) -> None:
        raise Stop(progress.batch_id)

    async def first() -> None:
        client = make_client(spec, batch_server, tmp_path, on_progress=die)
        try:
            await ask(client, ["x", "y"])
        finally:
            await client.aclose()

    with pytest.raises(Stop):
        asyncio.run(first())
    assert batch_server.batches_created == 1
    assert len(pending_batches(read_batch_log(tmp_path / "batches.jsonl"), spec)) == 1

    seen: list[str] = []

    async def resumed() -> list[list[str]]:
        client = make_client(
            spec, batch_server, tmp_path, on_progress=lambda p: seen.append(p.batch_id)
        )
        try:
            return await ask(client, ["x", "y"])
        finally:
            await client.aclose()

    answers = asyncio.run(resumed())
    assert batch_server.batches_created == 1  # retrieved, not submitted again
    assert answers[0][0] == "reply to x #0" and answers[1][0] == "reply to y #0"
    assert set(seen) == {f"batch_{spec.partition(':')[0]}_1"}
    assert pending_batches(read_batch_log(tmp_path / "batches.jsonl"), spec) == []
    # The resumed calls are logged as answered by the batch (the interrupted ones before
    # them, with nothing answered, as calls that obtained no sample).
    requests = 1 if spec.startswith("openai:") else 2  # Anthropic: one request per sample
    resumed_lines = calls(tmp_path)[-2 * requests :]
    assert [(r.batch, r.attempts) for r in resumed_lines] == [(True, 1)] * 2 * requests
    assert len({r.call_id for r in resumed_lines}) == 2


def test_an_endpoint_without_batches_fails_at_once_in_one_line(
    api_keys: dict[str, str], tmp_path: Path
) -> None:
    with FakeBatchServer(batch_api=False) as server:
        for spec in SPECS:
            client = make_client(spec, server, tmp_path)
            with pytest.raises(BatchUnsupportedError) as caught:
                asyncio.run(client.check_batch())
            asyncio.run(client.aclose())
            message = str(caught.value)
            assert "\n" not in message and "--batch" in message and "HTTP 404" in message
            assert server.url.removeprefix("http://") in message


def test_a_provider_without_a_batch_api_is_refused() -> None:
    with pytest.raises(BatchUnsupportedError, match=r"scripted:.* has no batch API"):
        ModelClient(
            ScriptedProvider.from_script({"default": "x"}), batch=BatchMode(Path("unused.jsonl"))
        )


def test_a_full_queue_is_flushed_without_waiting_for_quiet(
    batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    async def run() -> None:
        client = make_client(SPECS[0], batch_server, tmp_path, quiet_s=30.0, max_requests=2)
        try:
            await asyncio.wait_for(ask(client, ["p", "q"], n=1), timeout=10)
        finally:
            await client.aclose()

    asyncio.run(run())
    assert batch_server.batches_created == 1
    lines = (tmp_path / "batches.jsonl").read_text().splitlines()
    assert len(json.loads(lines[0])["requests"]) == 2


def _last_user(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def test_a_line_torn_by_a_crash_is_cut_before_the_batch_log_grows(
    batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    spec = SPECS[0]

    def die(progress: BatchProgress) -> None:
        raise Stop(progress.batch_id)

    async def ask_once(on_progress: Callable[[BatchProgress], None]) -> list[list[str]]:
        client = make_client(spec, batch_server, tmp_path, on_progress=on_progress)
        try:
            return await ask(client, ["x", "y"])
        finally:
            await client.aclose()

    with pytest.raises(Stop):
        asyncio.run(ask_once(die))
    log = tmp_path / "batches.jsonl"
    with log.open("a", encoding="utf-8") as handle:
        handle.write('{"event": "collec')  # a process died writing this line
    assert asyncio.run(ask_once(lambda progress: None))[0][0] == "reply to x #0"
    # The collected line was not glued onto the torn one: the batch reads as done.
    assert batch_server.batches_created == 1
    assert pending_batches(read_batch_log(log), spec) == []
    assert log.read_text(encoding="utf-8").endswith("\n")


def test_a_batch_that_fails_validation_fails_its_calls_at_once_with_the_reason(
    batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    """No silent full-price fallback: the same requests would be refused synchronously."""
    batch_server.fail_next_batch_validation("model gpt-4o-mini is not available in batches")

    async def run() -> list[Any]:
        client = make_client(SPECS[0], batch_server, tmp_path)
        try:
            return await asyncio.gather(
                *(client.generate(prompt(t), stage="solve", task_id=t) for t in ("a", "b")),
                return_exceptions=True,
            )
        finally:
            await client.aclose()

    outcomes = asyncio.run(run())
    reason = "invalid_request (line 1): model gpt-4o-mini is not available in batches"
    for outcome in outcomes:
        assert isinstance(outcome, ModelCallError) and reason in str(outcome)
    synchronous = [r for r in batch_server.requests if r.path.endswith("/completions")]
    assert synchronous == [] and batch_server.batches_created == 1
    (collected,) = [r for r in read_batch_log(tmp_path / "batches.jsonl") if r.event == "collected"]
    assert (collected.state, collected.reason) == ("failed", reason)


def test_a_collected_batch_deletes_its_files(
    batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    batch_server.fail_next_requests(404)  # an error file besides the output file

    async def run() -> None:
        client = make_client(SPECS[0], batch_server, tmp_path)
        try:
            await asyncio.gather(
                *(client.generate(prompt(t), stage="solve", task_id=t) for t in ("a", "b")),
                return_exceptions=True,
            )
        finally:
            await client.aclose()

    asyncio.run(run())
    assert batch_server.batches_created == 1
    assert batch_server.files == []  # input, output and error file all deleted
    assert len(batch_server.batch.deleted) == 3


@pytest.mark.parametrize("spec", SPECS)
def test_keep_files_leaves_what_the_batch_stored(
    spec: str, batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    async def run() -> None:
        client = make_client(spec, batch_server, tmp_path, keep_files=True)
        try:
            await ask(client, ["a", "b"], n=1)
        finally:
            await client.aclose()

    asyncio.run(run())
    assert batch_server.batch.deleted == []
    if spec.startswith("openai:"):
        assert batch_server.files == ["batch_openai_1-out", "file-1"]
    else:
        assert list(batch_server.batch.batches) == ["batch_anthropic_1"]


def test_a_collected_anthropic_batch_is_deleted_with_its_results(
    batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    """DELETE /v1/messages/batches/ID once its results are read (else kept 29 days)."""

    async def run() -> list[list[str]]:
        client = make_client(SPECS[1], batch_server, tmp_path)
        try:
            return await ask(client, ["a", "b"], n=1)
        finally:
            await client.aclose()

    assert asyncio.run(run()) == [["reply to a #0"], ["reply to b #0"]]
    assert batch_server.batch.deleted == ["batch_anthropic_1"]
    assert batch_server.batch.batches == {}


@pytest.mark.parametrize("spec", SPECS)
def test_only_server_errors_and_expiry_go_synchronous_with_a_warning_naming_the_cost(
    spec: str,
    batch_server: FakeBatchServer,
    api_keys: dict[str, str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 500 in the batch is paid again at full price, and the warning says how much; a 429
    (or any other refusal) fails its call at once instead of paying full price for it."""
    batch_server.fail_next_requests(500, 429)

    async def run() -> list[Any]:
        client = make_client(spec, batch_server, tmp_path)
        try:
            return await asyncio.gather(
                *(client.generate(prompt(t), stage="solve", task_id=t) for t in ("five", "rate")),
                return_exceptions=True,
            )
        finally:
            await client.aclose()

    with caplog.at_level("WARNING", logger="arcmemo.batch"):
        five, rate = asyncio.run(run())
    assert [c.text for c in five] == ["reply to five #0"]
    assert isinstance(rate, ModelCallError)
    synchronous = [
        r for r in batch_server.requests if r.path.endswith(("/completions", "/messages"))
    ]
    assert [_last_user(r.body) for r in synchronous] == ["five"]
    (record,) = [r for r in calls(tmp_path) if r.task_id == "five" and not r.error]
    full = PRICES.cost_usd(spec, record.tokens)
    assert full is not None and record.cost_usd == pytest.approx(full)
    (warning,) = [r.getMessage() for r in caplog.records if "at full price: $" in r.getMessage()]
    assert f"${full:.6f}" in warning and "five" in warning and "HTTP 500" in warning
    assert any("left 1 of 2 requests unanswered" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("spec", SPECS)
def test_a_canceled_batch_fails_its_calls_instead_of_paying_full_price(
    spec: str, batch_server: FakeBatchServer, api_keys: dict[str, str], tmp_path: Path
) -> None:
    batch_server.hold_batches()

    async def run() -> list[Any]:
        client = make_client(spec, batch_server, tmp_path)
        backend = client.provider.batch_backend()  # type: ignore[attr-defined]

        async def cancel_when_submitted() -> None:
            while not batch_server.batches_created:
                await asyncio.sleep(0.01)
            status = await backend.cancel(f"batch_{spec.partition(':')[0]}_1")
            assert status.state in {"cancelling", "canceling"} and not status.ended

        try:
            calls = [client.generate(prompt(t), stage="solve", task_id=t) for t in ("a", "b")]
            # Bounded: calls that wait on a batch nobody canceled would wait forever.
            *outcomes, _ = await asyncio.wait_for(
                asyncio.gather(*calls, cancel_when_submitted(), return_exceptions=True), 60
            )
            return outcomes
        finally:
            await client.aclose()

    outcomes = asyncio.run(run())
    assert all(isinstance(o, ModelCallError) for o in outcomes), outcomes
    assert len(batch_server.batch.canceled) == 1
    synchronous = [r for r in batch_server.requests if r.path.endswith(("s", "/messages"))]
    assert [r.path for r in synchronous if "batches" not in r.path] == []
    (collected,) = [r for r in read_batch_log(tmp_path / "batches.jsonl") if r.event == "collected"]
    assert collected.state in {"cancelled", "ended"} and collected.answered == 0
