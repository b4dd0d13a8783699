"""Every parser of model text gives what a simple reference implementation gives, and does
work linear in its input (counted, not timed: experiments/parsers_bench.py times them).

The references are the straightforward (quadratic on adversarial input) readings the
parsers replaced; Hypothesis draws texts from fragments that attack them: repeated
openers, unclosed tags and fences, nesting, huge numbers, mixed line endings.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from arcmemo.benchmarks.aime.answers import extract_answer, normalize_answer
from arcmemo.benchmarks.arc.prompt import find_program
from arcmemo.models.structured import fenced_blocks, fenced_spans, tagged
from arcmemo.sandbox.text import clean_text

FRAGMENTS = [
    "\\boxed{", "\\boxed ", "\\fbox{", "{", "}", "\\{", "\\}", "\\", "12", "016", "9" * 30,
    "-3", "1,000", "<pseudocode>", "</pseudocode>", "<summary>", "```", "```python\n",
    "```yaml x\n", "\n", "\r\n", "\r", " ", "\t", "answer:", "Final Answer", "answer is",
    "the", "$", ".", ")", "*", "def transform(grid):\n", "    return grid\n", "import numpy\n",
]  # fmt: skip
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)


def reference_boxed(text: str) -> str | None:
    """The last complete box, each scanned to its close from its opening brace."""
    found = None
    for match in re.finditer(r"\\(?:boxed|fbox)(?![A-Za-z])\s*", text):
        start = match.end()
        content = None
        if start < len(text) and text[start] == "{":
            depth = 0
            for index in range(start, len(text)):
                if text[index] in "{}" and text[index - 1] != "\\":
                    depth += 1 if text[index] == "{" else -1
                    if depth == 0:
                        content = text[start + 1 : index]
                        break
        else:
            bare = re.compile(r"[+-]?\d[\d,]*").match(text, start)
            content = bare.group(0) if bare else None
        if content is not None:
            found = content.strip()
    return found


@settings(max_examples=400)
@given(texts)
def test_extract_answer_reads_the_last_box_as_the_reference_does(text: str) -> None:
    extracted = extract_answer(text)
    expected = reference_boxed(text)
    if expected is not None:
        assert (extracted.method, extracted.raw) == ("boxed", expected)
        assert extracted.value == normalize_answer(expected)
    else:
        assert extracted.method in ("phrase", "none")


@settings(max_examples=400)
@given(texts, st.sampled_from(["pseudocode", "summary"]))
def test_tagged_matches_the_lazy_regex(text: str, tag: str) -> None:
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", text, re.DOTALL)
    # What it returns is cleaned (a carriage return could rewrite a shown line).
    assert tagged(text, tag) == (clean_text(found[-1].strip()) if found else None)


@settings(max_examples=400)
@given(texts)
def test_fenced_blocks_match_the_regex(text: str) -> None:
    pattern = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
    for languages in (("python", "py", ""), ("yaml", "yml", "json", "")):
        expected = [body for lang, body in pattern.findall(text) if lang.lower() in languages]
        assert fenced_blocks(text, languages) == expected


@settings(max_examples=200)
@given(texts)
def test_find_program_defines_transform_when_it_finds_one(text: str) -> None:
    found = find_program(text)
    if found is not None:
        assert "def transform" in found.source


class CountingText(str):
    """A string that counts the characters its ``find`` calls pass over."""

    scanned = 0

    def find(self, sub: str, start: int | None = None, end: int | None = None) -> int:  # type: ignore[override]
        begin = start or 0
        index = str.find(self, sub, begin) if end is None else str.find(self, sub, begin, end)
        CountingText.scanned += (index if index >= 0 else len(self)) - begin
        return index


def scanned(parse: Callable[[str], object], text: str) -> int:
    CountingText.scanned = 0
    parse(CountingText(text))
    return CountingText.scanned


def test_tags_and_fences_are_read_in_one_pass_over_adversarial_text() -> None:
    attacks = {
        "unclosed tags": "<pseudocode>" * 20_000,
        "unclosed then closed": "<pseudocode>" * 20_000 + "</pseudocode>",
        "fence openers": "```python\n" * 20_000,
        "backquotes": "`" * 200_000,
        "fence without a line end": "```" + "a" * 200_000,
        "mixed line endings": "```\r\n\r" * 20_000,
    }
    for name, text in attacks.items():
        for parse in (lambda t: tagged(t, "pseudocode"), fenced_spans):
            # Each find starts where the last stopped: at most a few passes over the text.
            assert scanned(parse, text) <= 3 * len(text), name


def test_huge_numbers_and_long_answers_give_none_not_an_error() -> None:
    assert extract_answer("\\boxed{" + "9" * 100_000 + "}").value is None
    assert extract_answer("answer: " + "1" * 5_000).method == "none"  # over the token cap
    nested = "\\boxed{" + "\\text{" * 2_000 + "7" + "}" * 2_001
    assert extract_answer(nested).value is None  # over MAX_ANSWER_CHARS: not unwrapped
