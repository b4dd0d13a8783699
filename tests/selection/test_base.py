"""The selector interface: the client a selector calls comes from the role mapping, and a
selector written for the older ``select(..., model=)`` is adapted by the registry."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from arcmemo.core.records import Selection
from arcmemo.core.roles import AUX, SELECT, SOLVER
from arcmemo.memory.schema import Memory
from arcmemo.selection import SELECTORS, Selector
from arcmemo.selection.simple import AllSelector

# Stand-ins for clients: the selector only passes them on.
SOLVER_CLIENT: Any = object()
AUX_CLIENT: Any = object()
SELECT_CLIENT: Any = object()


class OldStyle(Selector):
    """Records the model it is given (written for select(..., model=))."""

    seen: ClassVar[list[Any]] = []

    def __init__(self, options: Any = None) -> None:
        pass

    async def select(  # type: ignore[override]
        self,
        memory: Memory,
        problem: str,
        *,
        task_id: str,
        model: Any,
        previous_attempt: str | None = None,
    ) -> Selection:
        self.seen.append((model, previous_attempt))
        return Selection(selector=self.name, selected=[task_id])


@pytest.fixture
def old_style() -> Iterator[type[OldStyle]]:
    SELECTORS.register("test-old-style")(OldStyle)
    OldStyle.seen = []
    yield OldStyle
    SELECTORS.unregister("test-old-style")


def test_a_selector_written_for_model_is_adapted_with_a_deprecation_warning(
    old_style: type[OldStyle],
) -> None:
    with pytest.warns(DeprecationWarning, match="test-old-style.*model=.*clients="):
        selector: Selector = SELECTORS.create("test-old-style")
    memory = Memory()
    picked = asyncio.run(
        selector.select(
            memory,
            "p",
            task_id="t1",
            clients={SOLVER: SOLVER_CLIENT, SELECT: SELECT_CLIENT},
            previous_attempt="earlier",
        )
    )
    assert picked.selected == ["t1"]
    # The select role's client, else its fallback's (aux, then the solver), else none.
    asyncio.run(selector.select(memory, "p", task_id="t2", clients={SOLVER: SOLVER_CLIENT}))
    asyncio.run(selector.select(memory, "p", task_id="t3", clients={}))
    assert old_style.seen == [(SELECT_CLIENT, "earlier"), (SOLVER_CLIENT, None), (None, None)]
    # Only the instance is adapted: the class stays as its author wrote it.
    assert "select" not in vars(OldStyle()) and "select" in vars(selector)
    assert type(selector) is OldStyle


def test_a_current_selector_is_built_as_it_is() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        selector = SELECTORS.create("all")
    assert type(selector) is AllSelector and "select" not in vars(selector)


def test_the_client_a_selector_calls_is_the_select_roles_else_its_fallbacks() -> None:
    selector = AllSelector()
    given = {SOLVER: SOLVER_CLIENT}
    assert selector.client(given) is SOLVER_CLIENT
    assert selector.client({**given, AUX: AUX_CLIENT}) is AUX_CLIENT
    assert selector.client({**given, AUX: AUX_CLIENT, SELECT: SELECT_CLIENT}) is SELECT_CLIENT
    with pytest.raises(ValueError, match="the all selector needs a model \\(the select role's\\)"):
        selector.client({})
