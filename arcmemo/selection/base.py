"""The selector interface: which memory entries a task's solve prompt shows in full."""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, ClassVar

from arcmemo.benchmarks.base import Selection
from arcmemo.memory.ontology import Memory
from arcmemo.models.client import ModelClient


class Selector(abc.ABC):
    """Picks memory entries for one task."""

    name: ClassVar[str]

    @abc.abstractmethod
    async def select(
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        model: ModelClient | None,
        previous_attempt: str | None = None,
    ) -> Selection:
        """Choose entries of ``memory`` for ``problem`` (``previous_attempt`` on retries)."""

    def preview(self, memory: Memory, problem: str) -> str | None:
        """The prompt a model-based selector would send (dry runs); None for the others."""
        return None

    def render(self, memory: Memory, selection: Selection) -> str:
        """The concepts section of the solve prompt for ``selection``."""
        return memory.render("solve", selected=selection.selected)


_REGISTRY: dict[str, Callable[..., Selector]] = {}


def register_selector(name: str) -> Callable[[Callable[..., Selector]], Callable[..., Selector]]:
    """Make a selector available as ``--select NAME``."""

    def decorate(factory: Callable[..., Selector]) -> Callable[..., Selector]:
        _REGISTRY[name] = factory
        return factory

    return decorate


def create_selector(name: str, **options: Any) -> Selector:
    """Build the selector registered as ``name``."""
    import arcmemo.selection  # noqa: F401  (registers the built-in selectors)

    if name not in _REGISTRY:
        raise KeyError(f"unknown selector {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](**options)


def selector_names() -> list[str]:
    import arcmemo.selection  # noqa: F401

    return sorted(_REGISTRY)
