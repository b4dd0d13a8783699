"""Write signals registered by name (``--write-signal``): which solutions a run may write
into its memory."""

from arcmemo.signals.base import WRITE_SIGNALS, WriteSignal

__all__ = ["WRITE_SIGNALS", "WriteSignal"]
