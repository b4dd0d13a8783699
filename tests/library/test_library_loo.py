"""experiments/library_loo.py's exact folds on the fixture programs: a held-out program's
functions are found in a library built without it, under the names that library gave them."""

from __future__ import annotations

from arcmemo.library import CallCache, memory_functions, trace_programs
from arcmemo.sandbox import Sandbox
from tests.support.experiment_scripts import experiment_script
from tests.support.library_programs import ENTRY_POINTS, pairs, programs


def test_a_fold_is_built_without_the_held_out_program_and_finds_what_it_used(
    bwrap: Sandbox,
) -> None:
    loo = experiment_script("library_loo")
    everything = programs()
    traces = trace_programs(everything, pairs(), bwrap, entry_points=ENTRY_POINTS)
    cache = CallCache()
    _, whole = loo.build(everything, traces, bwrap, cache, ENTRY_POINTS)
    assert whole.names["aaaa0002"] == {
        "crop": "crop",
        "recolor": "paint",
        "most_common": "most_common",
    }
    others = {task: source for task, source in everything.items() if task != "aaaa0002"}
    memory, fold = loo.build(others, traces, bwrap, cache, ENTRY_POINTS)
    functions = memory_functions(memory)
    assert all("aaaa0002" not in f.sources for f in functions.values())
    # Without aaaa0002, most_common's behaviour is aaaa0003's dominant alone, named so.
    assert fold.names["aaaa0003"]["dominant"] == "dominant"
    assert loo.used_in_fold("aaaa0002", whole, fold) == {"crop", "paint", "dominant"}
    assert loo.used_in_fold("aaaa0002", whole, fold) <= set(functions)
