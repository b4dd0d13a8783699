"""Memory read: selectors registered by name (``--select``)."""

from arcmemo.selection import embedding, llm, simple  # noqa: F401  (registers the selectors)
from arcmemo.selection.base import Selector, create_selector, register_selector, selector_names

__all__ = ["Selector", "create_selector", "register_selector", "selector_names"]
