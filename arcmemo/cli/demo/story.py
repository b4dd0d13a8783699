"""What a demo run did, task by task, told from its run directory and memory file."""

from __future__ import annotations

from pathlib import Path

from arcmemo.core.records import Step, TaskResult
from arcmemo.memory.schema import Memory
from arcmemo.memory.untrusted import display_copy
from arcmemo.sandbox.text import visible_text

INDENT = " " * 12


def results(run_dir: Path) -> list[TaskResult]:
    """The run's task results, in the order they finished."""
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [TaskResult.model_validate_json(line) for line in lines if line.strip()]


def step_line(step: Step) -> str:
    what = "first try" if step.round == 0 else f"feedback round {step.round}"
    passed = sum(check.correct for check in step.checks)
    verdict = "verified" if step.verified else "not verified"
    line = f"{what}: the program passed {passed} of {len(step.checks)} examples ({verdict})"
    if step.correct is not None:
        line += f"; test outputs right: {sum(step.correct)} of {len(step.correct)}"
    return line


def story(run_dir: Path, memory_path: Path) -> list[str]:
    """One block of lines per task: selection, rounds, memory writes, credit (the memory's
    text shown escaped, as every command shows it: :mod:`arcmemo.memory.untrusted`)."""
    memory = display_copy(Memory.load(memory_path))
    names = {concept.id: concept.name for concept in memory.concepts}
    lines: list[str] = []
    for result in results(run_dir):
        task = visible_text(result.task_id)  # as the display copy spells it
        selected = [visible_text(n) for n in result.selection.selected] if result.selection else []
        shown = []
        for name in selected:
            concept = memory.find(name)
            origin = [s for s in concept.provenance.sources if s != "seed"] if concept else []
            written_by = [s for s in origin if s != task]
            shown.append(f"{name} (written from {', '.join(written_by)})" if written_by else name)
        lines.append(f"  {task}  selected: {visible_text(', '.join(shown) or 'nothing', 300)}")
        for attempt in result.attempts:
            for step in attempt.steps:
                lines.append(INDENT + step_line(step))
                if not step.verified and step.round < len(attempt.steps) - 1:
                    lines.append(INDENT + "  -> the failed examples went back as feedback")
        writes = [h for h in memory.history if h.task_id == task]
        if writes:
            done = ", ".join(
                f"{'added' if h.op == 'add' else 'extended'} '{names.get(h.target, h.target)}'"
                for h in writes
            )
            lines.append(INDENT + visible_text(f"memory: {done}", 300))
        else:
            lines.append(INDENT + "memory: nothing written (no verified program)")
        credited = [c.name for c in memory.concepts if task in c.stats.helpful]
        if credited:
            lines.append(
                INDENT
                + visible_text(f"credit: {', '.join(credited)} (the verified program uses it)", 300)
            )
    return lines
