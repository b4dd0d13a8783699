"""Retired spellings and the words that replaced them: the one table old spellings are read
through.

Files written by an older arcmemo (``config.json``, ``schedule.json``, ...), the command line
(a retired flag still parses, with a warning naming the new one) and the inspect_ai task's
arguments all rename through here; nothing else in the package spells a retired word
(``tests/core/test_spellings.py`` checks it). ``docs/glossary.md`` lists the same words for
people.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Retired:
    """One retired spelling: ``old`` now reads as ``new``.

    ``where``: what spelled it (a file's field, a flag of a command, a value of an option).
    ``pattern``: a regular expression that finds the old spelling in the package's text and
    nothing that is still a word of it (None: the old spelling is also a current word
    elsewhere, e.g. ``--format`` of ``arcmemo table``, so only the aliases below know it).
    """

    old: str
    new: str
    where: str
    pattern: str | None = None


# Fields of files and models: old key -> new key.
RUN_CONFIG_FIELDS: Mapping[str, str] = {"retries": "feedback_rounds"}
MODEL_CONFIG_FIELDS: Mapping[str, str] = {"max_retries": "request_retries"}
BATCH_RECORD_FIELDS: Mapping[str, str] = {"round": "rerun"}
INSPECT_TASK_ARGS: Mapping[str, str] = {"retries": "feedback_rounds", "format": "memory_format"}
# summary.json before format 4: the code convention's scores were published_*.
SUMMARY_KEYS: Mapping[str, str] = {
    "published_score": "code_score",
    "published_strict_score": "code_strict_score",
    "published_by_retry": "code_by_retry",
    "published_strict_by_retry": "code_strict_by_retry",
}

# Values: old -> new.
SCORING_CONVENTIONS: Mapping[str, str] = {"arcmemo": "text", "published": "code"}

# Flags of `arcmemo run` (and every command built from the run settings): new -> old
# spellings, accepted with a warning naming the new one.
RUN_FLAGS: Mapping[str, tuple[str, ...]] = {
    "--feedback-rounds": ("--retries",),
    "--write-signal": ("--update-signal",),
    "--memory-format": ("--format",),
    "--memory-format-arg": ("--format-arg",),
}
# Other spellings of a flag, accepted as equals (no warning): new -> old.
RUN_FLAG_ALIASES: Mapping[str, tuple[str, ...]] = {"--request-retries": ("--max-retries",)}
# Flags of `arcmemo abstract`: new -> old.
ABSTRACT_FLAGS: Mapping[str, tuple[str, ...]] = {"--write-signal": ("--signal",)}

RETIRED: tuple[Retired, ...] = (
    Retired("--retries", "--feedback-rounds", "arcmemo run", r"--retries\b"),
    Retired("retries", "feedback_rounds", "config.json, RunConfig, RunDefaults, inspect task"),
    Retired("retries_reselect", "feedback_rounds_reselect", "RunConfig", r"\bretries_reselect\b"),
    Retired("retries_help", "feedback_rounds_help", "arcmemo.cli", r"\bretries_help\b"),
    Retired("RETRIES", "FEEDBACK_ROUNDS", "experiments/common.sh", r"\bRETRIES\b"),
    Retired("max_retries", "request_retries", "config.json models, ModelConfig"),
    Retired("--update-signal", "--write-signal", "arcmemo run", r"--update-signal\b"),
    Retired("--signal", "--write-signal", "arcmemo abstract"),
    Retired("--format", "--memory-format", "arcmemo run (the output format elsewhere)"),
    Retired("--format-arg", "--memory-format-arg", "arcmemo run", r"--format-arg\b"),
    Retired("format", "memory_format", "inspect task argument"),
    Retired("round", "rerun", "schedule.json batch record"),
    Retired("retries", "feedback rounds", "the ARC tables' first column (arcmemo table)"),
    Retired("arcmemo", "text", "arcmemo table --convention"),
    Retired("published", "code", "arcmemo table --convention"),
    Retired("run0 run1 ...", "attempt 1 attempt 2 ...", "the ARC tables' columns (arcmemo table)"),
    Retired("by_run", "by_attempt_index", "benchmarks.arc.scoring", r"\bby_run\b"),
    Retired("n_runs", "n_attempt_indices", "benchmarks.arc.scoring", r"\bn_runs\b"),
    *(
        Retired(old, new, "summary.json (before format 4)", rf"\b{old}\b")
        for old, new in SUMMARY_KEYS.items()
    ),
    Retired("published_scores", "code_scores", "Benchmark", r"\bpublished_scores\b"),
    Retired("published_runs", "code_runs", "benchmarks.base", r"\bpublished_runs\b"),
    Retired("RunBatch", "ProviderBatch", "arcmemo.run.provider_batches", r"\bRunBatch\b"),
)


def renamed_fields(
    raw: Any, table: Mapping[str, str], warn: Callable[[str], None] | None = None
) -> Any:
    """``raw`` with each old key of ``table`` under its new name (a mapping; anything else
    is returned as it is, for the validator to refuse). The new spelling wins when both are
    there. ``warn`` hears of each old key read."""
    if not isinstance(raw, Mapping) or not any(old in raw for old in table):
        return raw
    renamed = dict(raw)
    for old, new in table.items():
        if old in renamed:
            value = renamed.pop(old)
            renamed.setdefault(new, value)
            if warn is not None:
                warn(f"{old} is deprecated; use {new}")
    return renamed


def current_value(value: Any, table: Mapping[str, str]) -> Any:
    """``value`` under its new spelling when it is a retired one of ``table``."""
    return table.get(value, value) if isinstance(value, str) else value
