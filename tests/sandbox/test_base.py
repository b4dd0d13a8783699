import pytest

from arcmemo.sandbox import CallResult, Sandbox, SandboxLimits, get_sandbox, register_sandbox
from arcmemo.sandbox.local import LocalSandbox


class _Echo(Sandbox):
    """Returns its arguments; lets run_transform's validation be tested without processes."""

    def _execute(self, source, function, args_list, limits, *, arc_transform):
        return [CallResult(ok=True, value=args[0]) for args in args_list]


def test_get_sandbox_builds_registered_implementations() -> None:
    box = get_sandbox("local", max_workers=1)
    try:
        assert isinstance(box, LocalSandbox)
    finally:
        box.close()
    with pytest.raises(KeyError, match="unknown sandbox 'nope'"):
        get_sandbox("nope")


def test_register_sandbox_refuses_a_second_implementation_under_one_name() -> None:
    register_sandbox("echo-test")(_Echo)
    assert isinstance(get_sandbox("echo-test"), _Echo)
    with pytest.raises(ValueError, match="already registered"):
        register_sandbox("echo-test")(LocalSandbox)


def test_run_transform_validates_what_the_implementation_returns() -> None:
    results = _Echo().run_transform("", [[[1, 2]], [[1, 12]]])
    assert results[0].ok and results[0].value == [[1, 2]]
    assert results[1].error_kind == "invalid_output"
    assert results[1].value == [[1, 12]]  # what the program returned, for feedback


def test_empty_inputs_run_nothing() -> None:
    assert _Echo().call("", "f", []) == []
    assert _Echo().run_transform("", []) == []


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        SandboxLimits(timeout_s=0)
