"""The cyclic collector is paused while a memory is built or rendered, and only then, and only
where the host allowed it (collector_pauses; the arcmemo command does)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from arcmemo.core.bulk import collector_pauses, lasting, paused_gc
from arcmemo.memory.schema import Memory
from arcmemo.memory.synthetic import synthetic_memory


@pytest.fixture
def allowed() -> Iterator[None]:
    with collector_pauses():
        yield


def test_without_permission_nothing_touches_the_collector() -> None:
    with paused_gc():
        assert gc.isenabled()
    with lasting(_Held) as held:
        assert gc.isenabled() and gc.get_freeze_count() == 0 and _walked(held)


@pytest.mark.usefixtures("allowed")
def test_pauses_nest_and_restore_the_collectors_state() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


@pytest.mark.usefixtures("allowed")
def test_a_failing_block_still_resumes_the_collector() -> None:
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("boom")
    assert gc.isenabled()


@pytest.mark.usefixtures("allowed")
def test_loading_and_rendering_run_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.json"
    synthetic_memory(30).save(path)
    seen: list[bool] = []
    validate = Memory.model_validate.__func__  # type: ignore[attr-defined]

    def watching(cls: type[Memory], *args: object, **kwargs: object) -> Memory:
        seen.append(gc.isenabled())
        return validate(cls, *args, **kwargs)

    monkeypatch.setattr(Memory, "model_validate", classmethod(watching))
    memory = Memory.load(path)
    assert seen == [False] and gc.isenabled()
    from arcmemo.memory import render

    build = render._build_block
    during: list[bool] = []

    def block(*args: object) -> str:
        during.append(gc.isenabled())
        return build(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(render, "_build_block", block)
    memory.render("full")
    assert during and not any(during) and gc.isenabled()


class _Held:
    """An object to find (or not) among those the collector walks."""


def _walked(thing: object) -> bool:
    return any(o is thing for o in gc.get_objects())


@pytest.mark.usefixtures("allowed")
def test_what_lasting_builds_is_left_out_of_collections_until_the_last_block_ends() -> None:
    with lasting(_Held) as outer:
        assert gc.isenabled() and not _walked(outer)
        with lasting(_Held) as inner:
            assert not _walked(inner)
        assert not _walked(outer) and not _walked(inner)  # the outer block still holds
    assert gc.get_freeze_count() == 0 and _walked(outer) and _walked(inner)


@pytest.mark.usefixtures("allowed")
def test_a_failing_build_freezes_nothing() -> None:
    def broken() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError), lasting(broken):
        pass
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_memory_command_keeps_its_memory_out_of_collections_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from arcmemo.cli.main import cli

    path = tmp_path / "memory.json"
    synthetic_memory(30).save(path)
    walked: list[bool] = []
    render = Memory.render

    def watching(self: Memory, *args: object, **kwargs: object) -> str:
        walked.append(_walked(self))
        return render(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Memory, "render", watching)
    result = CliRunner().invoke(cli, ["memory", "stats", str(path)])
    assert result.exit_code == 0, result.output
    assert walked and not any(walked)
    assert gc.get_freeze_count() == 0  # thawed when the command ended
