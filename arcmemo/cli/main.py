"""The ``arcmemo`` command group.

Subcommands are imported only when used, so ``arcmemo --help`` stays fast and a
subcommand's heavy imports never slow down the others.
"""

from __future__ import annotations

import importlib

import click

from arcmemo.core.bulk import collector_pauses

# name -> "module:attribute" of a click command or group
_COMMANDS: dict[str, str] = {
    "batches": "arcmemo.cli.batches:batches",
    "memory": "arcmemo.cli.memory:memory",
    "models": "arcmemo.cli.models:models",
    "run": "arcmemo.cli.run:run",
    "abstract": "arcmemo.cli.abstract:abstract",
    "select": "arcmemo.cli.select:select",
    "bench": "arcmemo.cli.bench:bench",
    "data": "arcmemo.cli.data:data",
    "demo": "arcmemo.cli.demo:demo",
    "puzzles": "arcmemo.cli.puzzles:puzzles",
    "report": "arcmemo.cli.report:report",
    "seeds": "arcmemo.cli.seeds:seeds",
    "export": "arcmemo.cli.export:export",
    "table": "arcmemo.cli.table:table",
    "train": "arcmemo.cli.train:train",
    "merge": "arcmemo.cli.merge:merge",
    "library": "arcmemo.cli.library:library",
    "mcp": "arcmemo.cli.mcp:mcp",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        return getattr(importlib.import_module(module_name), attribute)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="arcmemo")
def cli() -> None:
    """ArcMemo: an LLM agent that keeps learning at test time through a concept memory."""
    # The command owns its process: big memories and runs load and render with the
    # collector paused (arcmemo.core.bulk), which library calls alone never do.
    click.get_current_context().with_resource(collector_pauses())
