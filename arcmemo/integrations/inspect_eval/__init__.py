"""arcmemo as an inspect_ai evaluation (the ``arcmemo[inspect]`` extra).

``inspect eval arcmemo/arc_agi_1 --model openai/NAME`` runs arcmemo's own loop (select,
solve, verify in the sandbox, retry with feedback) on inspect's model, and scores each
sample with the benchmark's own metrics. :mod:`.tasks` holds the registered tasks (the
``inspect_ai`` entry point loads :mod:`._registry`), :mod:`.solver` the loop,
:mod:`.scorer` the metrics and :mod:`.model` arcmemo's model interface over inspect's.
Nothing here is imported by the rest of arcmemo, so inspect_ai stays optional.
"""
