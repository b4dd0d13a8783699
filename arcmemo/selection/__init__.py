"""Memory read: selectors registered by name (``--select``)."""

from arcmemo.selection import simple  # noqa: F401  (registers all, none)
from arcmemo.selection.base import Selector, create_selector, register_selector, selector_names

__all__ = ["Selector", "create_selector", "register_selector", "selector_names"]
