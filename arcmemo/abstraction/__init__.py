"""Memory write: abstractors registered by memory format (ps, oe, cheatsheet)."""

from arcmemo.abstraction.base import ABSTRACTORS, AbstractionOutcome, Abstractor
from arcmemo.records import SolvedItem

__all__ = ["ABSTRACTORS", "AbstractionOutcome", "Abstractor", "SolvedItem"]
