"""Memory read: selectors registered by name (``--select``)."""

from arcmemo.selection.base import SELECTORS, Selector

__all__ = ["SELECTORS", "Selector"]
