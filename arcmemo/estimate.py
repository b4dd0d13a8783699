"""What a run will cost, as a range, from the prompts a dry run renders.

Every stage the real run would call is counted: selection (when the selector calls a model),
the first round of samples, every retry round as an upper bound (with reselection in online
runs), and abstraction of confirmed solutions (online runs). The low end assumes every task
is solved at the first try and short answers; the high end assumes every retry is used,
every task is written to memory and long answers. Output tokens are not knowable before the
run: the assumption per model family is stated in the report (:data:`OUTPUT_ASSUMPTIONS`).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from arcmemo.models.prices import ModelPrice
from arcmemo.structured import REPAIRS

# (pattern on the model name, low, high) expected output tokens per call, reasoning included.
# Reasoning models spend most of their cost on hidden reasoning (o4-mini on ARC: several
# thousand tokens a call); chat models answer in hundreds.
OUTPUT_ASSUMPTIONS: tuple[tuple[str, int, int], ...] = (
    (r"(^|[:/])(o\d|gpt-5|deepseek-r1|qwq|.*thinking|.*reason)", 2_000, 16_000),
    (r".*", 300, 2_000),
)
# A retry prompt is the first prompt plus the previous program and per-example feedback.
RETRY_EXTRA_TOKENS = 1_500
# Calls per confirmed solution a memory format makes (PS: pseudocode, then concepts).
ABSTRACTION_CALLS = {"ps": 2, "oe": 1, "cheatsheet": 1}
ABSTRACTION_INPUT_TOKENS = 6_000
# The attribution judge's prompt: the deciding solution and the concepts it was shown.
JUDGE_INPUT_TOKENS = 3_000
# Calls one structured answer can take: the ask and its repairs (arcmemo.structured).
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
    """Calls and tokens of one stage, low and high."""

    model: str
    calls: Span = Field(default_factory=Span)
    input_tokens: Span = Field(default_factory=Span)
    output_tokens: Span = Field(default_factory=Span)
    cost_usd: Span | None = Field(default=None, description="None when the price is unknown.")

    def add_calls(self, calls: Span, input_per_call: float, output: tuple[int, int]) -> None:
        self.calls = self.calls + calls
        self.input_tokens = self.input_tokens + calls.scaled(input_per_call, input_per_call)
        self.output_tokens = self.output_tokens + calls.scaled(*output)

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

    def stage(self, name: str, model: str) -> StageEstimate:
        return self.stages.setdefault(name, StageEstimate(model=model))

    @property
    def calls(self) -> Span:
        return sum((s.calls for s in self.stages.values()), Span())

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
