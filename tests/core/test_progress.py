"""The progress state: what the live display and the plain lines show."""

from __future__ import annotations

import asyncio

from arcmemo.core.progress import (
    CallAccounted,
    ProgressEvent,
    ProgressSink,
    ProgressState,
    RunStarted,
    TaskFinished,
)
from arcmemo.core.records import TaskResult
from arcmemo.core.tokens import Usage
from arcmemo.models.base import Completion, Message, RequestReport
from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.scripted import ScriptedProvider


class Recorder(ProgressSink):
    def __init__(self) -> None:
        self.events: list[ProgressEvent] = []

    def emit(self, event: ProgressEvent) -> None:
        self.events.append(event)


def test_every_role_is_counted_in_calls_tokens_and_cost() -> None:
    state = ProgressState(clock=lambda: 0.0)
    state.apply(RunStarted(total=2))
    state.apply(CallAccounted(stage="solve", tokens=100, cost_usd=0.01))
    state.apply(CallAccounted(stage="select", tokens=40, cost_usd=0.02))
    state.apply(CallAccounted(stage="abstract", tokens=60, cost_usd=0.2))
    assert state.usage_text() == (
        "calls 3, tokens 200, $0.23 (solver 1 calls, 100 tokens, $0.01; "
        "aux 2 calls, 100 tokens, $0.22)"
    )
    assert state.usage_text() in state.line()


def test_a_resumed_run_counts_the_tasks_solved_before_it() -> None:
    state = ProgressState(clock=lambda: 0.0)
    state.apply(RunStarted(total=3, already_done=2, already_solved=2))
    assert state.solved_text() == "solved 2"
    state.apply(TaskFinished(result=TaskResult(task_id="c", solved=True)))
    assert state.solved_text() == "solved 3" and state.finished == 3
    unlabelled = ProgressState(clock=lambda: 0.0)
    unlabelled.apply(RunStarted(total=2, already_done=1, already_unscored=1))
    unlabelled.apply(TaskFinished(result=TaskResult(task_id="b", score=None)))
    assert unlabelled.solved_text() == "unscored: no labels"


def test_a_view_of_a_client_reports_its_calls_where_it_is_told() -> None:
    """The aux role is a view (with_defaults) of a client the run never sees itself."""
    recorder = Recorder()
    owner = ModelClient(
        ScriptedProvider.from_script(["an answer"], model="aux"),
        config=ModelConfig(cache=False, cache_write=False),
        progress=recorder,
    )
    view = owner.with_defaults(owner.defaults)

    async def call() -> None:
        await view.generate([Message(role="user", content="choose")], stage="select")
        await owner.aclose()

    asyncio.run(call())
    accounted = [e for e in recorder.events if isinstance(e, CallAccounted)]
    assert [e.stage for e in accounted] == ["select"]


def test_batch_answered_calls_show_their_tokens() -> None:
    recorder = Recorder()
    client = ModelClient(ScriptedProvider.from_script([], model="x"), progress=recorder)
    answered = Completion(text="x", usage=Usage(prompt_tokens=70, completion_tokens=30))
    batch_request = RequestReport(positions=[0], usage=answered.usage)
    client._parts.accounts.account(
        stage="solve",
        task_id="t",
        n=1,
        cached=[],
        results={0: answered},
        sent=[(batch_request, [0], True)],
        latency_s=0.0,
        error=None,
        reporting=client._reporting,
    )
    (event,) = [e for e in recorder.events if isinstance(e, CallAccounted)]
    assert event.tokens == 100
