"""A loaded JetSpecEngine with its tokenizer and drafter: prompts in, completions out.

It is used only on its worker's thread (:mod:`arcmemo.models.jetspec.worker`); torch and
jetspec are imported when it is built, never at module import.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from arcmemo.core.tokens import Usage
from arcmemo.models.base import Completion, GenerateParams, Message, ProviderError
from arcmemo.models.jetspec import hooks
from arcmemo.models.jetspec.options import STUB_TREE_DEPTH, JetSpecOptions
from arcmemo.models.jetspec.stats import GenerationStats
from arcmemo.models.registry import JETSPEC_INSTALL_HINT

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"


def apply_stop(text: str, stop: Iterable[str] | None) -> tuple[str, bool]:
    """Cut ``text`` at the earliest stop string; return (text, whether one was found)."""
    cut = min((i for s in stop or () if s and (i := text.find(s)) >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


def split_thinking(text: str) -> tuple[str | None, str]:
    """Split Qwen3-style ``<think>...</think>`` off the answer: (reasoning, answer)."""
    if _THINK_CLOSE not in text:
        return None, text
    reasoning, _, answer = text.partition(_THINK_CLOSE)
    return reasoning.replace(_THINK_OPEN, "", 1).strip(), answer.lstrip()


@dataclass(frozen=True)
class JobContext:
    """What the worker tells the engine about the job it runs now."""

    queue_s: float = 0.0
    timeout_s: float | None = None
    abort: threading.Event = field(default_factory=threading.Event)


def chat_text(tokenizer: Any, messages: list[Message], *, thinking: bool) -> str:
    """``messages`` through the tokenizer's chat template, ending with the assistant turn's
    opening: the text the engine is given (also what a recipe measures with)."""
    if not getattr(tokenizer, "chat_template", None):
        raise ProviderError(
            "jetspec provider: the tokenizer of this model has no chat template; "
            "add one (tokenizer_config.json 'chat_template') to use it with arcmemo"
        )
    text: str = tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in messages],
        tokenize=False,
        add_generation_prompt=True,
        enable_thinking=thinking,
    )
    return text


class LoadedEngine:
    """A JetSpecEngine with its tokenizer and drafter; used only on its worker's thread."""

    def __init__(self, model_dir: str, options: JetSpecOptions, device: str | None, index: int):
        try:
            import torch
            from jetspec.inference_engine import JetSpecEngine, SamplingParams
        except ImportError as error:
            raise ProviderError(
                f"jetspec provider: cannot import {error.name}. {JETSPEC_INSTALL_HINT}"
            ) from error
        self.torch = torch
        self.sampling_params_class = SamplingParams
        self.job: JobContext | None = None
        try:
            from jetspec.inference_engine import engine as engine_module
        except ImportError:  # a JetSpec laid out otherwise: no step checkpoints, upstream KV
            engine_module = None
        if engine_module is not None:
            hooks.install(engine_module, compaction=options.round_ring > 0)
        self.options = options
        self.index = index
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.engine = JetSpecEngine(
            model_dir,
            device=self.device,
            dtype=getattr(torch, options.dtype),
            block_size=options.kv_block_size,
            attn_implementation=options.attn_implementation,
            attn_backend=options.attn_backend,
            fuse_gemms=options.fuse_gemms,
            torch_compile=options.torch_compile,
            fused_moe=options.fused_moe,
        )
        self.tokenizer = self.engine.tokenizer
        layers = getattr(getattr(self.engine.model, "config", None), "num_hidden_layers", None)
        logical_kv = options.attn_backend.endswith("_nogather")
        # the blocks a verify round leases: its tree padded to JetSpec's bucket for the budget
        bucket = getattr(engine_module, "_bucket_for_n", None)
        round_blocks = (
            -(-int(bucket(options.budget)) // options.kv_block_size)
            if options.round_ring and logical_kv and options.lean and bucket is not None
            else None
        )
        hooks.configure_thread(
            kv_pool=options.kv_pool,
            layers=layers,
            lean=options.lean,
            logical_kv=logical_kv,
            round_blocks=round_blocks,
            round_ring=options.round_ring,
        )
        if options.lean and getattr(self.engine, "runner", None) is not None:
            hooks.trim_prefill_logits(self.engine.runner)
        self.drafter: Any = None
        self.target_layer_ids: list[int] | None = None
        self.tree_depth = options.tree_depth or STUB_TREE_DEPTH
        if options.draft is not None:
            self._build_drafter(options.draft)
        self._session_key: tuple[int, int] | None = None

    def _build_drafter(self, draft: str) -> None:
        options = self.options
        if draft == "random":
            from jetspec.draft import RandomTreeDrafter

            self.drafter = RandomTreeDrafter(self.engine.model.config.vocab_size)
            return
        if draft == "lookup":
            from arcmemo.models.jetspec.lookup import PromptLookupDrafter

            self.drafter = PromptLookupDrafter(
                self.engine.model.config.vocab_size, width=options.width
            )
            return
        if draft == "echo":
            from jetspec.draft import TargetEchoTreeDrafter

            self.drafter = TargetEchoTreeDrafter(self.engine.model)
            return
        from jetspec.draft_head_adapter import (
            CompiledDraftHead,
            DraftHeadTreeDrafter,
            GraphedDraftHead,
        )
        from jetspec.models.draft_head import load_draft_head

        head = load_draft_head(
            draft,
            device=self.device,
            dtype=getattr(self.torch, options.dtype),
            attn_implementation=getattr(
                self.engine, "resolved_attn_implementation", options.attn_implementation
            ),
        )
        self.target_layer_ids = list(head.target_layer_ids)
        # The drafter may draft deeper than the head was trained for; JetSpec sizes it
        # as tree_depth + 1 and needs the same block size in generate_tree.
        self.tree_depth = options.tree_depth or int(head.block_size) - 1
        drafter_class = {
            "eager": DraftHeadTreeDrafter,
            "compiled": CompiledDraftHead,
            "graphed": GraphedDraftHead,
        }[options.drafter]
        self.drafter = drafter_class(
            head,
            target=self.engine.model,
            block_size=self.tree_depth + 1,
            target_layer_ids=self.target_layer_ids,
            draft_shift=False,
        )

    # -- prompt --------------------------------------------------------------------------

    def render_prompt(self, messages: list[Message]) -> str:
        """The chat-templated prompt text, ending with the assistant turn's opening."""
        return chat_text(self.tokenizer, messages, thinking=self.options.thinking)

    def encode(self, prompt: str) -> Any:
        """Prompt ids as a (1, T) tensor; the template already holds any special tokens."""
        return self.tokenizer(prompt, add_special_tokens=False, return_tensors="pt").input_ids

    # -- decoding ------------------------------------------------------------------------

    def _synchronize(self) -> None:
        if str(self.device).startswith("cuda"):
            self.torch.cuda.synchronize(self.device)

    def sampling_params(self, params: GenerateParams) -> Any:
        """JetSpec's SamplingParams for a request (temperature and max_new_tokens only)."""
        temperature = self.options.temperature_for(params.temperature, params.n)
        max_new = params.max_tokens or self.options.max_tokens
        return self.sampling_params_class(temperature=temperature, max_new_tokens=max_new)

    def tree_kwargs(self, prompt_len: int, max_new_tokens: int) -> dict[str, Any]:
        """Keyword arguments of ``generate_tree`` (except prompt, drafter, sampling_params)."""
        options = self.options
        kwargs: dict[str, Any] = {
            # block_size must equal tree_depth + 1, or JetSpec raises
            "block_size": self.tree_depth + 1,
            "tree_depth": self.tree_depth,
            "tree_width": options.width,
            "budget": options.budget,
            "algo": options.algo,
            "target_layer_ids": self.target_layer_ids,
            "return_stats": True,
        }
        if options.session:
            kwargs["session"] = True
            kwargs["session_prompt_capacity"] = self._session_capacity(prompt_len, max_new_tokens)
        return kwargs

    def _session_capacity(self, prompt_len: int, max_new_tokens: int) -> int:
        # A JetSpec session is tagged with max_new_tokens and caps the prompt length; a
        # request outside it would raise, so drop the session (no public reset exists).
        key = self._session_key
        if key is None or max_new_tokens != key[0] or prompt_len > key[1]:
            wanted = ((prompt_len + 255) // 256) * 256
            capacity = max(self.options.session_prompt_capacity or 0, wanted)
            if key is not None:
                self.engine._tree_session = None
            key = self._session_key = (max_new_tokens, capacity)
        return key[1]

    def decode(self, input_ids: Any, sampling_params: Any, speculative: bool) -> tuple[dict, float]:
        """One engine call; returns JetSpec's result dict and its synchronized wall time."""
        if speculative and self.drafter is None:
            raise ProviderError("jetspec provider: speculative decoding needs draft=...")
        # prompt + new tokens + the nodes of one verify round
        tree = self.options.budget + self.tree_depth + 1 if speculative else 1
        hooks.expect_tokens(int(input_ids.shape[1]) + sampling_params.max_new_tokens + tree)
        self._synchronize()
        start = time.perf_counter()
        if speculative:
            result = self.engine.generate_tree(
                input_ids,
                hooks.DeadlineDrafter(self.drafter),
                sampling_params=sampling_params,
                **self.tree_kwargs(int(input_ids.shape[1]), sampling_params.max_new_tokens),
            )
        else:
            result = self.engine.generate(input_ids, sampling_params)
        self._synchronize()
        return result, time.perf_counter() - start

    def complete(
        self, messages: list[Message], params: GenerateParams, speculative: bool
    ) -> list[Completion]:
        """``params.n`` completions, decoded one after another.

        When sampling, sample ``i`` is seeded with ``params.seed + i`` (with no seed, torch's
        generator simply runs on, so the samples still differ). Each sample's decode must
        finish within the job's timeout, counted from its own start.
        """
        job = self.job or JobContext()
        input_ids = self.encode(self.render_prompt(messages))
        prompt_tokens = int(input_ids.shape[1])
        sampling_params = self.sampling_params(params)
        sampling = sampling_params.temperature > 0
        completions = []
        for index in range(params.n):
            seed = params.seed + index if sampling and params.seed is not None else None
            if seed is not None:
                self.torch.manual_seed(seed)
            hooks.set_checkpoint(self._deadline_check(job))
            try:
                result, seconds = self.decode(input_ids, sampling_params, speculative)
            finally:
                hooks.set_checkpoint(None)
            completion = self._completion(result, seconds, prompt_tokens, params, speculative)
            completion.stats.update(
                queue_s=job.queue_s,
                temperature=float(sampling_params.temperature),
                sample=index,
                seed=seed,
            )
            completions.append(completion)
        return completions

    @staticmethod
    def _deadline_check(job: JobContext) -> Any:
        deadline = None if job.timeout_s is None else time.monotonic() + job.timeout_s

        def check() -> None:
            if job.abort.is_set():
                raise hooks.EngineTimeout("the request was abandoned by its caller")
            if deadline is not None and time.monotonic() > deadline:
                raise hooks.EngineTimeout(
                    f"decoding took longer than {job.timeout_s:g} s after the engine started it"
                )

        return check

    def _completion(
        self,
        result: Mapping[str, Any],
        seconds: float,
        prompt_tokens: int,
        params: GenerateParams,
        speculative: bool,
    ) -> Completion:
        token_ids = [int(t) for t in result["token_ids"]]
        generated = len(token_ids)
        ended_by_eos = bool(token_ids) and token_ids[-1] in self.engine.eos_token_ids
        text, stopped = apply_stop(result["text"], params.stop)
        reasoning, answer = split_thinking(text)
        if speculative:
            # generate_tree omits the stats keys when the first token is EOS
            rounds = int(result.get("rounds", 0))
            accept_lengths = result.get("accept_lengths") or []
            tree_sizes = result.get("tree_sizes") or []
            tokens_per_round = float(result.get("tpf", 0.0))
            mean_accept = sum(accept_lengths) / rounds if rounds and accept_lengths else None
            mean_tree = sum(tree_sizes) / len(tree_sizes) if tree_sizes else None
        else:
            rounds, tokens_per_round, mean_accept, mean_tree = generated, 1.0, None, None
        stats = GenerationStats(
            mode="speculative" if speculative else "plain",
            device=str(self.device),
            engine=self.index,
            prompt_tokens=prompt_tokens,
            generated_tokens=generated,
            rounds=rounds,
            tokens_per_round=tokens_per_round,
            mean_accept_length=mean_accept,
            mean_tree_size=mean_tree,
            generation_s=seconds,
            tokens_per_s=generated / seconds if seconds > 0 else 0.0,
        )
        return Completion(
            text=answer,
            reasoning=reasoning,
            finish_reason="stop" if stopped or ended_by_eos else "length",
            usage=Usage(
                prompt_tokens=prompt_tokens,
                completion_tokens=generated,
                reasoning_tokens=self._reasoning_tokens(token_ids),
            ),
            latency_s=seconds,
            stats=stats.model_dump(),
        )

    def _reasoning_tokens(self, token_ids: list[int]) -> int:
        close_id = self.tokenizer.convert_tokens_to_ids(_THINK_CLOSE)
        if close_id is None or close_id == getattr(self.tokenizer, "unk_token_id", None):
            return 0
        return token_ids.index(close_id) + 1 if close_id in token_ids else 0

    def close(self) -> None:
        """Drop the engine and give its GPU memory back (JetSpec has no close()).

        An engine of a compiled backend leaves torch.compile cache entries whose guards
        point at its dead modules; the next compiled engine in the process would trip over
        them while recompiling (a TypeError inside dynamo's recompilation report, seen with
        torch 2.11), so they are dropped with it.
        """
        on_cuda = str(self.device).startswith("cuda")
        self.engine = self.drafter = self.tokenizer = None
        if self.options.compiles:
            gc.collect()
            self.torch._dynamo.reset()
        if on_cuda:
            self.torch.cuda.empty_cache()
