"""``arcmemo mcp``: serve a memory file to agents over the Model Context Protocol."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from arcmemo.agent.memory import ROLES


def _roles(given: tuple[str, ...]) -> dict[str, str]:
    roles: dict[str, str] = {}
    for item in given:
        role, sep, spec = item.partition("=")
        if not sep or role not in ROLES or ":" not in spec:
            raise click.BadParameter(
                f"{item!r}: expected ROLE=PROVIDER:MODEL with ROLE one of {', '.join(ROLES)}",
                param_hint="--model-role",
            )
        roles[role] = spec
    return roles


@click.command("mcp")
@click.option("--memory", "memory_path", required=True, type=click.Path(path_type=Path),
              help="The memory file served (created on its first write).")  # fmt: skip
@click.option("--model-role", "model_roles", multiple=True, metavar="ROLE=SPEC",
              help="The model of a role: select (the llm selector), abstract (record_solution), "
              "aux (both fall back to it).")  # fmt: skip
@click.option("--select", "selector", default=None,
              help="Selector (default: llm with a select or aux model, else all).")  # fmt: skip
@click.option("--memory-format", default=None, help="ps (default), oe or cheatsheet.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              show_default=True, help="http: streamable HTTP at http://HOST:PORT/mcp.")  # fmt: skip
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
def mcp(
    memory_path: Path,
    model_roles: tuple[str, ...],
    selector: str | None,
    memory_format: str | None,
    transport: str,
    host: str,
    port: int,
) -> None:
    """Serve the memory FILE as MCP tools (select, search, get, record a solution, record an
    outcome, stats) and resources (concepts, memory views). Needs the mcp extra:
    pip install 'arcmemo[mcp]'."""
    try:
        from arcmemo.agent.mcp_server import build_server
    except ModuleNotFoundError as error:
        raise click.ClickException(
            f"arcmemo mcp needs the mcp extra: pip install 'arcmemo[mcp]' ({error})"
        ) from None
    from arcmemo.agent.memory import open_memory
    from arcmemo.memory.store import MemoryFileError

    try:
        memory = open_memory(
            memory_path,
            roles=_roles(model_roles),
            selector=selector,
            memory_format=memory_format,
            origin="mcp",
        )
    except (MemoryFileError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    server = build_server(memory)

    async def serve() -> None:
        try:
            if transport == "stdio":
                await server.run_stdio_async()
            else:
                await server.run_streamable_http_async(host=host, port=port)
        finally:
            await memory.aclose()

    asyncio.run(serve())
