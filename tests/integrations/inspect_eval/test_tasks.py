"""arcmemo's inspect tasks run end to end on inspect's own OpenAI client against a local
test server that answers from arcmemo's scripts; the scores in the written log file are
the ones ``arcmemo run`` computes for the same tasks and answers."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import get_model

from arcmemo.integrations.inspect_eval.tasks import aime, arc_agi_1
from arcmemo.memory.schema import Memory
from arcmemo.models.client import ModelClient, open_model
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import run_benchmark
from tests.support.fake_llm_server import FakeLLMServer
from tests.support.inspect_server import scripted_server
from tests.support.paths import FIXTURES, SCRIPTS

ARC_DIR = FIXTURES / "arc" / "eval"
AIME_FILE = FIXTURES / "aime" / "problems.jsonl"
# 00576224: fixed on retry 1; e345f17b: each attempt wrong on a different test input
# (oracle@2 1, strict 0); 68b67ca3: crashes every round; bbb1b8b6: both wrong on test 2.
ARC_TASKS = "00576224,e345f17b,68b67ca3,bbb1b8b6"
# Servers that speak Chat Completions only: inspect's openai provider would otherwise use
# the Responses API for a model name it does not know.
CHAT_ONLY = {"responses_api": False}


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # the local server ignores it
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    """A copy of a small ARC memory, for an online run to grow."""
    path = tmp_path / "memory.json"
    shutil.copy(FIXTURES / "memory" / "valid_small.json", path)
    return path


def _eval(task: Any, url: str, log_dir: Path, **kwargs: Any) -> EvalLog:
    # A task's samples go out as one request each, at once (arcmemo asks inspect's model for
    # one choice a request), and a script answers in arrival order: one connection at a time
    # keeps that order the samples' order, which the expected values depend on (AIME's
    # maj@3 tie-break, toy-3: 37 before 73, failed 3 runs in 6 without it).
    kwargs.setdefault("max_connections", 1)
    (log,) = inspect_eval(
        task,
        model="openai/local-model",
        model_base_url=url,
        model_args=CHAT_ONLY,
        log_dir=str(log_dir),
        display="none",
        **kwargs,
    )
    assert log.status == "success", log.error
    return log


def _values(sample: EvalSample) -> dict[str, float]:
    """The arcmemo scorer's values of ``sample`` (a dict per sample)."""
    assert sample.scores is not None
    value = sample.scores["arcmemo_scorer"].value
    assert isinstance(value, dict)
    return {key: float(v) for key, v in value.items() if isinstance(v, int | float)}


def _scores_from_file(log: EvalLog) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Per sample id its score values, and the run's means, as read back from disk."""
    saved = read_eval_log(log.location)
    assert saved.samples is not None
    per_sample = {str(s.id): _values(s) for s in saved.samples}
    assert saved.results is not None
    means = {s.name: s.metrics["mean"].value for s in saved.results.scores}
    return per_sample, means


def _scripted(script: Path, out: Path) -> ModelClient:
    return open_model(f"scripted:{script}", call_log_path=out / "calls.jsonl")


@pytest.mark.slow  # an inspect eval of an ARC task: about 7 s
def test_arc_task_logs_arcmemos_scores(tmp_path: Path) -> None:
    with scripted_server(SCRIPTS / "arc_plan.py") as server:
        task = arc_agi_1(data=str(ARC_DIR), tasks=ARC_TASKS, attempts=2, feedback_rounds=2)
        log = _eval(task, server.openai_base_url, tmp_path / "logs")
        requests = len(server.requests)
    per_sample, means = _scores_from_file(log)
    assert per_sample["e345f17b"] == {
        "score": 1.0,
        "strict_score": 0.0,
        "oracle@1": 0.5,
        "oracle@2": 1.0,
        # The published code's convention: the same here (no step right before a wrong
        # retry, none right on the tests and wrong on train).
        "code_score": 1.0,
        "code_strict_score": 0.0,
    }
    assert per_sample["00576224"]["oracle@2"] == 1.0  # solved by a retry with feedback
    assert per_sample["68b67ca3"]["oracle@2"] == 0.0
    # 8 first tries, one retry for 00576224's wrong attempt(s), two for each crash, ...
    assert requests > 8
    # The same tasks and answers through `arcmemo run` give the same run-level figures.
    config = RunConfig(
        benchmark="arc-agi-1",
        data=str(ARC_DIR),
        tasks=ARC_TASKS.split(","),
        model=f"scripted:{SCRIPTS / 'arc_plan.py'}",
        attempts=2,
        feedback_rounds=2,
        out=tmp_path / "run",
    )
    summary = asyncio.run(
        run_benchmark(config, models={"solver": _scripted(SCRIPTS / "arc_plan.py", tmp_path)})
    )
    for name in ("score", "strict_score", "oracle@1", "oracle@2"):
        assert means[name] == pytest.approx(summary[name]), name
    assert means["strict_score"] < means["score"]


def test_aime_task_logs_pass_at_k(tmp_path: Path) -> None:
    with scripted_server(SCRIPTS / "aime_answers.yaml") as server:
        task = aime(data=str(AIME_FILE), attempts=3)
        log = _eval(task, server.openai_base_url, tmp_path / "logs", max_samples=1)
    per_sample, means = _scores_from_file(log)
    assert set(per_sample) == {"toy-1", "toy-2", "toy-3"}
    # Expected values from tests/fixtures/scripts/aime_answers.yaml's header.
    assert means["pass@1"] == pytest.approx(5 / 9)
    assert means["pass@2"] == pytest.approx(8 / 9)
    assert means["pass@3"] == pytest.approx(1.0)
    assert means["maj@3"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("role", ["aux", "abstract"])
def test_role_writes_the_memory_online(tmp_path: Path, memory: Path, role: str) -> None:
    """update=online abstracts the solved task with the ``abstract`` model role, or with
    ``aux`` where abstract is not given (a second server), and saves the grown memory; the
    evaluated model only solves."""
    grown = tmp_path / "grown.json"
    with (
        scripted_server(SCRIPTS / "arc_plan.py") as solver,
        scripted_server(FIXTURES / "loop" / "run_abstraction.yaml") as writer,
    ):
        task = arc_agi_1(
            data=str(ARC_DIR),
            tasks="66e6c45b",
            memory=str(memory),
            memory_out=str(grown),
            update="online",
            select="none",
            attempts=1,
            feedback_rounds=0,
            out=str(tmp_path / "run"),
        )
        writer_model = get_model(
            f"openai/{role}-model",
            base_url=writer.openai_base_url,
            memoize=False,
            responses_api=False,
        )
        _eval(task, solver.openai_base_url, tmp_path / "logs", model_roles={role: writer_model})
        solver_texts = [json.dumps(r.body) for r in solver.requests]
        writer_texts = [json.dumps(r.body) for r in writer.requests]
    assert len(solver_texts) == 1 and "pseudocode" not in solver_texts[0]
    assert any("Abstract the reusable concepts" in t for t in writer_texts)
    names = {c.name for c in Memory.load(grown).concepts}
    assert "move center to corners" in names
    assert "move center to corners" not in {c.name for c in Memory.load(memory).concepts}
    assert (tmp_path / "run" / "memory").is_dir()  # arcmemo's online snapshots


# The llm selector's prompt (the paper's selection prompt, the default view) and an answer.
SELECT_PROMPT = "decide which of them are relevant to this puzzle"
SELECT_ANSWER = "```yaml\n- Reflect Grids\n```\n"


def _answers_selection(server: FakeLLMServer) -> None:
    """``server`` answers the llm selector's prompt with SELECT_ANSWER, the rest from its
    script."""
    solve = server.state.respond
    assert solve is not None

    def respond(messages: list[dict[str, Any]], index: int) -> str:
        if SELECT_PROMPT in json.dumps(messages):
            return SELECT_ANSWER
        return solve(messages, index)

    server.state.respond = respond


@pytest.mark.parametrize(
    ("roles", "selecting"),
    [
        (("select", "aux"), "select-model"),
        (("aux",), "aux-model"),  # select falls back to aux
        ((), "local-model"),  # and aux to the evaluated model
    ],
)
def test_select_role_selects(tmp_path: Path, roles: tuple[str, ...], selecting: str) -> None:
    """The llm selector calls the ``select`` model role, else ``aux``, else the evaluated
    model; solving always calls the evaluated model. One server answers every model name
    and records the one each request asked for."""
    with scripted_server(SCRIPTS / "arc_plan.py") as server:
        _answers_selection(server)
        task = arc_agi_1(
            data=str(ARC_DIR),
            tasks="66e6c45b",
            memory=str(FIXTURES / "memory" / "valid_small.json"),
            select="llm",
            attempts=1,
            feedback_rounds=0,
        )
        model_roles = {
            role: get_model(
                f"openai/{role}-model",
                base_url=server.openai_base_url,
                memoize=False,
                responses_api=False,
            )
            for role in roles
        }
        log = _eval(task, server.openai_base_url, tmp_path / "logs", model_roles=model_roles)
        asked = [(r.body["model"], SELECT_PROMPT in json.dumps(r.body)) for r in server.requests]
    assert asked == [(selecting, True), ("local-model", False)]
    per_sample, _ = _scores_from_file(log)
    assert per_sample["66e6c45b"]["score"] == 1.0


def _entry_point_installed() -> bool:
    return any(ep.name == "arcmemo" for ep in importlib.metadata.entry_points(group="inspect_ai"))


def _declare_entry_point(folder: Path) -> None:
    """A distribution under ``folder`` declaring pyproject.toml's inspect_ai entry point, for
    a checkout whose arcmemo is installed without it (an editable install older than the
    entry point): inspect then finds arcmemo/... through it, as it would installed."""
    text = (FIXTURES.parents[1] / "pyproject.toml").read_text()
    section = text.split("[project.entry-points.inspect_ai]\n", 1)[1].split("\n[", 1)[0]
    lines = [line for line in section.splitlines() if "=" in line and not line.startswith("#")]
    info = folder / "arcmemo_inspect_entry_point-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: arcmemo-inspect-entry-point\nVersion: 0\n"
    )
    # entry_points.txt reads as TOML's `name = "target"` lines with the quotes taken off.
    (info / "entry_points.txt").write_text(
        "[inspect_ai]\n" + "".join(line.replace('"', "") + "\n" for line in lines)
    )


def _inspect_cli(
    tmp_path: Path, args: list[str], server: FakeLLMServer
) -> subprocess.CompletedProcess[str]:
    """``inspect eval ARGS`` evaluating ``openai/local-model`` on ``server``, in a process
    importing what this one imports (this checkout's arcmemo), its log under
    tmp_path/logs."""
    path = list(sys.path)
    if not _entry_point_installed():
        _declare_entry_point(tmp_path / "entry_point")
        path.insert(0, str(tmp_path / "entry_point"))
    return subprocess.run(
        [
            "inspect",
            "eval",
            *args,
            "--model",
            "openai/local-model",
            "--model-base-url",
            server.openai_base_url,
            "-M",
            "responses_api=false",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "plain",
            # click 8.4 turns these optional-value options on when they are not given.
            "--batch=false",
            "--cache=false",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
        timeout=300,
    )


needs_inspect_cli = pytest.mark.skipif(
    shutil.which("inspect") is None, reason="inspect_ai's inspect command is not on PATH"
)


@pytest.mark.slow  # the inspect command's start-up: 10-30 s
@needs_inspect_cli
def test_inspect_cli_finds_the_registered_task(tmp_path: Path) -> None:
    with scripted_server(SCRIPTS / "aime_answers.yaml") as server:
        done = _inspect_cli(
            tmp_path,
            [
                "arcmemo/aime",
                "-T",
                f"data={AIME_FILE}",
                "-T",
                "tasks=toy-1",
                "-T",
                "attempts=3",
            ],
            server,
        )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    (path,) = (tmp_path / "logs").glob("*.eval")
    saved = read_eval_log(str(path))
    assert saved.eval.task == "arcmemo/aime"
    assert saved.samples is not None
    assert _values(saved.samples[0])["pass@3"] == 1.0


def _role_model(name: str, server: FakeLLMServer) -> str:
    """A ``--model-role`` value naming an inspect model on a local test server (YAML: a
    model name inspect does not know would otherwise go to the Responses API)."""
    args = f"{{base_url: {server.openai_base_url}, responses_api: false}}"
    return f"{{model: openai/{name}, model_args: {args}}}"


@pytest.mark.slow  # the inspect command's start-up: 10-30 s
@needs_inspect_cli
def test_inspect_cli_model_roles_select_and_abstract(tmp_path: Path, memory: Path) -> None:
    """``--model-role select=...`` and ``--model-role abstract=...`` on inspect's command
    line: the llm selector's request goes to the select role's model, the online memory
    write to the abstract role's (a second server), solving to ``--model``."""
    grown = tmp_path / "grown.json"
    with (
        scripted_server(SCRIPTS / "arc_plan.py") as server,
        scripted_server(FIXTURES / "loop" / "run_abstraction.yaml") as writer,
    ):
        _answers_selection(server)
        done = _inspect_cli(
            tmp_path,
            [
                "arcmemo/arc_agi_1",
                "-T",
                f"data={ARC_DIR}",
                "-T",
                "tasks=66e6c45b",
                "-T",
                f"memory={memory}",
                "-T",
                f"memory_out={grown}",
                "-T",
                "update=online",
                "-T",
                "select=llm",
                "-T",
                "attempts=1",
                "-T",
                "feedback_rounds=0",
                "-T",
                f"out={tmp_path / 'run'}",
                "--model-role",
                f"select={_role_model('select-model', server)}",
                "--model-role",
                f"abstract={_role_model('abstract-model', writer)}",
            ],
            server,
        )
        asked = [(r.body["model"], SELECT_PROMPT in json.dumps(r.body)) for r in server.requests]
        written = [(r.body["model"], json.dumps(r.body)) for r in writer.requests]
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert asked == [("select-model", True), ("local-model", False)]
    assert written and {model for model, _ in written} == {"abstract-model"}
    assert any("Abstract the reusable concepts" in body for _, body in written)
    assert "move center to corners" in {c.name for c in Memory.load(grown).concepts}
    (path,) = (tmp_path / "logs").glob("*.eval")
    saved = read_eval_log(str(path))
    assert saved.samples is not None
    assert _values(saved.samples[0])["score"] == 1.0
