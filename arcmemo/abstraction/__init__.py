"""Memory write: abstractors registered by memory format (ps, oe, cheatsheet)."""

from arcmemo.abstraction import cheatsheet, oe, ps  # noqa: F401  (registers the formats)
from arcmemo.abstraction.base import (
    AbstractionOutcome,
    Abstractor,
    SolvedItem,
    create_abstractor,
    register_abstractor,
)

__all__ = [
    "AbstractionOutcome",
    "Abstractor",
    "SolvedItem",
    "create_abstractor",
    "register_abstractor",
]
