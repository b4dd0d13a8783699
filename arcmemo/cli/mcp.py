"""``arcmemo mcp``: serve a memory file to agents over the Model Context Protocol."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from arcmemo.cli.config_options import config_options, config_values
from arcmemo.run.config import RunConfig

# The settings of arcmemo run this command takes, with the same options: the model roles
# (--model-role ROLE=SPEC, --model-role-arg ROLE.KEY=VALUE, --endpoint ROLE=URL), the
# selector and the memory format (each with its -arg options), and the models' limits.
MCP_SETTINGS: dict[str, Iterable[str] | None] = {
    "roles": None,
    "endpoints": None,
    "selector": None,
    "memory_format": None,
    "models": ("concurrency", "cache"),
}


@click.command("mcp", short_help="Serve a memory to agents as MCP tools and resources.")
@click.option("--memory", "memory_path", required=True, type=click.Path(path_type=Path),
              help="The memory file served (created on its first write).")  # fmt: skip
@config_options(RunConfig, MCP_SETTINGS)
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              show_default=True, help="http: streamable HTTP at http://HOST:PORT/mcp.")  # fmt: skip
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
def mcp(memory_path: Path, transport: str, host: str, port: int, **options: Any) -> None:
    """Serve the memory FILE as MCP tools (select, search, get, record a solution, record an
    outcome, stats) and resources (concepts, memory views). The roles the tools call: select
    (the llm selector), abstract (record a solution) and aux (both fall back to it); the
    selector defaults to llm with a select or aux model, else all. Needs the mcp extra:
    pip install 'arcmemo[mcp]'."""
    try:
        from arcmemo.agent.mcp_server import build_server
    except ModuleNotFoundError as error:
        raise click.ClickException(
            f"arcmemo mcp needs the mcp extra: pip install 'arcmemo[mcp]' ({error})"
        ) from None
    from arcmemo.agent.memory import open_memory
    from arcmemo.core.registry import ComponentSpec
    from arcmemo.memory.store import MemoryFileError

    given = config_values(RunConfig, options, only=MCP_SETTINGS)
    selector, memory_format = (
        ComponentSpec.model_validate(given[key]) if key in given else None
        for key in ("selector", "memory_format")
    )
    try:
        clients = _clients(given)
        memory = open_memory(
            memory_path,
            roles=clients,
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
            for client in clients.values():
                await client.aclose()

    asyncio.run(serve())


def _clients(given: dict[str, Any]) -> dict[str, Any]:
    """A client for each role given a model, from its spec, options and endpoint (a key only
    ever goes to its own provider's host, as in a run)."""
    from arcmemo.agent.memory import ROLES
    from arcmemo.models.client import ModelConfig, open_model

    roles: dict[str, dict[str, Any]] = given.get("roles", {})
    endpoints: dict[str, str] = given.get("endpoints", {})
    for role in [*roles, *endpoints]:
        if role not in ROLES:
            raise click.BadParameter(
                f"{role!r}: arcmemo mcp's roles are {', '.join(ROLES)}", param_hint="--model-role"
            )
        if "spec" not in roles.get(role, {}):
            raise click.BadParameter(
                f"the {role} role's options or endpoint need its model "
                f"(--model-role {role}=PROVIDER:MODEL)",
                param_hint="--model-role",
            )
    config = ModelConfig(**given.get("models", {}))
    clients = {}
    for role, role_given in roles.items():
        clients[role] = open_model(
            role_given["spec"], base_url=endpoints.get(role),
            model_args=role_given.get("args") or {}, config=config,
        )  # fmt: skip
    return clients
