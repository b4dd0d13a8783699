"""``library refactor --model``: the model proposes, execution keeps what stays identical.

Three programs each crop the grid to its colored cells inline. A scripted model proposes
a correct shared ``crop`` (two programs rewritten to import it) and an off-by-one
``crop_short`` (the third program): the first two rewrites and ``crop`` are kept, with
recorded tests that pass standalone; the third rewrite is rejected naming the input whose
output differs, and ``crop_short`` is not kept.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arcmemo.library.calls import run_recorded_tests
from arcmemo.library.model_refactor import groups_of, parse_proposal, refactor_with_model
from arcmemo.memory.schema import Memory
from arcmemo.models.client import ModelClient
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.models.structured import OutputError
from arcmemo.sandbox import SANDBOXES, SandboxUnavailableError

CROP = """
    rows = np.nonzero(np.any(grid != 0, axis=1))[0]
    cols = np.nonzero(np.any(grid != 0, axis=0))[0]
    part = grid[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
"""
PROGRAMS = {
    "t1": f"import numpy as np\n\ndef transform(grid):\n    grid = np.array(grid)\n{CROP}"
    "    return np.fliplr(part)\n",
    "t2": f"import numpy as np\n\ndef transform(grid):\n    grid = np.array(grid)\n{CROP}"
    "    return np.flipud(part)\n",
    "t3": f"import numpy as np\n\ndef transform(grid):\n    grid = np.array(grid)\n{CROP}"
    "    return part.T\n",
}
PROPOSAL = '''Here is the shared routine.
<helpers>
```python
import numpy as np

def crop(grid):
    """The smallest box holding every colored cell."""
    grid = np.array(grid)
    rows = np.nonzero(np.any(grid != 0, axis=1))[0]
    cols = np.nonzero(np.any(grid != 0, axis=0))[0]
    return grid[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]

def crop_short(grid):
    """The same box, one row short."""
    grid = np.array(grid)
    rows = np.nonzero(np.any(grid != 0, axis=1))[0]
    cols = np.nonzero(np.any(grid != 0, axis=0))[0]
    return grid[rows[0] : rows[-1], cols[0] : cols[-1] + 1]
```
</helpers>
<program task="t1">
```python
import numpy as np
from arcmemo_library import crop

def transform(grid):
    return np.fliplr(crop(grid))
```
</program>
<program task="t2">
```python
import numpy as np
from arcmemo_library import crop

def transform(grid):
    return np.flipud(crop(grid))
```
</program>
<program task="t3">
```python
from arcmemo_library import crop_short

def transform(grid):
    return crop_short(grid).T
```
</program>
'''


def grid(top: int, left: int, block: list[list[int]]) -> list[list[int]]:
    out = [[0] * 6 for _ in range(6)]
    for r, row in enumerate(block):
        for c, value in enumerate(row):
            out[top + r][left + c] = value
    return out


INPUTS = {
    task: (
        [grid(1, 1, [[1, 2], [3, 4]]), grid(2, 0, [[5, 0, 6], [7, 8, 9]])],
        [grid(0, 3, [[2], [3], [4]])],
    )
    for task in PROGRAMS
}


@pytest.fixture(scope="module")
def sandbox() -> Any:
    try:
        box = SANDBOXES.create("process")
    except SandboxUnavailableError as error:
        pytest.skip(str(error))
    yield box
    box.close()


def test_the_correct_refactoring_is_kept_and_the_changing_one_rejected(
    sandbox: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))
    prompts: list[str] = []

    def answer(messages: list[Any]) -> str:
        prompts.append(messages[0].content)
        return PROPOSAL

    model = ModelClient(ScriptedProvider.from_script(answer, model="refactorer"))
    memory = Memory(domain="arc")
    report, kept = asyncio.run(refactor_with_model(PROGRAMS, INPUTS, memory, sandbox, model))
    (prompt,) = prompts
    assert all(f'<program task="{t}">' in prompt for t in PROGRAMS)
    by_task = {r.task_id: r for r in report.rewrites}
    assert by_task["t1"].kept and by_task["t2"].kept
    assert not by_task["t3"].kept
    assert by_task["t3"].rejected is not None
    assert by_task["t3"].rejected.startswith("train input 1: a different output")
    assert report.functions_kept == ["crop"]
    assert "crop_short" in report.functions_rejected
    assert kept["t1"].startswith("import numpy as np\nfrom arcmemo_library import crop")
    assert kept["t3"] == PROGRAMS["t3"]  # the original stays
    assert report.imports_per_program == {"t1": 1, "t2": 1, "t3": 0}
    assert report.functions_per_program == {"t1": 1, "t2": 1, "t3": 1}
    assert report.tokens_after < report.tokens_before and report.library_tokens > 0
    assert report.model_calls == 1 and report.proposals == 1
    assert report.groups_by == {"similar code": 1} and report.functions_pruned == []
    (concept,) = [c for c in memory.concepts if c.functions]
    (function,) = concept.functions
    assert function.name == "crop" and sorted(function.imported_by) == ["t1", "t2"]
    assert function.tests and all(r.ok for r in run_recorded_tests(memory, sandbox))


def test_an_unusable_proposal_is_refused_with_its_reason() -> None:
    with pytest.raises(OutputError, match="helpers"):
        parse_proposal("no tags at all", ["t1"])
    with pytest.raises(OutputError, match="not one of the programs shown"):
        parse_proposal(PROPOSAL, ["t1", "t2"])
    with pytest.raises(OutputError, match="does not parse"):
        broken = PROPOSAL.replace("return np.flipud", "return np.flipud(")
        parse_proposal(broken, ["t1", "t2", "t3"])


def test_programs_sharing_a_concept_are_grouped_first() -> None:
    from arcmemo.memory.schema import Concept, Provenance

    memory = Memory(domain="arc")
    memory.add(Concept(name="crop", kind="routine", provenance=Provenance(sources=["b", "d"])))
    assert groups_of(memory, ["a", "b", "c", "d", "e"], size=4) == [
        ("crop", ["b", "d"], "concept"),
        ("", ["a", "c", "e"], "order"),
    ]


def test_programs_with_alike_code_are_grouped_before_the_rest() -> None:
    memory = Memory(domain="arc")
    other = "def transform(grid):\n    return [[c * 2 for c in row] for row in grid]\n"
    lone = "def transform(grid):\n    return grid[::-1]\n"
    sources = {"a": PROGRAMS["t1"], "b": other, "c": PROGRAMS["t3"], "d": lone, "e": other}
    groups = groups_of(memory, list(sources), size=4, sources=sources)
    assert groups == [
        ("", ["a", "c"], "similar code"),
        ("", ["b", "e"], "similar code"),
    ]


def _task_files(folder: Any) -> None:
    import json

    folder.mkdir()
    for task, (train, test) in INPUTS.items():
        outputs = [run_program(PROGRAMS[task], g) for g in [*train, *test]]
        pairs = [{"input": g, "output": o} for g, o in zip([*train, *test], outputs, strict=True)]
        content = {"train": pairs[: len(train)], "test": pairs[len(train) :]}
        (folder / f"{task}.json").write_text(json.dumps(content), encoding="utf-8")


def run_program(source: str, grid_in: list[list[int]]) -> list[list[int]]:
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # the test's own fixed programs
    result: list[list[int]] = namespace["transform"](grid_in).tolist()
    return result


@pytest.mark.parametrize("flag", ["--model-role=abstract=", "--aux-model=", "--model="])
def test_the_command_takes_the_abstract_roles_model(
    sandbox: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, flag: str
) -> None:
    import json

    from click.testing import CliRunner

    from arcmemo.cli.main import cli

    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))
    programs = tmp_path / "programs"
    programs.mkdir()
    for task, source in PROGRAMS.items():
        (programs / f"{task}.py").write_text(source, encoding="utf-8")
    _task_files(tmp_path / "tasks")
    script = tmp_path / "refactorer.json"
    script.write_text(json.dumps([PROPOSAL]), encoding="utf-8")
    memory = tmp_path / "memory.json"
    memory.write_text(Memory(domain="arc").model_dump_json(), encoding="utf-8")
    out = tmp_path / "out"
    args = ["library", "refactor", "--from-programs", str(programs), "--memory", str(memory)]
    args += ["--out", str(out), "--data", str(tmp_path / "tasks"), f"{flag}scripted:{script}"]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "rejected t3: train input 1: a different output" in result.output
    assert "rewrites kept 2, rejected 1; functions kept 1" in result.output
    assert (out / "calls.jsonl").read_text(encoding="utf-8").count("\n") == 1


def test_a_role_model_is_opened_as_a_run_opens_it(tmp_path: Any) -> None:
    from arcmemo.cli.options import open_role_model

    for name in ("solver", "writer", "helper"):
        (tmp_path / f"{name}.json").write_text('["an answer"]', encoding="utf-8")
    solver, writer, helper = (
        f"scripted:{tmp_path / n}.json" for n in ("solver", "writer", "helper")
    )

    def options(**given: Any) -> dict[str, Any]:
        empty: dict[str, Any] = {
            "model": None, "base_url": (), "model_args": (), "temperature": None,
            "max_tokens": None, "concurrency": None, "no_cache": False, "aux_model": None,
            "aux_base_url": (), "aux_model_args": (), "aux_temperature": None,
            "aux_max_tokens": None, "roles": (), "roles_args": (), "endpoints": (),
        }  # fmt: skip
        return {**empty, **given}

    assert open_role_model(options(), "abstract") is None
    own = open_role_model(options(model=solver, roles=(f"abstract={writer}",)), "abstract")
    assert own is not None and own.provider.model == writer.removeprefix("scripted:")
    aux = open_role_model(options(model=solver, aux_model=helper, aux_temperature=0.5), "abstract")
    assert aux is not None and aux.provider.model == helper.removeprefix("scripted:")
    assert aux.defaults.temperature == 0.5


LATER = {
    "t4": f"import numpy as np\n\ndef transform(grid):\n    grid = np.array(grid)\n{CROP}"
    "    return np.rot90(part)\n",
    "t5": "def transform(grid):\n    return [row[::-1] for row in grid]\n",
}


def _proposal(crop: str) -> str:
    return (
        f"<helpers>\n```python\nimport numpy as np\n\n{crop}\n```\n</helpers>\n"
        '<program task="t4">\n```python\nimport numpy as np\nfrom arcmemo_library import crop\n\n'
        "def transform(grid):\n    return np.rot90(crop(grid))\n```\n</program>\n"
    )


# The memory's crop, formatted otherwise and with a comment: the same code.
SAME_CROP = '''def crop(grid):
    """The smallest box holding every colored cell."""
    grid = np.array(grid)  # a copy as an array
    rows = np.nonzero(np.any(grid != 0, axis=1))[0]
    cols = np.nonzero(np.any(grid != 0, axis=0))[0]
    return grid[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
'''
OTHER_CROP = SAME_CROP.replace("grid = np.array(grid)", "grid = np.asarray(grid)")


def _refactored_twice(
    sandbox: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, crop: str
) -> tuple[Memory, Any, dict[str, str]]:
    monkeypatch.setenv("ARCMEMO_CACHE_DIR", str(tmp_path / "cache"))
    memory = Memory(domain="arc")
    first = ModelClient(ScriptedProvider.from_script(lambda _: PROPOSAL, model="first"))
    asyncio.run(refactor_with_model(PROGRAMS, INPUTS, memory, sandbox, first))
    later = ModelClient(ScriptedProvider.from_script(lambda _: _proposal(crop), model="later"))
    inputs = {t: INPUTS["t1"] for t in LATER}
    report, kept = asyncio.run(refactor_with_model(LATER, inputs, memory, sandbox, later))
    return memory, report, kept


def test_a_proposed_function_the_memory_has_is_that_function(
    sandbox: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    memory, report, kept = _refactored_twice(sandbox, monkeypatch, tmp_path, SAME_CROP)
    assert report.functions_reused == ["crop"] and report.functions_kept == []
    assert report.functions_rejected == {}
    assert [r.task_id for r in report.rewrites if r.kept] == ["t4"]  # one importer suffices
    assert "from arcmemo_library import crop" in kept["t4"]
    (concept,) = [c for c in memory.concepts if c.functions]
    (function,) = concept.functions  # no second crop
    assert sorted(function.imported_by) == ["t1", "t2", "t4"]
    assert "t4" in function.sources
    assert any(call.task_id == "t4" for call in function.tests)
    assert "a copy as an array" not in function.source  # the memory's text stays
    assert all(r.ok for r in run_recorded_tests(memory, sandbox))


def test_a_proposed_function_of_that_name_with_other_code_is_refused(
    sandbox: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    memory, report, kept = _refactored_twice(sandbox, monkeypatch, tmp_path, OTHER_CROP)
    assert report.functions_reused == [] and report.functions_kept == []
    assert report.functions_rejected["crop"].endswith("of this name, other code")
    (rewrite,) = report.rewrites
    assert not rewrite.kept and rewrite.rejected == "imports crop, which was not kept"
    assert kept["t4"] == LATER["t4"]
    (function,) = [f for c in memory.concepts for f in c.functions]
    assert sorted(function.imported_by) == ["t1", "t2"]


def test_same_code_compares_syntax_trees() -> None:
    from arcmemo.library.model_refactor import same_code

    source = "import numpy as np\n\n\n" + SAME_CROP.replace("  # a copy as an array", "")
    assert same_code(source, SAME_CROP)
    assert not same_code(source, OTHER_CROP)
    assert not same_code(source, SAME_CROP.replace("def crop", "def crop2"))
    assert not same_code(source, "def crop(:\n")
