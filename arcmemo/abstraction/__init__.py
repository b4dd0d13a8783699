"""Memory write: abstractors registered by memory format (ps, oe, cheatsheet)."""

from arcmemo.abstraction.base import ABSTRACTORS, Abstractor
from arcmemo.abstraction.outcome import AbstractionOutcome
from arcmemo.core.records import SolvedItem

__all__ = ["ABSTRACTORS", "AbstractionOutcome", "Abstractor", "SolvedItem"]
