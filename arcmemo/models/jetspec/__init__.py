"""Local generation on a GPU through JetSpec (``jetspec:MODEL_DIR``).

JetSpec (github hao-ai-lab/JetSpec, not on PyPI) runs one causal LM in-process and,
given a draft head, decodes it with lossless speculative *tree* decoding. The provider
turns arcmemo's chat requests into JetSpec calls:

* messages become a prompt through the target tokenizer's chat template
  (``enable_thinking`` from the ``thinking`` option), tokenized without extra special
  tokens so a template that already carries BOS is not doubled;
* each engine lives on its own worker thread fed from a queue, because a
  ``JetSpecEngine`` is not thread-safe; with ``devices=cuda:0,cuda:1`` there is one
  engine (and thread) per GPU and requests go to the least busy one;
* stop strings are applied after generation (JetSpec only stops at EOS or
  ``max_new_tokens``); ``n > 1`` runs sequentially, sampled (at 0.7 unless a temperature
  is given) with sample ``i`` seeded ``seed + i``;
* a request's timeout counts from when its engine starts it; its queue wait is reported
  as ``queue_s``;
* every completion carries JetSpec's statistics in ``Completion.stats``
  (see :class:`GenerationStats`).

The modules, by job: :mod:`.options` (the ``--model-arg`` options), :mod:`.stats` (what a
decode reports), :mod:`.engine` (a loaded engine: prompt, decode, completion),
:mod:`.worker` (the thread that owns an engine), :mod:`.hooks` (the KV pool and the
per-step deadline checkpoint arcmemo puts into a running engine), :mod:`.provider` (the
provider) and :mod:`.bench` (the plain vs speculative generation benchmark).

Neither torch nor jetspec is imported at module import time: both are imported on the
worker thread when the engine is built, so ``import arcmemo.models`` stays light.
"""

from arcmemo.models.jetspec.engine import LoadedEngine, apply_stop, split_thinking
from arcmemo.models.jetspec.hooks import EngineTimeout
from arcmemo.models.jetspec.options import (
    KNOWN_ATTN_BACKENDS,
    SAMPLING_TEMPERATURE,
    JetSpecOptions,
)
from arcmemo.models.jetspec.provider import JetSpecProvider, missing_runtime
from arcmemo.models.jetspec.stats import GenerationStats, StatsSummary, summarize_stats
from arcmemo.models.jetspec.worker import EngineWorker

__all__ = [
    "KNOWN_ATTN_BACKENDS",
    "SAMPLING_TEMPERATURE",
    "EngineTimeout",
    "EngineWorker",
    "GenerationStats",
    "JetSpecOptions",
    "JetSpecProvider",
    "LoadedEngine",
    "StatsSummary",
    "apply_stop",
    "missing_runtime",
    "split_thinking",
    "summarize_stats",
]
