"""The solver: arcmemo's loop for one sample (select, solve, verify, retry with feedback,
grade) run by :class:`arcmemo.run.task_loop.TaskLoop` on inspect's models."""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, Model, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from arcmemo.core.roles import FALLBACK, MODEL_ROLES, SOLVER
from arcmemo.integrations.inspect_eval.context import EvalContext
from arcmemo.integrations.inspect_eval.model import inspect_client
from arcmemo.models.client import ModelClient
from arcmemo.run.session import role_clients
from arcmemo.run.task_loop import TaskLoop

# Where a sample's arcmemo result (records.TaskResult as JSON) is kept for the scorer and
# for `inspect view`.
RESULT_KEY = "arcmemo_result"


def role_models() -> dict[str, Model]:
    """inspect's model for each of arcmemo's roles: the evaluated model (``--model``) for
    the solver; for every other role inspect's model role of the same name
    (``--model-role select=...``), else its fallback's model, as arcmemo falls back
    (select and abstract to aux, aux to the solver)."""
    models: dict[str, Model] = {}
    for name in MODEL_ROLES:  # each role after the one it falls back to
        fallback = FALLBACK[name]
        models[name] = (
            get_model() if fallback is None else get_model(role=name, default=models[fallback])
        )
    return models


def inspect_role_clients(context: EvalContext) -> dict[str, ModelClient]:
    """arcmemo's client of each role over inspect's models: one client per role given its
    own inspect model, the others views of their fallback's with the role's sampling, as
    :func:`arcmemo.run.session.role_clients` builds them for ``arcmemo run``."""
    models = role_models()
    opened = {
        name: inspect_client(model)
        for name, model in models.items()
        if name == SOLVER or model is not models[FALLBACK[name] or SOLVER]
    }
    return role_clients(context.config, opened, {})


@solver
def arcmemo_solver(context: EvalContext) -> Solver:
    """Run arcmemo's loop on the sample's task with the evaluated model as arcmemo's solver
    and inspect's model roles ``aux``, ``select`` and ``abstract`` (each falling back as
    arcmemo's roles do) as arcmemo's roles of those names; with ``update=online`` the
    result is then written to the memory."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = context.tasks[str(state.sample_id)]
        clients = inspect_role_clients(context)
        loop = TaskLoop(
            context.config,
            context.benchmark,
            clients,
            selector=context.selector,
            memory=context.memory,
        )
        result = await loop.solve(task)
        await context.remember(task, result, clients)
        state.metadata[RESULT_KEY] = result.model_dump(mode="json")
        # The transcript holds every call; the conversation shows each attempt's last answer.
        for attempt in result.attempts:
            if attempt.steps:
                state.messages.append(ChatMessageAssistant(content=attempt.steps[-1].completion))
        last = next((a.steps[-1] for a in result.attempts if a.steps), None)
        if last is not None:
            state.output = ModelOutput.from_content(str(get_model()), last.completion)
        if result.error:
            state.messages.append(ChatMessageUser(content=f"arcmemo: {result.error}"))
        return state

    return solve
