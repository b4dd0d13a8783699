"""A solver that cites what it used (``--cite``).

With the run setting on, a solve or retry prompt that shows memory entries ends with
``prompts/cite.j2``: the model is asked to close its answer with a fenced block tagged
``concepts`` naming the entries it relied on, one a line. The list is optional (an answer
without one is graded as any other) and read leniently, in this order:

1. the last ```` ```concepts ```` block (plain lines, list markers dropped; a YAML list or a
   ``concepts:`` mapping in it is read as such);
2. else the last ```` ```yaml ```` block holding a list of names or a ``concepts``
   (``concepts used``) list;
3. else the last line starting ``Concepts used:``, its names separated by commas.

Names are matched to the memory as a selector's names are
(:func:`arcmemo.selection.llm.resolve_names`: case, spacing, plurals, unambiguous
misspellings). A matched entry the step's prompt showed is ``cited``; any other name (an
entry that was not shown, or nothing in the memory) is ``cited_unshown``, recorded and
never credited. Reading is linear in the answer and bounded: at most
:data:`MAX_LIST_CHARS` of the list, :data:`MAX_NAMES` names of :data:`MAX_NAME_CHARS` each.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from arcmemo.core import prompting
from arcmemo.memory.schema import Memory
from arcmemo.models.base import Message
from arcmemo.models.structured import OutputError, fenced_sections
from arcmemo.sandbox.text import clean_text
from arcmemo.selection.llm import parse_names, resolve_names

CITE_TEMPLATE = "cite"
MAX_LIST_CHARS = 4_000
MAX_NAMES = 50
MAX_NAME_CHARS = 200
_LIST_KEYS = ("concepts", "concepts used", "concepts_used", "used concepts", "used")
_USED_LINE = re.compile(
    r"^[ \t*_#>-]*concepts used[ \t*_]*:[ \t*_]*([^\n]*)$", re.IGNORECASE | re.M
)


def with_citation_request(messages: list[Message]) -> list[Message]:
    """``messages`` with the request to cite (``prompts/cite.j2``) after the last user
    message's text."""
    last = max(i for i, m in enumerate(messages) if m.role == "user")
    request = prompting.render(CITE_TEMPLATE)
    cited = messages[last].model_copy(
        update={"content": f"{messages[last].content.rstrip()}\n\n{request}"}
    )
    return [*messages[:last], cited, *messages[last + 1 :]]


def _bounded(body: str) -> str:
    """At most :data:`MAX_LIST_CHARS` of a list, cut at a line end."""
    if len(body) <= MAX_LIST_CHARS:
        return body
    return body[:MAX_LIST_CHARS].rsplit("\n", 1)[0]


def _names_of_block(body: str, *, plain: bool) -> list[str] | None:
    """The names of one block body (None: it holds no list of names). ``plain``: lines that
    are no YAML list are names, one a line."""
    try:
        names = parse_names(f"```yaml\n{_bounded(body)}\n```")
    except OutputError:
        if not plain:
            return None
        lines = (line.strip().lstrip("-*+").strip() for line in _bounded(body).splitlines())
        return [line for line in lines if line]
    return names


def _yaml_list(body: str) -> list[str] | None:
    """A YAML block's names when it is a list of names or holds one under a concepts key."""
    first = body.lstrip()[:1]
    if first in ("-", "["):
        return _names_of_block(body, plain=False)
    head = body.lstrip().split(":", 1)[0].strip().strip("\"'").lower()
    return _names_of_block(body, plain=False) if head in _LIST_KEYS else None


def cited_names(text: str) -> list[str]:
    """The names an answer lists as used (module docstring for what counts), cleaned and
    bounded; [] when it lists none."""
    sections = fenced_sections(text)
    names: list[str] | None = None
    tagged = [body for lang, body in sections if lang.lower() == "concepts"]
    if tagged:
        names = _names_of_block(tagged[-1], plain=True)
    if names is None:
        for lang, body in reversed(sections):
            if lang.lower() in ("yaml", "yml"):
                names = _yaml_list(body)
                if names is not None:
                    break
    if names is None:
        lines = _USED_LINE.findall(text)
        names = [part for part in lines[-1][:MAX_LIST_CHARS].split(",")] if lines else []
    cleaned = (clean_text(name).strip(" \t*_`\"'.")[:MAX_NAME_CHARS] for name in names)
    return list(dict.fromkeys(name for name in cleaned if name))[:MAX_NAMES]


def resolve_citations(
    names: Sequence[str], memory: Memory | None, shown: Sequence[str]
) -> tuple[list[str], list[str]]:
    """``(cited, cited_unshown)``: the names that match an entry of ``shown`` (in its
    spelling), and the others (an entry of ``memory`` in memory spelling, else as written)."""
    if not names:
        return [], []
    if memory is None:
        return [], list(names)
    resolved, unknown, _ = resolve_names(list(names), memory)
    shown_by_key = {memory.key(name): name for name in shown}
    cited = [shown_by_key[memory.key(n)] for n in resolved if memory.key(n) in shown_by_key]
    unshown = [n for n in resolved if memory.key(n) not in shown_by_key]
    return list(dict.fromkeys(cited)), [*unshown, *unknown]
