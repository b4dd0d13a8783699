"""An OpenAI-protocol server on 127.0.0.1 answering ARC runs of the fixture tasks from a fixed
plan, for runs in processes of their own (SLURM jobs): every answer is a function of the
request alone (task, attempt, feedback round), so a shard, the unsharded run and a resumed
run that ask the same question get the same answer, in any order and in any process.

The plan is ``tests/fixtures/scripts/arc_plan.py``'s with two changes that keep a run short:
the task whose program loops forever returns its input first instead (fixed on the retry as
before), and the hostile task's program returns its input (the sandbox's own tests attack).
Selection prompts get one concept of the seed memory.

``hold(task, round, tasks)`` stops a run mid-way: once that request arrives, no request of
``tasks`` (a shard's) is answered until ``release()``, so whatever is killed meanwhile has
answered calls behind it and none in the balance; ``unanswered`` keeps the requests held.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from tests.support.fake_llm_server import FakeLLMServer
from tests.support.scripted_models import loop_model

SELECTION = "The grid is mirrored.\n```yaml\n- reflect grid\n```\n"
HOLD_TIMEOUT_S = 300.0


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if isinstance(block, dict))


def digest(messages: list[dict[str, Any]]) -> str:
    """One request's conversation, as a key."""
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()


@dataclass
class Hold:
    trigger: tuple[str, int]
    tasks: set[str]
    reached: threading.Event = field(default_factory=threading.Event)


class ArcPlanServer(FakeLLMServer):
    """``with ArcPlanServer(arc_plan) as server:``; ``server.openai_base_url`` for runs."""

    def __init__(self, arc_plan: ModuleType) -> None:
        super().__init__()
        self.plan_module = arc_plan
        self.plan = arc_plan.build_plan("unused")
        identity = arc_plan.IDENTITY
        self.plan["0c786b71"] = [[identity, arc_plan.SOLUTIONS["0c786b71"]]] * 2
        self.plan["e133d23d"] = [[identity]] * 2
        self.keys = arc_plan.task_keys()
        self.markers = [marker for _, marker in loop_model().STAGE_MARKERS if _ == "select"]
        self.holds: list[Hold] = []
        self.unanswered: set[str] = set()
        self._release = threading.Event()
        self._lock = threading.Lock()
        self.state.respond = self.answer

    def hold(self, task_id: str, round_: int, tasks: list[str]) -> threading.Event:
        """Hold back ``tasks`` from the request for ``task_id``'s ``round_`` on; the event is
        set when that request arrives."""
        with self._lock:
            self._release.clear()
            self.holds.append(Hold((task_id, round_), set(tasks)))
        return self.holds[-1].reached

    def release(self) -> None:
        """Answer what is held, and hold nothing from now on."""
        with self._lock:
            self.holds = []
        self._release.set()

    def stop(self) -> None:
        self.release()
        super().stop()

    def asked(self) -> list[str]:
        """The conversation of each chat request received so far, in order."""
        return [digest(r.body.get("messages", [])) for r in self.requests]

    def _held(self, messages: list[dict[str, Any]], task_id: str | None, round_: int) -> bool:
        with self._lock:
            for hold in self.holds:
                if hold.trigger == (task_id, round_):
                    hold.reached.set()
                if hold.reached.is_set() and task_id in hold.tasks:
                    self.unanswered.add(digest(messages))
                    return True
        return False

    def task_of(self, text: str) -> str | None:
        return next((t for t, keys in self.keys.items() if any(k in text for k in keys)), None)

    def locate(self, text: str, index: int) -> tuple[str, int, int]:
        """(task id, attempt, round) a solve conversation asks for."""
        task_id = self.task_of(text)
        if task_id is None:
            raise ValueError(f"no fixture task in this prompt: {text[:300]!r}")
        feedback = self.plan_module.retry_feedback(text)
        if feedback is None:
            return task_id, index, 0  # a first try: one request, a sample per attempt
        found = self.plan_module._MARKER.search(feedback)
        if found is None:  # the previous answer had no program: the attempts share a plan
            return task_id, 0, 1
        return task_id, int(found.group(2)), int(found.group(3)) + 1

    def answer(self, messages: list[dict[str, Any]], index: int) -> str:
        first_user = next(_text(m) for m in messages if m.get("role") == "user")
        if any(marker in first_user for marker in self.markers):
            if self._held(messages, self.task_of(first_user), -1):
                self._release.wait(HOLD_TIMEOUT_S)
            return SELECTION
        task_id, attempt, round_ = self.locate("\n\n".join(map(_text, messages)), index)
        if self._held(messages, task_id, round_):
            self._release.wait(HOLD_TIMEOUT_S)
        rounds = self.plan[task_id][attempt]
        program = rounds[min(round_, len(rounds) - 1)]
        return self.plan_module.answer_text(task_id, attempt, round_, program)
