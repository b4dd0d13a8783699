"""Contrastive abstraction: learn from a passing and a failing attempt of the same task.

With the memory-format option ``contrast`` (``--memory-format-arg contrast=true``, ``ps``
and ``oe``), a task whose final attempts include one the write signal counts as passing and
one it counts as failing (:meth:`arcmemo.signals.base.WriteSignal.split`) is shown to the
abstract role's model with both and the failing one's feedback
(``prompts/abstraction/contrast.j2``): it answers with what the passing attempt does that
the failing one missed, as concepts (``ps``) or lessons (``oe``), and one pitfall lesson
that names the entry it guards (:attr:`arcmemo.memory.schema.Lesson.guards`). One call per
such task, after the task's ordinary abstraction.

Under ``train`` (ARC) passing means every visible example right; under ``consistency``
(AIME) a sample of the majority answer against one of another answer. A signal that reads
the hidden test labels (``oracle``) is refused unless the option ``contrast_signal`` names
it: the contrast would otherwise carry the labels into the memory unannounced
(:func:`arcmemo.signals.contrast.contrast_signal`).

With several passing or failing attempts the pair shown is the most different one: the
largest token-level edit distance between the two programs or answers (words and
punctuation as tokens, the first :data:`DISTANCE_TOKENS` of each), the earliest attempts on
a tie.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from arcmemo.abstraction.lessons import parse_lessons
from arcmemo.abstraction.outcome import AbstractionOutcome, ask
from arcmemo.abstraction.pitfall import feedback_text
from arcmemo.core.inlined_library import without_library
from arcmemo.core.records import Step, TaskResult
from arcmemo.memory.schema import Concept, Lesson, Memory
from arcmemo.models.client import ModelClient
from arcmemo.models.structured import OutputError, load_yaml_block

# The edit distance reads this many tokens of each side (its cost is their product).
DISTANCE_TOKENS = 400
_TOKEN = re.compile(r"\w+|[^\w\s]")


class ContrastOptions(BaseModel):
    """The contrast options of a memory format (mixed into its options model)."""

    model_config = ConfigDict(extra="forbid")

    contrast: bool = Field(
        default=False,
        description="Also abstract from a passing against a failing attempt of the same task "
        "(one abstract-model call per task that has both): entries for what the passing one "
        "does, and a pitfall tied to the entry it guards.",
    )
    contrast_signal: str | None = Field(
        default=None,
        description="The write signal that tells passing from failing attempts for the "
        "contrast (default: the run's). One that reads the test labels (oracle) is used only "
        "when named here.",
    )


class ContrastPair(BaseModel):
    """What a contrastive abstraction is shown for one task."""

    task_id: str
    domain: str
    problem: str = Field(description="The problem as text (never hidden labels).")
    passing: str = Field(description="The passing program or answer.")
    failing: str = Field(description="The failing program or answer.")
    feedback: str = Field(description="What checking the failing one showed.")
    distance: int = Field(description="Token edit distance between the two (how they differ).")


def tokens(text: str) -> list[str]:
    """Words and punctuation marks of ``text``, the first :data:`DISTANCE_TOKENS`."""
    return _TOKEN.findall(text)[:DISTANCE_TOKENS]


def edit_distance(a: list[str], b: list[str]) -> int:
    """Levenshtein distance between two token lists (insert, delete, substitute: 1 each)."""
    previous = list(range(len(b) + 1))
    for i, left in enumerate(a, 1):
        current = [i]
        for j, right in enumerate(b, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left != right))
            )
        previous = current
    return previous[-1]


def _text(step: Step) -> str:
    return without_library(step.candidate or step.completion)


def _feedback(failing: Step, passing: Step) -> str:
    if failing.checks or failing.parse_error:
        return feedback_text(failing)
    # An answer checked on no example (AIME): the signal's verdict is the feedback.
    return (
        f"its final answer {failing.prediction!r} differs from the passing attempt's "
        f"{passing.prediction!r}"
    )


def most_different(passing: list[Step], failing: list[Step]) -> tuple[Step, Step, int] | None:
    """The (passing, failing) pair with the largest token edit distance (the first on a
    tie); None without one of each."""
    best: tuple[Step, Step, int] | None = None
    for good in passing:
        good_tokens = tokens(_text(good))
        for bad in failing:
            distance = edit_distance(good_tokens, tokens(_text(bad)))
            if best is None or distance > best[2]:
                best = (good, bad, distance)
    return best


def contrast_pair(
    result: TaskResult, split: tuple[list[Step], list[Step]], *, domain: str, problem: str
) -> ContrastPair | None:
    """The pair a contrastive abstraction of ``result`` is shown, from the write signal's
    ``split`` of its final steps (passing, failing); None without one of each."""
    chosen = most_different(*split)
    if chosen is None:
        return None
    good, bad, distance = chosen
    return ContrastPair(
        task_id=result.task_id,
        domain=domain,
        problem=problem,
        passing=_text(good),
        failing=_text(bad),
        feedback=_feedback(bad, good),
        distance=distance,
    )


class ContrastAnswer(BaseModel):
    """A parsed contrastive answer: the entries and the pitfall."""

    entries: list[Any]
    pitfall: Lesson


def parse_pitfall(data: Any) -> Lesson:
    """The pitfall mapping of a contrastive answer: situation, suggestion, guards."""
    if not isinstance(data, dict):
        raise OutputError("expected 'pitfall' to be a mapping with situation, suggestion, guards")
    fields = {str(k).lower(): v for k, v in data.items()}
    situation, suggestion = fields.get("situation"), fields.get("suggestion")
    guards = fields.get("guards")
    if not situation or not suggestion or not guards:
        raise OutputError("the pitfall needs a non-empty situation, suggestion and guards")
    return Lesson(
        situation=str(situation),
        suggestion=str(suggestion),
        kind="pitfall",
        guards=str(guards).strip(),
    )


async def write_contrast(
    memory: Memory,
    pair: ContrastPair,
    model: ModelClient,
    *,
    fmt: str,
    actor: str,
    entries: str,
) -> AbstractionOutcome:
    """Ask the contrastive prompt and write its ``entries`` (``concepts`` or ``lessons``)
    and its pitfall into ``memory``."""
    from arcmemo.abstraction.ps import parse_concepts

    outcome = AbstractionOutcome(task_id=pair.task_id, format=fmt)

    def parse(text: str) -> ContrastAnswer:
        data = load_yaml_block(text)
        if not isinstance(data, dict) or not isinstance(data.get(entries), list):
            raise OutputError(f"expected a YAML mapping with '{entries}' (a list) and 'pitfall'")
        block = yaml.safe_dump(data[entries], sort_keys=False, allow_unicode=True)
        fenced = f"```yaml\n{block}```"
        items: list[Any]
        if entries == "concepts":
            items, errors = parse_concepts(fenced, memory)
            if errors:
                raise OutputError("; ".join(errors))
        else:
            items = parse_lessons(fenced)
        if not items:
            raise OutputError(f"'{entries}' holds nothing")
        pitfall = parse_pitfall(data.get("pitfall"))
        known = {e.name.lower() for e in items if isinstance(e, Concept)} | {
            e.situation.lower() for e in items if isinstance(e, Lesson)
        }
        assert pitfall.guards is not None
        if pitfall.guards.lower() not in known and memory.find(pitfall.guards) is None:
            raise OutputError(
                f"the pitfall guards {pitfall.guards!r}, which is neither one of the "
                f"{entries} written here nor a concept of the memory"
            )
        return ContrastAnswer(entries=items, pitfall=pitfall)

    answer = await ask(
        model,
        "abstraction/contrast",
        parse,
        task_id=pair.task_id,
        domain=pair.domain,
        entries=entries,
        memory=memory.render("compressed") if entries == "concepts" else "",
        problem=pair.problem,
        passing=pair.passing,
        failing=pair.failing,
        feedback=pair.feedback,
    )
    if not outcome.account(answer, "contrast"):
        return outcome
    for entry in answer.value.entries:
        if isinstance(entry, Concept):
            added = memory.add(
                entry,
                task_id=pair.task_id,
                actor=actor,
                why="abstracted from a passing against a failing attempt",
            )
            outcome.written.append(added.concept_id)
            outcome.conflicts += [f"{added.concept_id}: {c}" for c in added.conflicts]
        elif memory.add_lesson(entry, task_id=pair.task_id, actor=actor):
            outcome.written.append(f"lesson {len(memory.lessons)}")
    if memory.add_lesson(answer.value.pitfall, task_id=pair.task_id, actor=actor):
        outcome.written.append(f"pitfall lesson {len(memory.lessons)}")
    return outcome
