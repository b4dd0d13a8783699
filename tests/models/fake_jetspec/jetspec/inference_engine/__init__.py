"""Fake ``JetSpecEngine`` and ``SamplingParams`` with the real signatures (see README.md)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from jetspec.inference_engine import engine as _steps

EOS, BOS, THINK_OPEN, THINK_CLOSE, UNK = "<|im_end|>", "<s>", "<think>", "</think>", "<unk>"
CHAT_TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }} {{ m.content }}{% endfor %}"

instances: list[JetSpecEngine] = []  # every engine built, for tests


@dataclass
class SamplingParams:
    temperature: float = 0.0
    max_new_tokens: int = 256


class FakeTokenizer:
    """Word-level tokenizer with a Qwen-like chat template rendered in Python."""

    def __init__(self, chat_template: str | None) -> None:
        self.chat_template = chat_template
        self.vocab: dict[str, int] = {}
        for word in (EOS, BOS, THINK_OPEN, THINK_CLOSE, UNK):
            self.vocab[word] = len(self.vocab)
        self.eos_token_id = self.vocab[EOS]
        self.unk_token_id = self.vocab[UNK]
        self.template_calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def id_of(self, word: str) -> int:
        with self._lock:
            return self.vocab.setdefault(word, len(self.vocab))

    def apply_chat_template(
        self,
        conversation: list[dict[str, str]],
        tokenize: bool = True,
        add_generation_prompt: bool = False,
        **kwargs: Any,
    ) -> str:
        if tokenize:
            raise AssertionError("the fake only renders text (tokenize=False)")
        self.template_calls.append({"add_generation_prompt": add_generation_prompt, **kwargs})
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}{EOS}\n" for m in conversation)
        if add_generation_prompt:
            text += "<|im_start|>assistant\n"
            if kwargs.get("enable_thinking", True) is False:
                text += f"{THINK_OPEN}\n\n{THINK_CLOSE}\n\n"
        return text

    def __call__(
        self, text: str, add_special_tokens: bool = True, return_tensors: str | None = None
    ) -> Any:
        ids = [self.id_of(word) for word in text.split()]
        if add_special_tokens:
            ids = [self.vocab[BOS], *ids]

        class _Encoding:
            input_ids = torch.tensor([ids]) if return_tensors == "pt" else ids

        return _Encoding()

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        words = {i: w for w, i in self.vocab.items()}
        skipped = {self.vocab[EOS], self.vocab[BOS]} if skip_special_tokens else set()
        return " ".join(words[i] for i in ids if i not in skipped)

    def convert_tokens_to_ids(self, token: str) -> int:
        return self.vocab.get(token, self.unk_token_id)


class _Config:
    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size


class _Model:
    def __init__(self, vocab_size: int) -> None:
        self.config = _Config(vocab_size)


class JetSpecEngine:
    """Replies with the words in ``fake_model.json``; raises on misuse like the real one."""

    def __init__(
        self,
        model_name_or_path: str,
        device: str = "cuda",
        dtype: Any = torch.bfloat16,
        block_size: int = 16,
        attn_implementation: str = "sdpa",
        attn_backend: str = "sdpa",
        fuse_gemms: bool = False,
        torch_compile: bool = False,
        fused_moe: bool = False,
    ) -> None:
        config_path = Path(model_name_or_path) / "fake_model.json"
        if not config_path.is_file():
            raise OSError(f"{model_name_or_path} does not appear to have a file named config.json")
        self.config = json.loads(config_path.read_text())
        self.init_args = {
            "model_name_or_path": model_name_or_path,
            "device": device,
            "dtype": dtype,
            "block_size": block_size,
            "attn_implementation": attn_implementation,
            "attn_backend": attn_backend,
            "fuse_gemms": fuse_gemms,
            "torch_compile": torch_compile,
            "fused_moe": fused_moe,
        }
        self.device = device
        self.dtype = dtype
        self.block_size = block_size
        self.attn_backend = attn_backend
        self.resolved_attn_implementation = attn_implementation
        template = self.config.get("chat_template", CHAT_TEMPLATE)
        self.tokenizer = FakeTokenizer(template or None)
        self.model = _Model(vocab_size=128)
        self.eos_token_ids = {self.tokenizer.eos_token_id}
        self.calls: list[dict[str, Any]] = []
        self.threads: set[int] = set()
        self._busy = False
        self._busy_lock = threading.Lock()
        self._tree_session: dict[str, Any] | None = None
        instances.append(self)

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        with self._busy_lock:
            if self._busy:
                raise RuntimeError("JetSpecEngine entered from two threads at once")
            self._busy = True
            self.threads.add(threading.get_ident())
        try:
            time.sleep(self.config.get("delay_s", 0.002))  # widen the window for races
            yield
        finally:
            with self._busy_lock:
                self._busy = False

    def _prompt_ids(self, prompt: Any) -> list[int]:
        if isinstance(prompt, str):
            return self.tokenizer(prompt, return_tensors="pt").input_ids.tolist()[0]
        if not isinstance(prompt, torch.Tensor) or prompt.shape[0] != 1:
            raise ValueError("prompt must be a str or a (1, T) input_ids tensor (batch size 1)")
        return prompt.tolist()[0]

    def _reply_ids(self, max_new_tokens: int, tree: bool = False, draw: int = 0) -> list[int]:
        words = [f"s{draw}"] if draw else []  # a sampled decode starts with what it drew
        reply = self.config.get("tree_reply") if tree else None  # simulate a lossy engine
        if self.config.get("thinking"):
            words += [THINK_OPEN, *self.config["thinking"].split(), THINK_CLOSE]
        words += (reply if reply is not None else self.config.get("reply", "")).split()
        if self.config.get("eos", True):
            words.append(EOS)
        return [self.tokenizer.id_of(w) for w in words][:max_new_tokens]

    def _result(self, ids: list[int]) -> dict[str, Any]:
        return {"token_ids": ids, "text": self.tokenizer.decode(ids, skip_special_tokens=True)}

    def _step(self) -> None:
        time.sleep(self.config.get("step_delay_s", 0))

    def generate(self, prompt: Any, sampling_params: SamplingParams | None = None) -> dict:
        sp = sampling_params or SamplingParams()
        with self._exclusive():
            prompt_ids = self._prompt_ids(prompt)
            self.calls.append({"mode": "plain", "prompt_ids": prompt_ids, "sampling": sp})
            draw = _steps.sample(None, sp.temperature)  # prefill samples the first token
            ids = self._reply_ids(sp.max_new_tokens, draw=draw)
            for _ in ids[1:]:  # one sampler call per decoding step, as in the real loop
                self._step()
                _steps.sample(None, sp.temperature)
            return self._result(ids)

    def generate_tree(
        self,
        prompt: Any,
        tree_drafter: Any,
        block_size: int = 4,
        tree_width: int = 2,
        budget: int = 15,
        algo: str = "accum_logp",
        algo_kwargs: dict | None = None,
        target_layer_ids: Any = None,
        sampling_params: SamplingParams | None = None,
        return_stats: bool = False,
        prompt_info: dict | None = None,
        profile_table: dict | None = None,
        tree_diag: bool = False,
        session: bool = False,
        session_prompt_capacity: int | None = None,
        max_tree_depth: int | None = None,
        tree_depth: int | None = None,
        extend_kwargs: dict | None = None,
    ) -> dict:
        sp = sampling_params or SamplingParams()
        with self._exclusive():
            prompt_ids = self._prompt_ids(prompt)
            if tree_depth is not None:
                if tree_depth < 1:
                    raise ValueError(f"tree_depth must be >= 1; got {tree_depth}")
                if block_size != 4 and block_size != tree_depth + 1:
                    raise ValueError(
                        "block_size and tree_depth disagree: "
                        f"block_size={block_size} implies tree_depth={block_size - 1}, "
                        f"but tree_depth={tree_depth}"
                    )
                block_size = tree_depth + 1
            if not hasattr(tree_drafter, "propose_logits"):
                raise TypeError("tree_drafter must provide propose_logits")
            drafter_block = getattr(tree_drafter, "block_size", None)
            if drafter_block is not None and drafter_block != block_size:
                raise ValueError(f"drafter block_size {drafter_block} != block_size {block_size}")
            head_taps = getattr(tree_drafter, "target_layer_ids", None)
            if head_taps is not None and list(target_layer_ids or []) != list(head_taps):
                raise ValueError("target_layer_ids must be the draft head's tap layers")
            if hasattr(tree_drafter, "reset_cache"):
                tree_drafter.reset_cache()
            if session:
                self._check_session(
                    len(prompt_ids), session_prompt_capacity, block_size, budget, sp
                )
            self.calls.append(
                {
                    "mode": "tree",
                    "prompt_ids": prompt_ids,
                    "sampling": sp,
                    "block_size": block_size,
                    "tree_depth": tree_depth,
                    "tree_width": tree_width,
                    "budget": budget,
                    "algo": algo,
                    "session": session,
                    "session_prompt_capacity": session_prompt_capacity,
                }
            )
            draw = _steps.sample(None, sp.temperature)  # prefill samples the first token
            ids = self._reply_ids(sp.max_new_tokens, tree=True, draw=draw)
            out = self._result(ids)
            if ids and ids[0] in self.eos_token_ids:  # EOS at prefill: no stats keys
                return {**out, "tpf": 0.0}
            per_round = tree_drafter.acceptance or block_size
            accept_lengths, remaining = [], len(ids) - 1  # the first token comes from prefill
            while remaining > 0:
                tree_drafter.propose_logits(None, block_size - 1)  # one draft per round
                self._step()
                accept_lengths.append(min(per_round, remaining))
                remaining -= accept_lengths[-1]
            rounds = len(accept_lengths)
            out["tpf"] = len(ids) / rounds if rounds else 0.0
            if return_stats:
                out.update(
                    accept_lengths=accept_lengths, tree_sizes=[budget] * rounds, rounds=rounds
                )
            return out

    def _check_session(
        self,
        prompt_len: int,
        capacity: int | None,
        block_size: int,
        budget: int,
        sp: SamplingParams,
    ) -> None:
        tag = {"block_size": block_size, "budget": budget, "max_new_tokens": sp.max_new_tokens}
        if self._tree_session is None:
            cap = capacity if capacity is not None else ((prompt_len + 255) // 256) * 256
            if prompt_len > cap:
                raise ValueError("tree session prompt_len mismatch")
            self._tree_session = {"prompt_capacity": cap, "tag": tag}
            return
        problems = [f"{k} mismatch" for k, v in tag.items() if self._tree_session["tag"][k] != v]
        if capacity is not None and capacity != self._tree_session["prompt_capacity"]:
            problems.append("session_prompt_capacity mismatch")
        if prompt_len > self._tree_session["prompt_capacity"]:
            problems.append("prompt_len mismatch")
        if problems:
            raise ValueError("tree session mismatch: " + "; ".join(problems))
