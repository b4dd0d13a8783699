"""What a run reports while it runs: typed progress events and the state they add up to.

The runner announces its stages (solve, retry, abstract, with the task batch and pass), the model
client each request going out and coming back with its tokens and cost, and the pipeline the
start, each finished task and the end. A :class:`ProgressSink` receives them; the CLI
renders them (a live display on a terminal, a plain line every few seconds otherwise).
Nothing here changes a result: a sink that ignores everything is the default.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arcmemo.core.roles import AUX, MODEL_ROLES, SOLVER, role_of

if TYPE_CHECKING:
    from arcmemo.core.records import TaskResult

# The runner's stages; a request's stage is the one it was made for (selection included).
# Which model role answers each: arcmemo.core.roles.
STAGES = ("select", "solve", "retry", "abstract")


@dataclass(frozen=True)
class RunStarted:
    """The run has ``total`` tasks, ``already_done`` of them finished in earlier sessions,
    ``already_solved`` of those solved and ``already_unscored`` without labels; ``roles``:
    the model roles whose calls are counted apart (those the run names a model for)."""

    total: int
    already_done: int = 0
    already_solved: int = 0
    already_unscored: int = 0
    roles: tuple[str, ...] = (SOLVER, AUX)


@dataclass(frozen=True)
class StageStarted:
    """The runner moved to ``stage``; ``where`` places it (e.g. ``pass 1, task batch 2/5``)."""

    stage: str
    where: str = ""


@dataclass(frozen=True)
class RequestStarted:
    """A request left for the provider (it holds a slot of the run's concurrency)."""

    stage: str
    task_id: str | None = None


@dataclass(frozen=True)
class RequestEnded:
    """A request came back (answered or failed)."""

    stage: str
    task_id: str | None = None


@dataclass(frozen=True)
class CallAccounted:
    """A model call is done and counted: its fresh tokens and cost (None: unpriced)."""

    stage: str
    tokens: int
    cost_usd: float | None
    cache_hits: int = 0


@dataclass(frozen=True)
class TaskFinished:
    """A task has its final result."""

    result: TaskResult


@dataclass(frozen=True)
class RunStopped:
    """The run ended (finished, interrupted or aborted)."""


ProgressEvent = (
    RunStarted
    | StageStarted
    | RequestStarted
    | RequestEnded
    | CallAccounted
    | TaskFinished
    | RunStopped
)


class ProgressSink:
    """Receives a run's progress events; this one ignores them."""

    def emit(self, event: ProgressEvent) -> None:
        """Take one event (called from the run's event loop; keep it quick)."""


@dataclass
class RoleTally:
    """One model role's calls, fresh tokens and cost so far (None: a call was unpriced)."""

    calls: int = 0
    cache_hits: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0

    def add(self, event: CallAccounted) -> None:
        self.calls += 1
        self.cache_hits += event.cache_hits
        self.tokens += event.tokens
        if self.cost_usd is not None:
            self.cost_usd = None if event.cost_usd is None else self.cost_usd + event.cost_usd


def cost_text(cost_usd: float | None) -> str:
    return "cost unknown" if cost_usd is None else f"${cost_usd:,.2f}"


@dataclass
class ProgressState:
    """The run as the events so far describe it."""

    clock: Callable[[], float] = time.monotonic
    total: int = 0
    already_done: int = 0
    done: int = 0
    solved: int = 0
    unscored: int = 0  # finished tasks without labels (inference mode)
    stage: str = "start"
    where: str = ""
    in_flight: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    cache_hits: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0
    roles: dict[str, RoleTally] = field(default_factory=dict)
    given_roles: tuple[str, ...] = (SOLVER, AUX)  # counted apart (RunStarted.roles)
    started: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.clock()

    def apply(self, event: ProgressEvent) -> None:
        """Fold ``event`` into the state."""
        if isinstance(event, RunStarted):
            self.total, self.already_done = event.total, event.already_done
            # Earlier sessions' tasks count as they ended: a resumed run is not "solved 0".
            self.solved, self.unscored = event.already_solved, event.already_unscored
            self.given_roles = event.roles
            self.started = self.clock()
        elif isinstance(event, StageStarted):
            self.stage, self.where = event.stage, event.where
        elif isinstance(event, RequestStarted):
            self.in_flight[event.stage] += 1
        elif isinstance(event, RequestEnded):
            self.in_flight[event.stage] -= 1
            if self.in_flight[event.stage] <= 0:
                del self.in_flight[event.stage]
        elif isinstance(event, CallAccounted):
            self.calls += 1
            self.cache_hits += event.cache_hits
            self.tokens += event.tokens
            if self.cost_usd is not None:
                self.cost_usd = None if event.cost_usd is None else self.cost_usd + event.cost_usd
            role = role_of(event.stage, self.given_roles)
            self.roles.setdefault(role, RoleTally()).add(event)
        elif isinstance(event, TaskFinished):
            self.done += 1
            self.solved += event.result.solved
            self.unscored += event.result.score is None
        elif isinstance(event, RunStopped):
            self.stage, self.where = "done", ""

    @property
    def finished(self) -> int:
        """Tasks with a final result, earlier sessions included."""
        return self.already_done + self.done

    @property
    def elapsed_s(self) -> float:
        return self.clock() - self.started

    def eta_s(self) -> float | None:
        """Seconds left at this session's pace of finished tasks (None before the first)."""
        remaining = self.total - self.finished
        if remaining <= 0:
            return 0.0
        if self.done == 0:
            return None
        return self.elapsed_s / self.done * remaining

    def in_flight_text(self) -> str:
        """Requests in flight by stage, e.g. ``3 (solve 2, select 1)``."""
        count = sum(self.in_flight.values())
        if not count:
            return "0"
        parts = ", ".join(f"{stage} {n}" for stage, n in sorted(self.in_flight.items()))
        return f"{count} ({parts})"

    def solved_text(self) -> str:
        if self.finished and self.unscored == self.finished:
            return "unscored: no labels"
        return f"solved {self.solved}"

    def cost_text(self) -> str:
        return cost_text(self.cost_usd)

    def usage_text(self) -> str:
        """Calls, tokens and cost in all, then per model role, e.g. ``calls 22, tokens
        9,120, $0.24 (solver 8 calls, 4,000 tokens, $0.03; aux 14 calls, ...)``."""
        text = f"calls {self.calls:,}, tokens {self.tokens:,}, {self.cost_text()}"
        roles = [
            f"{role} {tally.calls:,} calls, {tally.tokens:,} tokens, {cost_text(tally.cost_usd)}"
            for role in MODEL_ROLES
            if (tally := self.roles.get(role)) is not None
        ]
        return f"{text} ({'; '.join(roles)})" if roles else text

    def stage_text(self) -> str:
        return f"{self.stage} ({self.where})" if self.where else self.stage

    def line(self) -> str:
        """One plain line with everything a person follows a run by."""
        eta = self.eta_s()
        return (
            f"[{clock_text(self.elapsed_s)}] tasks {self.finished}/{self.total} "
            f"({self.solved_text()}) | stage {self.stage_text()} | "
            f"in flight {self.in_flight_text()} | {self.usage_text()} | "
            f"ETA {'unknown' if eta is None else clock_text(eta)}"
        )


def clock_text(seconds: float) -> str:
    """``H:MM:SS`` of a duration."""
    whole = max(round(seconds), 0)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class PeriodicLines(ProgressSink):
    """For a log (nohup, SLURM): one plain progress line at the start, then one every
    ``every_s`` seconds whether or not anything happened, and a last one at the end."""

    def __init__(
        self,
        write: Callable[[str], None],
        every_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.write = write
        self.every_s = every_s
        self.state = ProgressState(clock=clock)
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def emit(self, event: ProgressEvent) -> None:
        with self._lock:
            self.state.apply(event)
        if isinstance(event, RunStarted):
            self._print()
            self._thread = threading.Thread(target=self._tick, daemon=True, name="progress")
            self._thread.start()
        elif isinstance(event, RunStopped):
            self._stopped.set()
            if self._thread is not None:
                self._thread.join()
            self._print()

    def _print(self) -> None:
        with self._lock:
            line = self.state.line()
        self.write(line)

    def _tick(self) -> None:
        while not self._stopped.wait(self.every_s):
            self._print()
