"""The roles a run gives a model to, which role each falls back to, and which role answers
each stage of a run.

A run config holds one :class:`~arcmemo.run.roles.ModelRole` per role (``roles``); a role
without a model of its own calls the model of the role it falls back to
(:data:`FALLBACK`), so one model may serve every role. Usage is counted per role
(:func:`role_of`), in the live progress and in ``summary.json``. A new role is a name here,
its stages in :data:`STAGE_ROLES`, and the code that uses its client: below the session,
the runner, the task loop, the continual updater, the selectors and the memory formats take
one mapping of role to client and pick the role they call (:func:`for_role`: a role left
out calls its fallback's).
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


def for_role(given: Mapping[str, T], role: str) -> T | None:
    """``role``'s entry of ``given`` (a client per role, say): its own, else the one of the
    role it falls back to, and so on; None when no role on that chain is given."""
    if role not in FALLBACK:
        raise ValueError(f"unknown model role {role!r}")
    chain: str | None = role
    while chain is not None and chain not in given:
        chain = FALLBACK[chain]
    return None if chain is None else given[chain]


def with_fallbacks(given: Mapping[str, T]) -> dict[str, T]:
    """Every role's entry of ``given`` (:func:`for_role`). The solver's must be given."""
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
