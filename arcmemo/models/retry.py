"""When a failed model request is sent again, and when a call or a whole run gives up.

A request is retried with full-jitter exponential backoff until the retries or the retry
budget run out (:func:`next_delay`, :func:`backoff_delay`); a call that fails for good raises
:class:`ModelCallError`. While no call of a model has been answered yet, a few failures of
the same fatal-looking kind (no server, a bad key, an unknown model) open the
:class:`Breaker`, which stops the run with :class:`ModelUnreachableError`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from arcmemo.models.base import ProviderError, RequestReport, RetryDecision
from arcmemo.models.redact import redact


class ModelCallError(Exception):
    """A call failed for good: a non-retryable error, or retries or budget ran out."""

    def __init__(
        self,
        cause: str,
        *,
        stage: str,
        task_id: str | None,
        status: int | None = None,
        attempts: int = 0,
        kind: str | None = None,
    ) -> None:
        where = f"stage {stage}" + (f", task {task_id}" if task_id else "")
        super().__init__(f"model call failed ({where}) after {attempts} attempt(s): {cause}")
        self.cause = cause
        self.stage = stage
        self.task_id = task_id
        self.status = status
        self.attempts = attempts
        self.kind = kind or (f"HTTP {status}" if status is not None else "error")
        # The requests the call sent before it gave up (each a calls.jsonl line).
        self.requests: list[RequestReport] = []


class ModelUnreachableError(Exception):
    """The first calls to a model all failed the same way (no server, a bad key, an unknown
    model): the run stops instead of failing every task one by one. A rerun resumes."""


# Failures that retrying or more tasks will not fix while nothing has ever been answered.
FATAL_EARLY_KINDS = frozenset({"connection", "HTTP 401", "HTTP 403", "HTTP 404"})
# How many calls must fail that way, with no call answered yet, before the breaker opens.
BREAKER_THRESHOLD = 3


class Breaker:
    """Counts fatal-looking failures of a model until its first answer; opens (raises
    :class:`ModelUnreachableError`) at :data:`BREAKER_THRESHOLD` of one kind."""

    def __init__(self) -> None:
        self._failures: dict[str, int] = {}
        # Whether a call of the model was ever answered (then the breaker stays closed).
        self.answered = False

    def record(self, error: ModelCallError, *, model: str) -> None:
        """Count ``error`` (a call that failed for good) unless the model has answered."""
        if self.answered or error.kind not in FATAL_EARLY_KINDS:
            return
        count = self._failures.get(error.kind, 0) + 1
        self._failures[error.kind] = count
        if count >= BREAKER_THRESHOLD:
            raise ModelUnreachableError(
                f"{model}: the first {count} calls all failed ({error.kind}) and "
                f"none was answered; stopping the run. Last error: {error.cause}"
            ) from error


def backoff_delay(
    attempt: int, retry_after: float | None, *, base_s: float, max_s: float, rng: random.Random
) -> float:
    """Full-jitter exponential backoff, never shorter than the server's ``Retry-After``."""
    ceiling = min(max_s, base_s * 2 ** (attempt - 1))
    delay = rng.uniform(0, ceiling)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay


def next_delay(
    failure: ProviderError,
    *,
    attempt: int,
    retries: int,
    answered: bool,
    elapsed_s: float,
    budget_s: float,
    delay: Callable[[], float],
    stage: str,
    task_id: str | None,
) -> float:
    """How long to wait before sending again a request whose ``attempt``-th try failed
    with ``failure``; raises the :class:`ModelCallError` that ends the call instead when the
    failure is not retryable, the retries are spent, or waiting ``delay()`` would run past
    the retry budget (``delay`` is drawn only when the retries allow another try)."""
    cause = redact(str(failure))
    # While nothing has ever been answered, a refused connection is retried once, not
    # for minutes: a dead endpoint must end the run in seconds (the breaker).
    if not answered and failure.kind == "connection":
        retries = min(retries, 1)
    if failure.decision is RetryDecision.NO:
        reason = cause
    elif attempt > retries:
        reason = f"gave up after {retries} retries; last error: {cause}"
    else:
        wait = delay()
        if elapsed_s + wait <= budget_s:
            return wait
        reason = f"retry budget of {budget_s:g} s spent; last error: {cause}"
    raise ModelCallError(
        reason,
        stage=stage,
        task_id=task_id,
        status=failure.status,
        attempts=attempt,
        kind=failure.kind,
    ) from failure
