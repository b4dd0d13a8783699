"""The schedule tests' scripted model: its answers are a pure function of the prompt, so a
resumed run can be compared with an uninterrupted one call for call; a :class:`Crash` at its
n-th answer ends a run as a kill would."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcmemo.core.tokens import Usage
from arcmemo.models.base import Completion, GenerateParams
from arcmemo.models.cache import ResponseCache
from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.scripted import ScriptedProvider, count_tokens_roughly
from arcmemo.run.config import RunConfig
from tests.support.arc_solutions import CORNERS, QUADRANTS
from tests.support.scripted_models import loop_model

lm = loop_model()


TRY = re.compile(r"try (\d+)")


SAMPLE = re.compile(r"# sample (\d+)")


CONCEPT = re.compile(r"concept of \w+")


class Crash(BaseException):
    """A simulated kill: nothing in the program catches it."""


# A plan entry: a program, "identity", "memorize" (passes train, fails test), or
# ("if", concept, program): that program when the concept is shown in full, else identity.
Plan = dict[str, list[Any]]


@dataclass
class Script:
    """A scripted model whose answer depends on the prompt only.

    Solve answers follow ``plan[task][n]`` for the n-th try of an attempt (a retry prompt
    shows the previous program, tagged ``# try n-1``); selection names every ``concept of
    TASK`` the memory shows; abstraction writes one concept ``concept of TASK``. With
    ``crash_at``, a model call is a :class:`Crash`, and every call after it too: the n-th
    call, or the k-th call of (stage, task, k) (stages as :func:`stage_and_task` names them).
    """

    plan: Plan
    crash_at: int | tuple[str, str, int] | None = None
    answered: list[tuple[str, str | None, str]] = field(default_factory=list)
    arrived: list[tuple[str, str | None]] = field(default_factory=list)
    dead: bool = False

    def __post_init__(self) -> None:
        self.reader = lm.LoopModel(arc_ids=list(self.plan))

    @property
    def requests(self) -> int:
        return len(self.arrived)

    def stage_and_task(self, messages: list[Any]) -> tuple[str, str | None]:
        stage = lm.stage_of(messages)
        prompt = next(m.content for m in messages if m.role == "user")
        task = self.reader.task_of(stage, prompt)
        if task is None:
            task = self.reader.task_of(stage, "\n\n".join(m.content for m in messages))
        if stage == "solve" and TRY.search(messages[-1].content):
            stage = "retry"
        return stage, task

    def request(self, messages: list[Any]) -> None:
        """A request arrives (one per model call, whatever its number of samples)."""
        self.arrived.append(self.stage_and_task(messages))
        crash = self.crash_at
        if isinstance(crash, tuple):
            self.dead |= self.arrived.count(crash[:2]) == crash[2] and self.arrived[-1] == crash[:2]
        elif crash is not None:
            self.dead |= self.requests >= crash
        if self.dead:
            raise Crash(f"killed at model call {self.requests} {self.arrived[-1]}")

    def __call__(self, messages: list[Any], sample: int = 0) -> str:
        stage = lm.stage_of(messages)
        prompt = next(m.content for m in messages if m.role == "user")
        text = "\n\n".join(m.content for m in messages)
        task = self.reader.task_of(stage, prompt) or self.reader.task_of(stage, text)
        answer = self.answer(stage, task, prompt, text)
        if stage == "solve":  # attempts differ: a retry carries its attempt's tag on
            found = SAMPLE.search(text)
            answer = answer.replace("# try", f"# sample {found[1] if found else sample}, try")
        self.answered.append((stage, task, hashlib.sha256(f"{sample}{text}".encode()).hexdigest()))
        return answer

    def answer(self, stage: str, task: str | None, prompt: str, text: str) -> str:
        if stage == "select":
            names = sorted(set(CONCEPT.findall(prompt))) or ["reflect grid"]
            return "```yaml\n" + "".join(f"- {n}\n" for n in names) + "```"
        if stage == "pseudocode":
            return self.reader.default(stage, task)
        if stage == "concepts":
            return lm.yaml_block(
                f"- name: concept of {task}\n  kind: structure\n"
                f"  description: what task {task} taught\n  cues: [seen in task {task}]"
            )
        assert stage == "solve" and task is not None, (stage, task)
        tries = [int(n) for n in TRY.findall(text)]
        n = max(tries) + 1 if tries else 0
        entry = self.plan[task][min(n, len(self.plan[task]) - 1)]
        if isinstance(entry, tuple):
            _, concept, program = entry
            entry = program if f"- concept: {concept}\n" in text else "identity"
        if entry == "identity":
            entry = lm.IDENTITY
        elif entry == "memorize":
            entry = lm.memorizing_program(task)
        return lm.program_answer(f"{entry.strip()}\n# try {n}")


class ScriptProvider(ScriptedProvider):
    """The scripted provider answering sample i of a request as ``script(messages, i)`` (what
    the response cache keys it by), and telling the script when a request arrives."""

    def __init__(self, script: Script) -> None:
        super().__init__(script, model="schedule")
        self.script = script

    async def generate(self, messages: list[Any], params: GenerateParams) -> list[Completion]:
        self.script.request(messages)
        texts = [self.script(messages, sample) for sample in range(params.n)]
        prompt = count_tokens_roughly("\n\n".join(m.content for m in messages))
        return [
            Completion(
                text=text,
                finish_reason="stop",
                usage=Usage(prompt_tokens=prompt, completion_tokens=count_tokens_roughly(text)),
            )
            for text in texts
        ]


def client(script: Script, out: Path, cache: Path) -> ModelClient:
    """A client for ``script`` with the response cache in ``cache`` and the run's call log."""
    return ModelClient(
        ScriptProvider(script),
        config=ModelConfig(request_retries=0),
        cache=ResponseCache(cache),
        call_log_path=out / "calls.jsonl",
    )


def online_config(out: Path, memory: Path, tasks: list[str], **fields: Any) -> RunConfig:
    values: dict[str, Any] = {
        "benchmark": "arc-agi-1",
        "split": "evaluation",
        "tasks": tasks,
        "model": "scripted:schedule",
        "attempts": 1,
        "feedback_rounds": 1,
        "memory": memory,
        "memory_out": out.parent / f"{out.name}-memory.json",
        "selector": "llm",
        "update": "online",
        "update_every": 1,
        "out": out,
    }
    return RunConfig(**(values | fields))


# 66e6c45b fails its first try; its retry is right only when it is shown the concept that
# 0c786b71 (a later batch of pass 0) writes.
TRANSFER: Plan = {
    "66e6c45b": ["identity", ("if", "concept of 0c786b71", CORNERS)],
    "0c786b71": [QUADRANTS],
}
