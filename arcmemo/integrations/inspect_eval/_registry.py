"""What inspect's ``inspect_ai`` entry point loads: importing the tasks registers them."""

from arcmemo.integrations.inspect_eval.tasks import aime, arc_agi_1, arc_agi_2

__all__ = ["aime", "arc_agi_1", "arc_agi_2"]
