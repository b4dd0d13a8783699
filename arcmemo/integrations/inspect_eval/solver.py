"""The solver: arcmemo's loop for one sample (select, solve, verify, retry with feedback,
grade) run by :class:`arcmemo.runner.Runner` on inspect's models."""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from arcmemo.integrations.inspect_eval.context import EvalContext
from arcmemo.integrations.inspect_eval.model import inspect_client
from arcmemo.runner import Runner

# Where a sample's arcmemo result (records.TaskResult as JSON) is kept for the scorer and
# for `inspect view`.
RESULT_KEY = "arcmemo_result"
# The inspect model role that selects, describes and abstracts (arcmemo's aux role).
AUX_ROLE = "aux"


@solver
def arcmemo_solver(context: EvalContext) -> Solver:
    """Run arcmemo's loop on the sample's task with the evaluated model as arcmemo's solver
    and the ``aux`` model role (default: the same model) as its aux model; with
    ``update=online`` the result is then written to the memory."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = context.tasks[str(state.sample_id)]
        solver_model = get_model()
        aux_model = get_model(role=AUX_ROLE, default=solver_model)
        client = inspect_client(solver_model)
        aux = client if aux_model is solver_model else inspect_client(aux_model)
        aux = aux.with_defaults(context.config.aux.sampling)
        runner = Runner(
            context.config,
            context.benchmark,
            client,
            rundir=context.rundir,
            selector=context.selector,
            memory=context.memory,
            selector_model=aux,
        )
        result = await runner.solve(task)
        await context.remember(task, result, aux)
        state.metadata[RESULT_KEY] = result.model_dump(mode="json")
        # The transcript holds every call; the conversation shows each attempt's last answer.
        for attempt in result.attempts:
            if attempt.steps:
                state.messages.append(ChatMessageAssistant(content=attempt.steps[-1].completion))
        last = next((a.steps[-1] for a in result.attempts if a.steps), None)
        if last is not None:
            state.output = ModelOutput.from_content(str(solver_model), last.completion)
        if result.error:
            state.messages.append(ChatMessageUser(content=f"arcmemo: {result.error}"))
        return state

    return solve
