"""A minimal stand-in for torch: only what arcmemo's jetspec provider and the fake use."""

from __future__ import annotations

import contextlib
import random
import threading

float32 = "torch.float32"
float16 = "torch.float16"
bfloat16 = "torch.bfloat16"
long = "torch.int64"

seeds: list[int] = []  # every manual_seed call, for tests
_lock = threading.Lock()
_generator = random.Random(0)  # the "global generator" that manual_seed reseeds


class Tensor:
    """A 2-D list of ints with the few tensor methods the provider touches."""

    def __init__(self, rows: list[list[int]]) -> None:
        self.rows = [list(row) for row in rows]

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.rows), len(self.rows[0]) if self.rows else 0)

    def tolist(self) -> list[list[int]]:
        return [list(row) for row in self.rows]

    def to(self, *args: object, **kwargs: object) -> Tensor:
        return self


def tensor(rows: list[list[int]], dtype: object = None, device: object = None) -> Tensor:
    return Tensor(rows)


def manual_seed(seed: int) -> None:
    with _lock:
        seeds.append(int(seed))
        _generator.seed(int(seed))


def fake_draw() -> int:
    """One draw from the global generator (what torch.multinomial would consume)."""
    with _lock:
        return _generator.randrange(10**6)


class _Cuda:
    synchronized: list[object]

    def __init__(self) -> None:
        self.synchronized = []

    def is_available(self) -> bool:
        return False

    def synchronize(self, device: object = None) -> None:
        self.synchronized.append(device)

    def empty_cache(self) -> None:
        pass


cuda = _Cuda()


class _Dynamo:
    """torch._dynamo: counts resets (closing an engine of a compiled backend resets it)."""

    def __init__(self) -> None:
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1


_dynamo = _Dynamo()


def inference_mode() -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()
