"""The memory over the Model Context Protocol: ``arcmemo mcp --memory FILE``.

Tools (each a thin layer over :class:`~arcmemo.agent.memory.AgentMemory`):

* ``select_concepts`` {"problem", "task_id"?}: the configured selector's choice and the
  memory block to put into a prompt;
* ``search_memory`` {"query", "limit"?}: concept names by the words they share;
* ``get_concept`` {"name"}: one concept in full (JSON);
* ``record_solution`` {"problem", "solution", "verified"?, "feedback"?, "task_id"?}: the
  memory format's abstraction with the abstract model, written atomically, its history
  saying it came through MCP and from which client;
* ``record_outcome`` {"concepts", "solved", "task_id"?, "outcome_id"?, "solution"?}: the
  evidence statistics and attribution read (the same outcome_id counts once);
* ``memory_stats`` {}: counts of the memory.

Resources: ``memory://concepts/{name}`` (one concept as JSON) and ``memory://view/{view}``
(the memory rendered: ``full``, ``compressed``, ...). Bad arguments come back as a tool error
that says what was wrong; the server keeps serving. Model keys stay in the environment: no
tool returns the configuration. Importing this module needs the ``mcp`` extra.

The memory is untrusted text (:mod:`arcmemo.memory.untrusted`) and a client may show what it
gets: every string a tool or resource returns shows its control characters and bidirectional
overrides escaped (``\\x1b``, ``\\u202e``), as the CLI does.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError

from arcmemo.agent.memory import AgentMemory, MemoryBusyError, MemoryChangedError
from arcmemo.agent.outcomes import UnknownConceptError
from arcmemo.memory.store import MemoryFileError
from arcmemo.memory.untrusted import visible_value
from arcmemo.models.retry import ModelCallError
from arcmemo.sandbox.text import visible_text

# Errors that are the caller's or the moment's, reported as tool errors in one line.
_TOOL_ERRORS = (
    ValueError,
    UnknownConceptError,
    MemoryBusyError,
    MemoryChangedError,
    MemoryFileError,
    ModelCallError,
)
MAX_PROBLEM_CHARS = 200_000


def client_name(ctx: Any) -> str:
    """The connected client's name and version, as its initialize request gave them."""
    try:
        params = ctx.session.client_params
        info = getattr(params, "client_info", None) or getattr(params, "clientInfo", None)
        if info is None:
            return "mcp"
        name = f"{info.name} {info.version}".strip()
    except AttributeError:
        return "mcp"
    return f"mcp client {name}" if name else "mcp"


def _bounded(name: str, text: str) -> str:
    if len(text) > MAX_PROBLEM_CHARS:
        raise ValueError(f"{name} is longer than {MAX_PROBLEM_CHARS} characters")
    return text


def build_server(memory: AgentMemory) -> MCPServer[Any]:
    """The MCP server of ``memory`` (an ``mcp`` SDK ``MCPServer``)."""
    server = MCPServer(
        "arcmemo",
        instructions="A concept memory: select concepts before solving a problem, record a "
        "verified solution after, and record the outcome (solved or not) with the concepts "
        "used.",
    )

    def failing(error: Exception) -> ToolError:
        return ToolError(
            visible_text(str(error).splitlines()[0]) if str(error) else type(error).__name__
        )

    @server.tool()
    async def select_concepts(problem: str, task_id: str | None = None) -> dict[str, Any]:
        """Choose the memory's concepts for a problem; returns their names and the memory
        block to put into the solving prompt."""
        try:
            picked = await memory.select(_bounded("problem", problem), task_id=task_id)
        except _TOOL_ERRORS as error:
            raise failing(error) from None
        return {"task_id": picked.task_id, "concepts": picked.concepts, "block": picked.block}

    @server.tool()
    def search_memory(query: str, limit: int = 10) -> dict[str, Any]:
        """Concept names that share the most words with the query."""
        if not 1 <= limit <= 100:
            raise ToolError("limit must be 1..100")
        return {"concepts": memory.search(_bounded("query", query), limit=limit)}

    @server.tool()
    def get_concept(name: str) -> dict[str, Any]:
        """One concept of the memory in full."""
        concept = memory.memory.find(name)
        if concept is None:
            raise ToolError(visible_text(f"no concept {name!r} in the memory"))
        shown: dict[str, Any] = visible_value(concept.model_dump(mode="json"))
        return shown

    @server.tool()
    async def record_solution(
        problem: str,
        solution: str,
        ctx: Context,
        verified: bool = True,
        feedback: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Learn from a solution: a verified one is abstracted into the memory (a failed
        one with feedback writes a pitfall where the memory format keeps them)."""
        try:
            outcome = await memory.learn(
                _bounded("problem", problem),
                _bounded("solution", solution),
                verified=verified,
                feedback=feedback,
                task_id=task_id,
                origin=client_name(ctx),
            )
        except _TOOL_ERRORS as error:
            raise failing(error) from None
        if outcome is None:
            return {"written": [], "note": "nothing to learn: the solution was not verified"}
        written: dict[str, Any] = visible_value(
            {
                "written": outcome.written,
                "conflicts": outcome.conflicts,
                "failures": [f"{f.stage}: {f.error}" for f in outcome.failures],
            }
        )
        return written

    @server.tool()
    def record_outcome(
        concepts: list[str],
        solved: bool,
        ctx: Context,
        task_id: str | None = None,
        outcome_id: str | None = None,
        solution: str | None = None,
    ) -> dict[str, Any]:
        """Record how a problem went: the concepts used and whether it was solved (the same
        outcome_id twice counts once)."""
        try:
            record = memory.record_outcome(
                concepts,
                solved=solved,
                task_id=task_id,
                outcome_id=outcome_id,
                solution=solution,
                origin=client_name(ctx),
            )
        except _TOOL_ERRORS as error:
            raise failing(error) from None
        recorded: dict[str, Any] = visible_value(record.model_dump(mode="json"))
        return recorded

    @server.tool()
    def memory_stats() -> dict[str, Any]:
        """How many concepts, lessons and outcomes the memory holds."""
        current = memory.memory
        return {
            "domain": visible_text(current.domain),
            "concepts": len(current.concepts),
            "retired": sum(c.retired is not None for c in current.concepts),
            "lessons": len(current.lessons),
            "outcomes": sum(
                e.op == "stats" and e.target.startswith("outcome") for e in current.history
            ),
            "selected": sum(c.stats.selected for c in current.concepts),
            "selected_solved": sum(c.stats.selected_solved for c in current.concepts),
        }

    @server.resource("memory://concepts/{name}", mime_type="application/json")
    def concept_resource(name: str) -> str:
        """One concept as JSON."""
        concept = memory.memory.find(name)
        if concept is None:
            raise ResourceError(visible_text(f"no concept {name!r} in the memory"))
        return json.dumps(visible_value(concept.model_dump(mode="json")), indent=2)

    @server.resource("memory://view/{view}", mime_type="text/markdown")
    def view_resource(view: str) -> str:
        """The memory rendered in one of its views (full, compressed, ...)."""
        try:
            return visible_text(memory.memory.render(view))
        except (ValueError, KeyError) as error:
            raise ResourceError(visible_text(f"no memory view {view!r} ({error})")) from None

    return server
