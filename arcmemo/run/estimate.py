"""What a run will cost, as a range, from the prompts a dry run renders.

Every stage the real run would call is counted: selection (when the selector calls a model),
the first round of samples, every retry round as an upper bound (with reselection in online
runs), and abstraction of confirmed solutions (online runs). The low end assumes every task
is solved at the first try and short answers; the high end assumes every retry is used,
every task is written to memory and long answers. Output tokens are not knowable before the
run: the assumption per model family is stated in the report (:data:`OUTPUT_ASSUMPTIONS`).

Calls are requests, as ``summary.json`` counts them; samples are the answers they return. The
first round asks for a task's ``attempts`` samples in one request (its prompt paid once)
where the solver's API takes ``n``, else in one request per sample; every other request
returns one sample.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from arcmemo.abstraction.base import ABSTRACTORS
from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import ABSTRACT, AUX, SELECT, SOLVER
from arcmemo.core.tokens import estimate_tokens
from arcmemo.models.prices import ModelPrice, PriceTable
from arcmemo.models.structured import REPAIRS
from arcmemo.run.citations import with_citation_request
from arcmemo.run.config import RunConfig
from arcmemo.run.solve_prompt import prepare_prompt

if TYPE_CHECKING:
    from arcmemo.run.session import RunSession

# (pattern on the model name, low, high) expected output tokens per call, reasoning included.
# Reasoning models spend most of their cost on hidden reasoning (o4-mini on ARC: several
# thousand tokens a call); chat models answer in hundreds.
OUTPUT_ASSUMPTIONS: tuple[tuple[str, int, int], ...] = (
    (r"(^|[:/])(o\d|gpt-5|deepseek-r1|qwq|.*thinking|.*reason)", 2_000, 16_000),
    (r".*", 300, 2_000),
)
# A retry prompt is the first prompt plus the previous program and per-example feedback.
RETRY_EXTRA_TOKENS = 1_500
ABSTRACTION_INPUT_TOKENS = 6_000
# The attribution judge's prompt: the deciding solution and the concepts it was shown.
JUDGE_INPUT_TOKENS = 3_000
# Calls one structured answer can take: the ask and its repairs (arcmemo.models.structured).
ASKS = 1 + REPAIRS


def output_range(
    model: str, max_tokens: int | None, thinking_budget: int | None
) -> tuple[int, int]:
    """(low, high) output tokens expected per call of ``model``, capped by ``max_tokens``."""
    name = model.lower()
    low, high = next((lo, hi) for pattern, lo, hi in OUTPUT_ASSUMPTIONS if re.search(pattern, name))
    if thinking_budget:
        high = max(high, thinking_budget + 2_000)
    if max_tokens is not None:
        low, high = min(low, max_tokens), min(high, max_tokens)
    return low, high


class Span(BaseModel):
    """A quantity known only as a range."""

    low: float = 0
    high: float = 0

    def __add__(self, other: Span) -> Span:
        return Span(low=self.low + other.low, high=self.high + other.high)

    def scaled(self, low: float, high: float) -> Span:
        return Span(low=self.low * low, high=self.high * high)


class StageEstimate(BaseModel):
    """Calls (requests) and samples (answers) and tokens of one stage, low and high."""

    model: str
    calls: Span = Field(
        default_factory=Span,
        description="Requests, each paying its prompt once (as summary.json counts calls).",
    )
    samples: Span = Field(
        default_factory=Span, description="Answers sampled: a request for n samples has n."
    )
    input_tokens: Span = Field(default_factory=Span)
    output_tokens: Span = Field(default_factory=Span)
    cost_usd: Span | None = Field(default=None, description="None when the price is unknown.")

    def add_calls(
        self,
        calls: Span,
        input_per_call: float,
        output: tuple[int, int],
        *,
        samples_per_call: int = 1,
    ) -> None:
        """``calls`` requests of ``input_per_call`` prompt tokens, each sampling
        ``samples_per_call`` answers of ``output`` (low, high) tokens."""
        samples = calls.scaled(samples_per_call, samples_per_call)
        self.calls = self.calls + calls
        self.samples = self.samples + samples
        self.input_tokens = self.input_tokens + calls.scaled(input_per_call, input_per_call)
        self.output_tokens = self.output_tokens + samples.scaled(*output)

    def price(self, price: ModelPrice | None) -> None:
        if price is None or price.input is None or price.output is None:
            self.cost_usd = None
            return
        per_million = 1_000_000
        self.cost_usd = Span(
            low=(self.input_tokens.low * price.input + self.output_tokens.low * price.output)
            / per_million,
            high=(self.input_tokens.high * price.input + self.output_tokens.high * price.output)
            / per_million,
        )


class RunEstimate(BaseModel):
    """Every stage of a run, and the totals."""

    n_tasks: int
    stages: dict[str, StageEstimate] = Field(default_factory=dict)
    assumptions: list[str] = Field(default_factory=list)
    too_long: list[str] = Field(
        default_factory=list,
        description="Per task and stage, a prompt that cannot fit its model's context window "
        "(the run records such a task prompt_too_long) or a selection view the run shrinks.",
    )

    def stage(self, name: str, model: str) -> StageEstimate:
        return self.stages.setdefault(name, StageEstimate(model=model))

    @property
    def calls(self) -> Span:
        return sum((s.calls for s in self.stages.values()), Span())

    @property
    def samples(self) -> Span:
        return sum((s.samples for s in self.stages.values()), Span())

    @property
    def input_tokens(self) -> Span:
        return sum((s.input_tokens for s in self.stages.values()), Span())

    @property
    def output_tokens(self) -> Span:
        return sum((s.output_tokens for s in self.stages.values()), Span())

    @property
    def cost_usd(self) -> Span | None:
        costs = [s.cost_usd for s in self.stages.values()]
        if any(c is None for c in costs):
            return None
        return sum((c for c in costs if c is not None), Span())


async def estimate_run(session: RunSession) -> RunEstimate:
    """Render every first-round prompt of the session's tasks into its ``prompts/`` and
    estimate each stage the run would call (selectors that would call a model are shown by
    their prompt instead)."""
    config, rundir, benchmark = session.config, session.rundir, session.benchmark
    memory, selector = session.memory, session.selector
    sampling, solver = config.solver.sampling, config.solver_spec
    aux, select, abstract = (config.role_model(r) for r in (AUX, SELECT, ABSTRACT))
    solver_out = output_range(solver, sampling.max_tokens, sampling.thinking_budget)
    aux_out, select_out, abstract_out = (
        output_range(m, None, None) for m in (aux, select, abstract)
    )
    retries = config.feedback_rounds
    attempts, variants = config.attempts, config.variants
    # One request samples every first try where the API takes n (the client's own rule).
    per_request = attempts if _supports_n(config.solver.provider) else 1
    estimate = RunEstimate(n_tasks=len(session.tasks))
    solver_window, select_window = _window(config, SOLVER), _window(config, SELECT)
    for task in session.tasks:
        task_id = benchmark.task_id(task)
        prepared = await prepare_prompt(
            benchmark,
            task,
            memory=memory,
            selector=selector,
            preview=True,
            library_scope=config.library,
        )
        messages = prepared.messages
        if config.cite and prepared.concepts:  # as the task loop asks it (--cite)
            messages = with_citation_request(messages)
        text = "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)
        rundir.write_prompt(task_id, text)
        prompt = estimate_tokens(text)
        if solver_window is not None and prompt >= solver_window:
            estimate.too_long.append(
                f"task {task_id}, stage solve: the prompt is about {prompt:,} tokens; "
                f"{solver}'s context window is {solver_window:,} (the run cuts its memory "
                "block and library listing to fit, and records the task prompt_too_long if "
                "the rest cannot fit)"
            )
        elif solver_window is not None and retries and prompt + RETRY_EXTRA_TOKENS >= solver_window:
            estimate.too_long.append(
                f"task {task_id}, stage retry: the prompt may outgrow {solver}'s context "
                f"window {solver_window:,} (about {prompt:,} tokens before the feedback; the run "
                "cuts the retry to fit, produced grids first)"
            )
        # Each prompt variant pays its own selection, first tries and retries (its prompt
        # is rendered like variant 0's; only the chosen concepts differ).
        requests = variants * (attempts // per_request)
        estimate.stage("solve", solver).add_calls(
            Span(low=requests, high=requests), prompt, solver_out, samples_per_call=per_request
        )
        if retries:
            estimate.stage("retry", solver).add_calls(
                Span(high=variants * attempts * retries),
                prompt + RETRY_EXTRA_TOKENS,
                solver_out,
            )
        if prepared.selection_prompts:
            rundir.write_prompt(f"{task_id}.select", _joined(prepared.selection_prompts))
        # Retries select again with reselect; every structured answer may be re-asked.
        selections = variants * (1 + (attempts * retries if config.feedback_rounds_reselect else 0))
        for prompt_text in prepared.selection_prompts:
            selection_tokens = estimate_tokens(prompt_text)
            if select_window is not None and selection_tokens >= select_window:
                estimate.too_long.append(
                    f"task {task_id}, stage select: the prompt is about {selection_tokens:,} "
                    f"tokens; {select}'s context window is {select_window:,} (the run shrinks "
                    "its memory view to fit)"
                )
            estimate.stage("select", select).add_calls(
                Span(low=variants, high=selections * ASKS),
                estimate_tokens(prompt_text),
                select_out,
            )
        if session.online:
            calls = ABSTRACTORS.create(config.memory_format).calls_per_task
            estimate.stage("abstract", abstract).add_calls(
                Span(high=calls * ASKS), ABSTRACTION_INPUT_TOKENS, abstract_out
            )
            if config.attribution_judge:  # only when the solver was shown concepts
                estimate.stage("attribute", aux).add_calls(
                    Span(high=ASKS), JUDGE_INPUT_TOKENS, aux_out
                )
    prices = PriceTable.load(config.models.prices_path)
    for stage in estimate.stages.values():
        stage.price(prices.price_for(stage.model))
    estimate.assumptions = [
        "calls are requests (as summary.json counts them): "
        + (
            f"a task's {attempts} first tries are one request (its prompt paid once)"
            if per_request > 1
            else "one request per sample"
        )
        + ", every retry, selection and abstraction its own"
        + (f"; each of {variants} prompt variants pays its own" if variants > 1 else ""),
        f"output tokens per sample: {solver} {solver_out[0]:,}-{solver_out[1]:,}"
        + "".join(
            f", {model} {out[0]:,}-{out[1]:,}"
            for model, out in {aux: aux_out, select: select_out, abstract: abstract_out}.items()
            if model != solver
        ),
        "low: every task solved at the first try, nothing written to memory; high: every "
        f"retry used (+{RETRY_EXTRA_TOKENS:,} prompt tokens each), every task abstracted "
        "(a failed task's pitfalls take its place; with contrast, one more call for its passing "
        "and failing attempts), every structured answer re-asked "
        f"{ASKS - 1} time(s)",
        "prompt tokens are estimated by counting BPE-like pieces (within ~10% of o200k on "
        "ARC prompts); provider prompt caching (cheaper repeated prefixes) is not "
        "subtracted",
    ]
    if selector.offline() is not selector:
        estimate.assumptions.append(
            "the remote embedder is stood in for by TF-IDF (as many entries picked); its "
            "embedding calls are not counted"
        )
    return estimate


def _window(config: RunConfig, role: str) -> int | None:
    """The context window of the model role ``role`` calls, as known without a server (the
    option context_window of the role whose model it is, else the packaged table)."""
    from arcmemo.models.context import known_window

    provider = config.roles[config.model_owner(role)].provider
    return known_window(config.role_model(role), dict(provider.options) if provider else {})


def _supports_n(provider: ComponentSpec | None) -> bool:
    """Whether the provider samples n answers in one request (as the client asks it to)."""
    if provider is None:
        return True
    from arcmemo.models.registry import PROVIDERS

    return bool(getattr(PROVIDERS.get(provider.name).factory, "supports_n", True))


def _joined(prompts: list[str]) -> str:
    """The prompts of one selection as one file, each under a numbered heading."""
    return "\n\n".join(f"[prompt {n} of {len(prompts)}]\n{p}" for n, p in enumerate(prompts, 1))


def estimate_record(estimate: RunEstimate) -> dict[str, Any]:
    """``estimate.json``: the stages and the totals (what ``experiments/all.sh`` adds up)."""

    def span(value: Span | None) -> dict[str, float] | None:
        return None if value is None else value.model_dump()

    return {
        **estimate.model_dump(mode="json"),
        "total": {
            "calls": span(estimate.calls),
            "samples": span(estimate.samples),
            "input_tokens": span(estimate.input_tokens),
            "output_tokens": span(estimate.output_tokens),
            "cost_usd": span(estimate.cost_usd),
        },
    }


class DryRunReport(BaseModel):
    """What a run would send: every stage's calls, tokens and cost as a range."""

    n_tasks: int
    estimate: RunEstimate
    prompts_dir: Path
    estimate_path: Path | None = None
