"""The token estimate: the fast count of large ASCII texts is the regex count."""

from __future__ import annotations

import random

import pytest

from arcmemo.core import tokens
from arcmemo.core.tokens import count_ascii_pieces, estimate_tokens

# Every class of character the pieces regex tells apart, and the edges between them.
_ALPHABET = "aZ09 \n\t\r\x0b\x0c\x1c\x1f.,:[]()-_'\"#" + "".join(map(chr, range(32)))


@pytest.mark.parametrize("seed", range(40))
def test_fast_ascii_count_is_the_regex_count(seed: int) -> None:
    rng = random.Random(seed)
    length = rng.choice([0, 1, 2, 3, 7, 50, 2_000])
    weights = [rng.random() for _ in _ALPHABET]
    text = "".join(rng.choices(_ALPHABET, weights=weights, k=length))
    text = text.replace("0", "0" * rng.randint(1, 8))  # digit runs of every length
    assert count_ascii_pieces(text) == len(tokens._PIECES.findall(text)), repr(text)


def test_large_texts_take_the_fast_path_and_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "- concept: rotate 90 degrees\n  cues: [[0, 1, 2], [345, 6789]]\n" * 5_000
    assert len(text) >= tokens._LARGE
    regex = len(tokens._PIECES.findall(text))
    calls = []
    monkeypatch.setattr(tokens, "count_ascii_pieces", lambda t: calls.append(t) or regex)
    assert estimate_tokens(text) == regex and calls == [text]
    assert estimate_tokens(text + "é") == regex + 1 and len(calls) == 1  # not ASCII: regex
    assert count_ascii_pieces(text) == regex
