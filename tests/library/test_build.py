"""Building the library from the fixture programs: dedupe, naming, tests, concepts."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn, cast

from arcmemo.library import (
    BuildReport,
    CallCache,
    build_from_traces,
    library_source,
    memory_functions,
    run_recorded_tests,
    trace_programs,
)
from arcmemo.library.build import PROPOSED_AUTHOR, build_library
from arcmemo.memory.schema import Memory
from arcmemo.memory.store import dump_memory, parse_memory
from arcmemo.sandbox import Sandbox
from tests.support.library_programs import ENTRY_POINTS, pairs, programs, seeded_memory


def test_the_same_code_in_two_programs_is_one_function(built: tuple[Memory, BuildReport]) -> None:
    memory, report = built
    functions = memory_functions(memory)
    assert report.helpers == 11
    # crop (inlined twice) and paint / recolor (the same code under other names).
    assert report.candidates == 9
    assert functions["crop"].sources == ["aaaa0001", "aaaa0002"]
    assert functions["paint"].sources == ["aaaa0001", "aaaa0002"]
    assert report.names["aaaa0002"]["recolor"] == "paint"
    assert {c.task_id for c in functions["paint"].tests} == {"aaaa0001", "aaaa0002"}


def test_the_same_behaviour_written_twice_is_one_function(
    built: tuple[Memory, BuildReport],
) -> None:
    memory, report = built
    assert report.merged_by_behaviour == 1
    assert report.names["aaaa0003"]["dominant"] == "most_common"
    assert memory_functions(memory)["most_common"].sources == ["aaaa0002", "aaaa0003"]


def test_another_function_of_a_taken_name_gets_its_task_and_callers_follow(
    built: tuple[Memory, BuildReport],
) -> None:
    memory, report = built
    functions = memory_functions(memory)
    assert report.names["aaaa0003"]["crop"] == "crop_aaaa0003"
    assert "def crop_aaaa0003(grid):" in functions["crop_aaaa0003"].source
    assert "return crop_aaaa0003(grid).T.copy()" in functions["corner"].source
    # A function calling another library function names it, and carries its statements.
    assert "crop(grid)" in functions["crop_and_paint"].source
    assert "class Color" in functions["crop_and_paint"].source


def test_only_functions_whose_tests_pass_standalone_are_kept(
    built: tuple[Memory, BuildReport], bwrap: Sandbox
) -> None:
    memory, report = built
    functions = memory_functions(memory)
    assert "shifted" not in functions  # it reads state the program set
    assert "do not reproduce" in report.dropped["aaaa0003:shifted"]
    assert "never_called" not in functions  # no recorded call, and nothing calls it
    assert all(f.tests for f in functions.values())
    assert report.tests == report.tests_passed == sum(len(f.tests) for f in functions.values())
    results = run_recorded_tests(memory, bwrap)
    assert all(r.ok for r in results) and sum(r.passed for r in results) == report.tests


def test_functions_join_the_concept_their_name_names_or_a_proposed_one(
    built: tuple[Memory, BuildReport],
) -> None:
    memory, report = built
    crop_concept = memory.find("crop to content")
    assert crop_concept is not None
    assert [f.name for f in crop_concept.functions] == ["crop", "crop_aaaa0003"]
    proposed = memory.find("most common")
    assert proposed is not None and proposed.kind == "routine"
    assert PROPOSED_AUTHOR in proposed.provenance.authors
    assert proposed.routine_subtype == "intermediate"
    assert report.proposed >= 1
    # The memory saves and loads with its functions.
    loaded = parse_memory(dump_memory(memory), Path("memory.json"))
    assert memory_functions(loaded).keys() == memory_functions(memory).keys()


def test_the_library_module_runs_and_leaves_a_task_its_own_functions_out(
    built: tuple[Memory, BuildReport],
) -> None:
    memory, _ = built
    everything = library_source(memory)
    namespace: dict[str, object] = {}
    exec(everything, namespace)
    assert {"crop", "paint", "most_common", "corner"} <= namespace.keys()
    guarded = library_source(memory, ["aaaa0003"])
    assert "def most_common" not in guarded  # came from aaaa0002 and aaaa0003
    assert "def corner" not in guarded and "def crop_aaaa0003" not in guarded
    assert "def crop(" in guarded and "def paint(" in guarded


def test_building_again_extends_the_functions_instead_of_copying_them(bwrap: Sandbox) -> None:
    memory = Memory()
    only_first = {"aaaa0001": programs()["aaaa0001"]}
    first = build_library(only_first, pairs(), memory, bwrap, entry_points=ENTRY_POINTS)
    assert first.functions == 3
    assert memory_functions(memory)["crop"].sources == ["aaaa0001"]
    again = build_library(programs(), pairs(), memory, bwrap, entry_points=ENTRY_POINTS)
    functions = memory_functions(memory)
    assert again.extended == 3  # crop, paint and crop_and_paint
    assert again.functions == 3  # most_common, crop_aaaa0003, corner
    assert len(functions) == 6
    assert functions["crop"].sources == ["aaaa0001", "aaaa0002"]
    assert {c.task_id for c in functions["crop"].tests} == {"aaaa0001", "aaaa0002"}
    assert again.names["aaaa0002"]["recolor"] == "paint"
    assert all(r.ok for r in run_recorded_tests(memory, bwrap))
    unchanged = memory.model_dump_json()
    build_library(programs(), pairs(), memory, bwrap, entry_points=ENTRY_POINTS)
    assert len(memory_functions(memory)) == 6
    assert memory.model_dump_json().count('"name":"crop"') == unchanged.count('"name":"crop"')


def test_a_function_joins_the_concept_of_its_name_first() -> None:
    from arcmemo.library.build import BuildReport as Report
    from arcmemo.library.build import _attach
    from arcmemo.memory.schema import Concept, LibraryFunction

    memory = Memory()
    memory.add(Concept(name="grid", kind="structure"))
    memory.add(Concept(name="crop grid to content", kind="routine"))
    memory.add(Concept(name="crop", kind="routine"))
    report = Report()

    def attach(name: str) -> str:
        function = LibraryFunction(name=name, source=f"def {name}():\n    return 0\n")
        _attach(memory, function, report)
        return next(c.name for c in memory.concepts if function in c.functions)

    assert attach("crop") == "crop"  # its name, though another shares the word
    assert attach("crop_grid") == "crop grid to content"  # 2 of 3 words
    assert attach("grid") == "grid routine"  # the structure keeps its name
    assert attach("flood_fill") == "flood fill"
    assert report.attached == 2 and report.proposed == 2


class _NoSandbox:
    """A sandbox that must not be used."""

    def run(self, *args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("the sandbox was asked to run a program")


def test_a_build_from_cached_traces_of_a_subset_is_that_subset_s_build(bwrap: Sandbox) -> None:
    """Leave-one-out builds trace every program once and build each fold from the traces
    of the other programs: exactly the library a build of those programs gives; a call
    cache shared by the folds runs each standalone call once."""
    everything = programs()
    traces = trace_programs(everything, pairs(), bwrap, entry_points=ENTRY_POINTS)
    assert set(traces) == set(everything)
    others = {task: source for task, source in everything.items() if task != "aaaa0001"}
    direct = seeded_memory()
    direct_report = build_library(others, pairs(), direct, bwrap, entry_points=ENTRY_POINTS)
    cache = CallCache()
    fold = seeded_memory()
    fold_report = build_from_traces(
        others, traces, fold, bwrap, entry_points=ENTRY_POINTS, cache=cache
    )
    assert memory_functions(fold) == memory_functions(direct)
    assert fold_report.names == direct_report.names
    assert fold_report.model_dump() == direct_report.model_dump()
    # aaaa0001's traces do not leak into the fold: crop keeps aaaa0002's calls alone.
    crop = memory_functions(fold)["crop"]
    assert crop.sources == ["aaaa0002"]
    assert {call.task_id for call in crop.tests} == {"aaaa0002"}
    assert cache.misses > 0
    misses = cache.misses
    again = seeded_memory()
    build_from_traces(
        others, traces, again, cast(Sandbox, _NoSandbox()), entry_points=ENTRY_POINTS, cache=cache
    )
    assert cache.misses == misses
    assert memory_functions(again) == memory_functions(direct)
