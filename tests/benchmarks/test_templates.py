"""A benchmark names the prompt templates it renders; registering it checks they exist."""

from __future__ import annotations

from typing import Any

import pytest

from arcmemo.benchmarks.base import BENCHMARKS, Benchmark
from arcmemo.core.registry import RegistryError


class Unwritten(Benchmark[Any]):
    """A benchmark whose prompt folder was never written (registered, never built)."""

    name = "toy-unwritten"
    domain = "toy"
    templates = ("aime/system", "toy/solve")


def test_a_missing_template_refuses_registration_in_one_line() -> None:
    with pytest.raises(RegistryError) as refused:
        BENCHMARKS.register("toy-unwritten")(Unwritten)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("benchmark 'toy-unwritten' (")
    assert message.endswith("Unwritten): its prompt template prompts/toy/solve.j2 does not exist")
    assert "toy-unwritten" not in BENCHMARKS.names()


def test_templates_that_exist_register() -> None:
    class Written(Unwritten):
        templates = ("aime/system", "aime/solve")

    try:
        BENCHMARKS.register("toy-written")(Written)
        assert BENCHMARKS.get("toy-written").cls is Written
    finally:
        BENCHMARKS.unregister("toy-written")


@pytest.mark.parametrize("name", ["arc-agi-1", "arc-agi-2", "aime"])
def test_the_built_in_benchmarks_name_their_templates(name: str) -> None:
    cls = BENCHMARKS.get(name).cls
    assert f"{cls.domain}/solve" in cls.templates and f"{cls.domain}/system" in cls.templates
