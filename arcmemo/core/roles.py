"""The roles a run gives a model to, which role each falls back to, and which role answers
each stage of a run.

A run config holds one :class:`~arcmemo.run.roles.ModelRole` per role (``roles``); a role
without a model of its own calls the model of the role it falls back to
(:data:`FALLBACK`), so one model may serve every role. Usage is counted per role
(:func:`role_of`), in the live progress and in ``summary.json``. A new role is a name here,
its stages in :data:`STAGE_ROLES`, and the code that uses its client: below the session,
the runner, the task loop and the continual updater take one mapping of role to client
(:func:`with_fallbacks`) and pick the role they call.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TypeVar

T = TypeVar("T")

SOLVER, AUX, SELECT, ABSTRACT = "solver", "aux", "select", "abstract"

# Each role and the one it falls back to when it names no model: select (choosing the
# memory entries shown) and abstract (writing solutions into memory) fall back to aux,
# aux (every other call: the attribution judge, ...) to the solver, which always has one.
FALLBACK: dict[str, str | None] = {SOLVER: None, AUX: SOLVER, SELECT: AUX, ABSTRACT: AUX}
MODEL_ROLES = tuple(FALLBACK)

# The stages each role answers; any other stage (attribute, ...) is the aux role's.
STAGE_ROLES = {"solve": SOLVER, "retry": SOLVER, "select": SELECT, "abstract": ABSTRACT}


def role_of(stage: str, given: Collection[str] = (SOLVER, AUX)) -> str:
    """The role a call of ``stage`` is counted under: the stage's own role if it is among
    ``given`` (the roles a run names a model for; the solver and aux are always counted
    apart), else the role it falls back to."""
    role = STAGE_ROLES.get(stage, AUX)
    while role not in given and role not in (SOLVER, AUX):
        role = FALLBACK[role] or SOLVER
    return role


def with_fallbacks(given: Mapping[str, T]) -> dict[str, T]:
    """Every role's entry of ``given`` (a client per role, say): its own, else the one of
    the role it falls back to. The solver's must be given."""
    if SOLVER not in given:
        raise ValueError(f"no {SOLVER} among the roles given ({', '.join(given) or 'none'})")
    unknown = set(given) - set(FALLBACK)
    if unknown:
        raise ValueError(f"unknown model role(s) {', '.join(sorted(unknown))}")
    every: dict[str, T] = {}
    for role in MODEL_ROLES:  # each role after the one it falls back to
        fallback = FALLBACK[role]
        every[role] = given[role] if role in given or fallback is None else every[fallback]
    return every
