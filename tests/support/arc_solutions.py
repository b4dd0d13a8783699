"""Programs that solve real ARC-AGI-1 evaluation tasks (CORNERS: 66e6c45b, MIRROR_TILES: 00576224,
QUADRANTS: 0c786b71) and the concept the scripted loop model writes for the first."""

from __future__ import annotations

from tests.support.scripted_models import loop_model

lm = loop_model()

CORNERS = """
def transform(grid):
    out = np.zeros_like(grid)
    out[[0, 0, -1, -1], [0, -1, 0, -1]] = grid[[1, 1, 2, 2], [1, 2, 1, 2]]
    return out
"""


MIRROR_TILES = """
def transform(grid):
    row = np.hstack([grid] * 3)
    flipped = np.hstack([grid[:, ::-1]] * 3)
    return np.vstack([row, flipped, row])
"""


QUADRANTS = """
def transform(grid):
    turned = grid[::-1, ::-1]
    top = np.hstack([turned, turned[:, ::-1]])
    return np.vstack([top, top[::-1]])
"""


CORNERS_CONCEPT = lm.yaml_block(
    """
- name: move center to corners
  kind: routine
  routine_subtype: grid manipulation
  description: move the cells of a centered block to the corners of the grid
  parameters:
    - name: grid
      type: grid
  output_type: grid
  cues: [a small block sits in the middle of an empty grid]
  implementation: [copy each center cell to its nearest corner and clear the center]
"""
)
