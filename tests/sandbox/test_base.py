"""The interface, its records and the registry; no worker processes except where named."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from arcmemo.core.registry import RegistryError
from arcmemo.sandbox import (
    SANDBOXES,
    CallResult,
    Program,
    Sandbox,
    SandboxLimits,
    SandboxOptions,
    SandboxUnavailableError,
)
from arcmemo.sandbox._pool import parse_reply, parse_result
from arcmemo.sandbox.base import MAX_ERROR_CHARS, MAX_STDOUT_CHARS


class _Echo(Sandbox):
    """Returns its arguments; lets the base class be tested without processes."""

    isolation = "process"

    def _execute(self, program, inputs, limits):  # type: ignore[no-untyped-def]
        return [CallResult(ok=True, value=[args, limits.timeout_s]) for args in inputs]


def test_program_is_frozen_and_strict() -> None:
    program = Program(source="x = 1", entry="f")
    assert program.harness == "" and program.bindings == {}
    with pytest.raises(ValidationError):
        program.source = "y"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Program(source="", entry="f", extra=1)  # type: ignore[call-arg]


def test_run_uses_the_options_limits_unless_given_and_runs_nothing_for_no_inputs() -> None:
    box = _Echo(SandboxOptions(limits=SandboxLimits(timeout_s=3)))
    program = Program(source="", entry="f")
    assert box.run(program, []) == []
    assert box.run(program, [[1]])[0].value == [[1], 3]
    assert box.run(program, [[1]], limits=SandboxLimits(timeout_s=5))[0].value == [[1], 5]


def test_registry_knows_both_kinds_and_their_isolation() -> None:
    assert {"bwrap", "process"} <= set(SANDBOXES.names())
    assert SANDBOXES.get("bwrap").cls.isolation == "kernel"
    assert SANDBOXES.get("process").cls.isolation == "process"
    spec = SANDBOXES.spec("bwrap", {"max_workers": 3})
    assert spec.options["max_workers"] == 3 and spec.options["audit_hook"] is True
    assert "numpy" in spec.options["packages"] and spec.options["limits"]["disk_mb"] == 64
    with pytest.raises(RegistryError, match="unknown sandbox"):
        SANDBOXES.get("local")
    with pytest.raises(RegistryError, match="audit_hook"):
        SANDBOXES.spec("process", {"audit_hook": False})  # the hook is all process has


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        SandboxLimits(timeout_s=0)
    with pytest.raises(ValueError):
        SandboxLimits(max_output_bytes=10**6)  # more than a result may carry


def test_call_results_clean_and_cap_their_text_whatever_made_them() -> None:
    result = CallResult(ok=False, error="e" * 10**6 + "\ud800", stdout="\udcff" + "o" * 10**6)
    assert len(result.error or "") <= MAX_ERROR_CHARS
    assert len(result.stdout) <= MAX_STDOUT_CHARS
    assert (result.error or "").endswith("\\ud800")
    result.model_dump_json().encode("utf-8")


def test_call_results_hold_no_terminal_control_sequences() -> None:
    error = "\x1b]0;pwned\x1b\\\x1b[2J\x9b2Jboom\r\n"
    result = CallResult(ok=False, error=error, stdout="\x07a\tb")
    assert result.error == "]0;pwned\\[2J2Jboom\n"
    assert result.stdout == "a\tb"


@pytest.mark.parametrize(
    "raw",
    [
        {"ok": "yes"},
        {"ok": True, "error_kind": "exception"},
        {"ok": False, "error_kind": "pwned"},
        {"ok": False, "error_kind": "exception", "duration_s": -1.0},
        {"ok": True, "surprise": 1},
        {"ok": False, "error_kind": "exception", "error": 12},
        None,
        [1, 2],
    ],
)
def test_an_invalid_result_from_a_worker_is_a_crashed_result(raw: object) -> None:
    result = parse_result(raw)
    assert result.error_kind == "crashed" and not result.ok
    assert "invalid result" in (result.error or "")


def test_a_valid_result_from_a_worker_is_cleaned() -> None:
    result = parse_result({"ok": True, "value": ["\ud800"], "stdout": "x" * 10**5})
    assert result.ok and result.value == ["\\ud800"] and len(result.stdout) <= MAX_STDOUT_CHARS
    huge = parse_result({"ok": False, "error_kind": "exception", "error": "x" * 40_000_000})
    assert len(huge.error or "") <= MAX_ERROR_CHARS


def test_a_reply_of_the_wrong_shape_is_refused_as_a_whole() -> None:
    assert parse_reply({"results": [{"ok": True}]}, 2) is None
    assert parse_reply({"results": "x"}, 1) is None
    assert parse_reply([], 1) is None
    assert parse_reply({"results": [{"ok": True, "value": 1}]}, 1) == [CallResult(ok=True, value=1)]


def _fake_bwrap(folder: Path, stderr: str) -> None:
    script = folder / "bwrap"
    script.write_text(f"#!/bin/sh\necho '{stderr}' >&2\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_missing_bubblewrap_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailableError) as error:
        SANDBOXES.create("bwrap")
    message = str(error.value)
    assert "apt-get install bubblewrap" in message and "--sandbox process" in message
    assert "\n" not in message


def test_disabled_user_namespaces_are_named_never_silently_downgraded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_bwrap(tmp_path, "bwrap: No permissions to creating new namespace")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(SandboxUnavailableError) as error:
        SANDBOXES.create("bwrap")
    message = str(error.value)
    assert "kernel.unprivileged_userns_clone=1" in message
    assert "apparmor_restrict_unprivileged_userns=0" in message
    assert "--sandbox process" in message


def test_the_process_sandbox_warns_what_it_gives_up(capsys: pytest.CaptureFixture[str]) -> None:
    box = SANDBOXES.create("process")
    try:
        assert box.isolation == "process"
        warning = capsys.readouterr().err
        assert "WITHOUT kernel isolation" in warning and warning.count("\n") == 1
    finally:
        box.close()
