"""A run's memory settings: the memory it reads and writes, how it selects from it and
writes to it, and the sandbox and prompts of its programs (the ``Memory`` and ``Sandbox``
options of ``arcmemo run``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from arcmemo.core.registry import ComponentSpec
from arcmemo.core.settings import Setting, Shortcut
from arcmemo.core.spellings import RUN_FLAGS
from arcmemo.library.task import LibraryScope
from arcmemo.run.roles import RoleSettings


class MemorySettings(RoleSettings):
    """The fields of :class:`~arcmemo.run.config.RunConfig` on its memory, selection,
    writes, sandbox and prompts."""

    memory: Annotated[
        Path | None, Setting("--memory", group="Memory", help="Memory file to read.")
    ] = Field(default=None, description="Memory file read (and written when online).")
    memory_out: Annotated[
        Path | None, Setting("--memory-out", group="Memory", help="Final memory (online).")
    ] = Field(default=None, description="Where the final memory goes (online).")
    selector: Annotated[
        ComponentSpec | None,
        Setting(
            "--select",
            group="Memory",
            results=True,
            registry="arcmemo.selection.base:SELECTORS",
            args="--select-arg",
            help="Selector (default: the benchmark's, llm; none without --memory).",
            shortcuts=(
                Shortcut(
                    "--memory-budget",
                    "budget_tokens",
                    int,
                    min=1,
                    help="Token cap on the memory a selector sees (budget_tokens).",
                ),
                Shortcut(
                    "--top-k",
                    "top_k",
                    int,
                    min=1,
                    help="Entries kept by --select embedding (top_k; default 8).",
                ),
                Shortcut(
                    "--embedder",
                    "embedder",
                    help="For --select embedding: tfidf (default, offline) or openai:MODEL.",
                ),
            ),
        ),
    ] = Field(
        default=None,
        description="Selector and its options; None = the benchmark's default (none without "
        "a memory).",
    )
    update: Annotated[
        Literal["none", "online"], Setting("--update", group="Memory", results=True)
    ] = Field(default="none", description="Continual memory writes.")
    update_every: Annotated[int, Setting("--update-every", group="Memory", results=True)] = Field(
        default=10,
        ge=1,
        description="Tasks per task batch: with --update online, the memory is written after each.",
    )
    schedule: Annotated[
        Literal["passes", "tasks"] | None,
        Setting(
            "--schedule",
            group="Solving",
            results=True,
            help="When retries run. passes (default with --update online; the paper's): first "
            "tries of every task, task batch by task batch (--update-every), then one pass of "
            "retries after another over the attempts still failing, so a retry sees the memory "
            "written by every task batch before it. tasks (default otherwise): each task's "
            "retries inline (more throughput).",
        ),
    ] = Field(
        default=None,
        description="When retries run. passes (the paper's continual setting): pass 0 gives "
        "every task its first tries, task batch by task batch, then pass p = 1..feedback_rounds "
        "retries the attempts still failing their visible examples, in task batches, so a "
        "retry sees what every earlier task batch wrote. tasks: each task's retries run inline "
        "within its task batch (more throughput; a retry sees nothing written after its task "
        "batch started). None = "
        "passes for --update online, tasks otherwise.",
    )
    reselect: Annotated[
        bool | None,
        Setting(
            "--reselect",
            group="Solving",
            results=True,
            help="Retries select memory entries again, from the memory as it stands then "
            "(default: on with --update online, off otherwise).",
        ),
    ] = Field(
        default=None,
        description="Retries select memory entries again (seeing the failed attempt) from "
        "the memory as it stands when the retry starts, instead of reusing the first "
        "selection. None = on for --update online, off otherwise.",
    )
    write_signal: Annotated[
        ComponentSpec | None,
        Setting(
            "--write-signal",
            group="Memory",
            results=True,
            deprecated=RUN_FLAGS["--write-signal"],
            registry="arcmemo.signals.base:WRITE_SIGNALS",
            help_from="arcmemo.cli.benchmark_help:write_signal_help",
        ),
    ] = Field(
        default=None,
        description="What confirms a solution for writing (train, consistency, oracle); None = "
        "the benchmark's default.",
    )
    attribution_judge: Annotated[
        bool,
        Setting(
            "--attribution-judge",
            group="Memory",
            results=True,
            help="Online runs: the aux model judges which shown concepts each solution used "
            "(one call per task; default: the lexical check alone).",
        ),
    ] = Field(
        default=False,
        description="Online runs: one aux-model call per final task judges which shown "
        "concepts its solution used (prompts/attribution/judge.j2), overriding the lexical "
        "check of the attribution statistics.",
    )
    library: Annotated[
        LibraryScope,
        Setting(
            "--library",
            group="Memory",
            results=True,
            help="Which memory functions (routine concepts' code) a task's programs may "
            "import from arcmemo_library: selected (default: those of the concepts the "
            "selector chose, which the prompt shows), all (every function; the prompt still "
            "shows the selected ones) or off. A task never gets the functions extracted from "
            "its own solution.",
        ),
    ] = Field(
        default="selected",
        description="Which memory functions a task's programs may import from "
        "arcmemo_library: selected (the selected concepts' functions, shown in the prompt), "
        "all (every non-retired concept's functions; the prompt shows the selected ones) or "
        "off. Functions extracted from a task's own solution are never in its library.",
    )
    memory_format: Annotated[
        ComponentSpec,
        Setting(
            "--memory-format",
            group="Memory",
            results=True,
            deprecated=RUN_FLAGS["--memory-format"],
            registry="arcmemo.abstraction.base:ABSTRACTORS",
            args="--memory-format-arg",
            args_deprecated=RUN_FLAGS["--memory-format-arg"],
            help="What memory writes produce: concepts (ps), lessons (oe) or a cheatsheet.",
        ),
    ] = Field(
        default=ComponentSpec(name="ps"),
        description="What memory writes produce: concepts (ps), lessons (oe) or a cheatsheet.",
    )
    sandbox: Annotated[
        ComponentSpec,
        Setting(
            "--sandbox",
            group="Sandbox",
            results=True,
            registry="arcmemo.sandbox:SANDBOXES",
            args="--sandbox-arg",
            help="Where model-written programs run: bwrap (kernel namespaces) or process "
            "(weaker; recorded in config.json and summary.json).",
        ),
    ] = Field(
        default=ComponentSpec(name="bwrap"),
        description="Where model-written programs run, with its limits.",
    )
    prompts: Annotated[
        Path | None,
        Setting(
            "--prompts",
            group="Solving",
            metavar="DIR",
            help="A folder of prompt templates, each replacing the one of prompts/ at the same "
            "relative path (DIR/arc/solve.j2 replaces prompts/arc/solve.j2); checked at start, "
            "and recorded by content in config.json (fingerprints.prompts).",
        ),
    ] = Field(
        default=None,
        description="Folder of templates that replace prompts/'s of the same relative path. "
        "Compared by content on resume and in tables (fingerprints.prompts), not by path.",
    )
