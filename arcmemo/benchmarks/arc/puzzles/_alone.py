"""Trusted harness that applies a reference routine alone (appended to its module).

Never imported by arcmemo:
:func:`arcmemo.benchmarks.arc.puzzles.verify.rival_outputs` reads it as text and calls
:func:`_arcmemo_alone` once per puzzle input. A reference module
(``puzzles/handwritten/<concept id>.py``) may define ``variants(grid)``, the concept applied
alone with each of its natural parameter settings (the same number, in the same order, for
every grid); without it, its ``transform`` is the one rule. The parent validates the grids.
"""

import numpy as _arcmemo_np_a


def _arcmemo_alone(grid: list) -> list:
    namespace = globals()
    variants = namespace.get("variants")
    if callable(variants):
        values = list(variants(_arcmemo_np_a.array(grid)))
    else:
        values = [namespace["transform"](_arcmemo_np_a.array(grid))]
    plain = []
    for value in values:
        try:
            plain.append(_arcmemo_np_a.asarray(value).astype(int).tolist())
        except Exception:
            plain.append(None)
    return plain
