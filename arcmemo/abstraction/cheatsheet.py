"""The Dynamic Cheatsheet baseline: one free-text sheet rewritten after each solution."""

from __future__ import annotations

from collections.abc import Mapping

from arcmemo.abstraction.base import ABSTRACTORS, Abstractor
from arcmemo.abstraction.outcome import AbstractionOutcome, ask
from arcmemo.core.inlined_library import without_library
from arcmemo.core.records import SolvedItem
from arcmemo.memory.schema import HistoryEntry, Memory, Solution
from arcmemo.models.client import ModelClient
from arcmemo.models.structured import OutputError, tagged

# A rewrite that shrinks the sheet to a sliver of itself is a collapse, not a curation
# (a published DC run ended with an empty sheet); keep the old sheet instead.
MIN_KEPT_FRACTION = 0.2


@ABSTRACTORS.register("cheatsheet")
class CheatsheetAbstractor(Abstractor):
    """A curator prompt rewrites the whole sheet with each verified solution."""

    async def abstract(
        self, memory: Memory, item: SolvedItem, clients: Mapping[str, ModelClient]
    ) -> AbstractionOutcome:
        model = self.client(clients)
        outcome = AbstractionOutcome(task_id=item.task_id, format=self.name)
        old = memory.cheatsheet.strip()

        def parse(text: str) -> str:
            sheet = tagged(text, "cheatsheet")
            if not sheet:
                raise OutputError(
                    "expected the new cheatsheet inside <cheatsheet></cheatsheet> tags"
                )
            if old and len(sheet) < MIN_KEPT_FRACTION * len(old):
                raise OutputError(
                    f"the new cheatsheet ({len(sheet)} characters) drops most of the current one "
                    f"({len(old)} characters); rewrite it completely, keeping what is useful"
                )
            return sheet

        answer = await ask(
            model,
            "abstraction/cheatsheet",
            parse,
            task_id=item.task_id,
            domain=item.domain,
            cheatsheet=old,
            problem=item.problem,
            solution=without_library(item.solution),
        )
        if not outcome.account(answer, "cheatsheet"):
            return outcome
        memory.cheatsheet = answer.value
        # The problem is kept so that the DC-RS selector can retrieve similar solved ones.
        memory.solutions[item.task_id] = Solution(program=item.solution, problem=item.problem)
        memory.history.append(
            HistoryEntry(
                op="cheatsheet",
                target="cheatsheet",
                task_id=item.task_id,
                actor=self.actor,
                changes=[f"{len(old)} -> {len(answer.value)} characters"],
            )
        )
        outcome.written.append("cheatsheet")
        return outcome
