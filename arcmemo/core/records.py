"""The records a run produces, one shape for every benchmark.

A task's result (one line of ``results.jsonl``) holds its attempts; an attempt is a chain of
steps (the first try, then retries with feedback); a step records the model's answer, what a
benchmark's :meth:`~arcmemo.benchmarks.base.Benchmark.check` made of it
(:class:`CheckResult`) and, after grading, whether its prediction was right.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from arcmemo.core.tokens import Usage


class PairCheck(BaseModel):
    """The outcome of a candidate on one example whose answer the solver may see."""

    index: int = Field(description="Index of the example (0-based).")
    correct: bool = Field(description="Output equals the expected output.")
    output: Any = Field(default=None, description="What the candidate produced (None on error).")
    error: str | None = Field(default=None, description="Error text when it failed to run.")
    error_kind: str | None = Field(default=None, description="timeout, memory, exception, ...")


class CheckResult(BaseModel):
    """What a benchmark made of one completion, before any hidden label is looked at."""

    candidate: str | None = Field(default=None, description="Extracted program or answer string.")
    parse_error: str | None = Field(default=None, description="Why nothing could be extracted.")
    lenient_parse: str | None = Field(
        default=None,
        description="How the candidate was read from an answer that left the asked format "
        "(bare code without a fence, a block never closed); None when it kept to it.",
    )
    checks: list[PairCheck] = Field(default_factory=list, description="Train-pair results.")
    verified: bool | None = Field(
        default=None,
        description="True when the candidate passes every example the solver may see; None "
        "when the benchmark has no such signal (AIME).",
    )
    prediction: Any = Field(
        default=None,
        description="What is graded: test output grids (ARC) or the integer answer (AIME).",
    )


# The parts of a prompt that can be cut to fit a model's context window, named in the order
# they are cut (arcmemo.run.prompt_fit says why that order).
CutPart = Literal[
    "produced grids",
    "answer prose",
    "library docstrings",
    "reselected concepts",
    "library functions",
    "memory block",
    "error tracebacks",
    "previous program",
]


class PromptCut(BaseModel):
    """One part of a prompt cut to fit the model's context window."""

    part: CutPart = Field(description="What was cut (arcmemo.run.prompt_fit.CUT_ORDER).")
    detail: str = Field(default="", description="Which pieces, where the part has several.")
    tokens_saved: int = Field(description="Estimated prompt tokens the cut saved.")


class PromptFit(BaseModel):
    """How a prompt was shrunk to fit the model's context window (recorded only when
    something was cut)."""

    context_window: int = Field(description="The model's window.")
    budget: int = Field(
        description="The prompt tokens aimed at: the window less the room kept for the answer."
    )
    full_tokens: int = Field(description="Estimated tokens of the prompt with nothing cut.")
    tokens: int = Field(description="Estimated tokens of the prompt sent.")
    cuts: list[PromptCut] = Field(description="The cuts made, in order.")


class Step(CheckResult):
    """One model call of an attempt (the first try or a retry) and what came of it."""

    round: int = Field(description="0 for the first try, r for the r-th retry.")
    completion: str = Field(description="The model's answer text.")
    reasoning: str | None = Field(default=None, description="Visible reasoning text, if any.")
    correct: list[bool] | None = Field(
        default=None, description="Per test input, whether this step's prediction is right."
    )
    concepts: list[str] = Field(default_factory=list, description="Concepts shown in the prompt.")
    cited: list[str] = Field(
        default_factory=list,
        description="With --cite: the shown concepts the answer says it used (its list of "
        "names, matched as selections are), in memory spelling; empty without --cite, "
        "without a list, and in runs from before it.",
    )
    cited_unshown: list[str] = Field(
        default_factory=list,
        description="With --cite: names the answer cites that its prompt did not show (a "
        "memory entry in memory spelling, else the name as written): never credited.",
    )
    usage: Usage = Field(default_factory=Usage, description="Tokens of this call.")
    cost_usd: float | None = Field(
        default=None,
        description="USD the completion cost when generated: the gateway's figure or the "
        "price table's (also when this run got it from the response cache); None when "
        "unknown (or not recorded).",
    )
    started_at: str | None = Field(
        default=None, description="UTC ISO time the model call that produced it started."
    )
    finished_at: str | None = Field(
        default=None, description="UTC ISO time that model call returned."
    )
    error: str | None = Field(default=None, description="Model-call failure, if the call failed.")
    error_kind: str | None = Field(
        default=None,
        description="Its class (see TaskResult); prompt_too_long: the retry prompt could not "
        "fit the model's context window even with every cut (an outcome, not an error).",
    )
    left_unparsed: int = Field(
        default=0,
        description="Characters at the start of an answer longer than the parsed window "
        "(arcmemo.models.structured.MAX_PARSED_CHARS) that were not read: only the tail was "
        "parsed; the whole answer is in completion. 0 when it was read whole.",
    )
    truncated: bool = Field(
        default=False,
        description="The answer was cut at max_tokens (the provider's finish_reason 'length').",
    )
    prompt_fit: PromptFit | None = Field(
        default=None,
        description="What was cut from the prompt of this call to fit the model's context "
        "window (None: it was sent whole).",
    )

    @property
    def memory_cut(self) -> bool:
        """Whether the memory block was cut from this step's prompt to fit the model's
        window (the selection it answers was then never seen)."""
        return self.prompt_fit is not None and any(
            cut.part == "memory block" for cut in self.prompt_fit.cuts
        )

    @property
    def answered(self) -> bool:
        """Whether the model answered this step's prompt, so that its concepts were seen.

        Any completion is an answer: an empty one (a refusal), one cut at max_tokens or one
        that does not parse is what the model made of a prompt it read, and is evidence
        about the concepts in it. A step without one is not: a prompt too long for the
        window never reached the model (or the server refused it unread), and a provider
        error, a dropped connection or a timeout left no answer to judge the concepts by,
        whatever the server read before it failed."""
        return self.error is None


class Attempt(BaseModel):
    """An independent try at a task: a chain of steps, each retry seeing the previous feedback."""

    index: int = Field(
        description="Its position among the task's attempts, also the sample index its "
        "tries ask for (its first try is completion i of its variant's solve request): "
        "with --variants, variant v's attempts come after those of variants 0..v-1."
    )
    variant: int = Field(
        default=0,
        description="The prompt variant it answers (--variants; 0 without, and in runs from "
        "before variants).",
    )
    steps: list[Step] = Field(default_factory=list)
    correct: list[bool] = Field(
        default_factory=list,
        description="Per test input, whether the final step's prediction is right (grading).",
    )


class TaskGrade(BaseModel):
    """How a task scored (computed from hidden labels after solving)."""

    solved: bool
    score: float | None = Field(description="None: the task has no labels (inference mode).")
    metrics: dict[str, Any] = Field(default_factory=dict)


class Selection(BaseModel):
    """What a selector chose for a task."""

    selector: str
    selected: list[str] = Field(default_factory=list, description="Concept or lesson names.")
    unknown: list[str] = Field(default_factory=list, description="Names that matched nothing.")
    trace: str | None = Field(default=None, description="The selector's reasoning or raw output.")
    usage: Usage = Field(default_factory=Usage)
    warning: str | None = Field(
        default=None,
        description="Why a non-empty memory gave this task nothing (the answer did not parse, "
        "or no name it gave resolved); the run's summary counts such tasks.",
    )


class PromptTooLong(BaseModel):
    """A prompt of the task that could not fit the model's context window: the task's
    outcome (inspect_ai's ``model_length``), not an infrastructure error."""

    stage: str = Field(description="select, solve, retry, ...: the stage whose prompt it was.")
    message: str = Field(description="The estimate against the window, or the server's refusal.")
    prompt_tokens: int | None = Field(default=None, description="Estimated prompt tokens.")
    context_window: int | None = Field(default=None, description="The model's window, if known.")
    cuts: list[PromptCut] = Field(
        default_factory=list,
        description="What had been cut from the prompt before it still did not fit (the "
        "smallest prompt of its kind: arcmemo.run.prompt_fit).",
    )


class TaskResult(BaseModel):
    """One line of ``results.jsonl``."""

    task_id: str
    solved: bool = False
    score: float | None = Field(
        default=0.0, description="None: the task has no labels (inference mode), unscored."
    )
    attempts: list[Attempt] = Field(default_factory=list)
    selection: Selection | None = Field(
        default=None, description="What the selector chose (for variant 0 with --variants)."
    )
    variant_selections: list[Selection | None] = Field(
        default_factory=list,
        description="With --variants N: the selections of variants 1..N-1, in order, each "
        "its own selector call (empty without variants).",
    )
    metrics: dict[str, Any] = Field(default_factory=dict)
    error: str | None = Field(default=None, description="The model-call failure that ended it.")
    error_kind: str | None = Field(
        default=None, description="Its class: HTTP <status>, connection, timeout or error."
    )
    prompt_too_long: PromptTooLong | None = Field(
        default=None,
        description="The first prompt of the task that could not fit the model's context "
        "window (the task ends there, or its attempt stops retrying); not an error.",
    )
    tokens: Usage = Field(default_factory=Usage)

    @property
    def selections(self) -> list[Selection]:
        """The selection of every prompt variant that has one, variant 0 first."""
        return [s for _, s in self.variant_selection_pairs]

    @property
    def shown(self) -> list[str]:
        """The memory entries shown in the task's answered prompts (:attr:`Step.answered`),
        once each in the order first chosen: each prompt variant's selection whose prompt
        the solver answered, then each answered step's (reselections on retries).

        Selection statistics and attribution count these. An entry selected only for
        prompts that got no answer (too long for the window, a failed call) was never seen
        by the solver, so counting it would be evidence against a concept from a failure."""
        answered = self.answered_variants
        names = [
            name
            for variant, selection in self.variant_selection_pairs
            if variant in answered
            for name in selection.selected
        ]
        names += [
            name
            for a in self.attempts
            for step in a.steps
            if step.answered
            for name in step.concepts
        ]
        return list(dict.fromkeys(names))

    @property
    def cited(self) -> list[str]:
        """The shown memory entries the task's answered steps cite (``--cite``), once each in
        the order first cited."""
        names = [name for a in self.attempts for s in a.steps if s.answered for name in s.cited]
        return list(dict.fromkeys(names))

    @property
    def answered_variants(self) -> set[int]:
        """The prompt variants whose first prompt the solver answered (0 without variants):
        the variants whose selection it saw (not where the prompt's memory block was cut to
        fit the window). A variant's first tries are one call, so its attempts' first steps
        are answered together or not at all."""
        return {
            a.variant
            for a in self.attempts
            if a.steps and a.steps[0].answered and not a.steps[0].memory_cut
        }

    def selection_of(self, variant: int) -> Selection | None:
        """Prompt variant ``variant``'s selection (None: it has none)."""
        every = (self.selection, *self.variant_selections)
        return every[variant] if variant < len(every) else None

    @property
    def variant_selection_pairs(self) -> list[tuple[int, Selection]]:
        """(variant, its selection) for every prompt variant that has one, variant 0 first."""
        every = (self.selection, *self.variant_selections)
        return [(variant, s) for variant, s in enumerate(every) if s is not None]


class SolvedItem(BaseModel):
    """A solution confirmed by the run's write signal, ready for abstraction."""

    task_id: str
    domain: str = Field(description="'arc', 'aime' or another domain name.")
    problem: str = Field(description="The problem as text (never hidden labels).")
    solution: str = Field(description="The verified program or worked solution.")
    reasoning: str | None = Field(
        default=None, description="The solver's visible reasoning, if any."
    )
