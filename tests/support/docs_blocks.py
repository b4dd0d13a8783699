"""The documentation as the tests read it: the pages, their fenced blocks, the `arcmemo`
commands they spell and the click command each one names.

Runnable commands are the `$ arcmemo ...` lines of ```` ```console ```` blocks: a page marks a
command runnable by writing it so, and a test runs it as written. A runnable command needs
no key and no network: `--dry-run`, a `scripted:` model, `--help`, or a command that
calls no model (the memory CLI)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
# A fence of three or more backticks or tildes, its info string, and the same fence closing.
FENCE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S
)
SPAN = re.compile(r"(?<!`)`(arcmemo [^`\n]+)`(?!`)")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def pages() -> list[Path]:
    """Every Markdown page of the site, and README."""
    return [*sorted(DOCS.rglob("*.md")), REPO / "README.md"]


@dataclass(frozen=True)
class Block:
    page: Path
    info: str
    body: str


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [Block(page, m["info"].strip(), m["body"]) for m in FENCE.finditer(text)]


def runnable(page: Path) -> list[str]:
    """The `$ ` lines of a page's console blocks."""
    return [
        line[2:].strip()
        for block in blocks(page)
        if block.info == "console"
        for line in block.body.splitlines()
        if line.startswith("$ ")
    ]


def _joined_lines(body: str) -> Iterator[str]:
    for line in body.replace("\\\n", " ").splitlines():
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        yield line


def documented_commands(page: Path) -> Iterator[str]:
    """Every `arcmemo ...` command a page spells: in shell blocks (a line, or the part of a
    line after `&&` or `|`) and in inline code."""
    text = page.read_text(encoding="utf-8")
    for block in blocks(page):
        if block.info not in ("bash", "console", "sh", "shell", ""):
            continue
        for line in _joined_lines(block.body):
            for part in re.split(r"&&|\|\||;|\|", line):
                part = part.split(" #", 1)[0].strip()
                # an environment assignment or two before the command
                part = re.sub(r"^(?:[A-Z_]+=\S+\s+)+", "", part)
                if part.startswith("arcmemo "):
                    yield part
    prose = FENCE.sub("", text)
    for match in SPAN.finditer(prose):
        yield match[1].split(" #", 1)[0]


def resolve(root: click.Group, command: str) -> tuple[click.Command, list[str], list[str]]:
    """The click command a documented command line names, its path and its flags."""
    words = command.split()[1:]
    current: click.Command = root
    path = ["arcmemo"]
    ctx = click.Context(root)
    for word in words:
        if not isinstance(current, click.Group):
            break
        sub = current.get_command(ctx, word)
        if sub is None:
            break
        current, path = sub, [*path, word]
    return current, path, FLAG.findall(command)


def flags_of(command: click.Command) -> set[str]:
    """The option spellings a command accepts and shows (a retired spelling is hidden)."""
    found = {"--help"}
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            found.update(o for o in [*param.opts, *param.secondary_opts] if o.startswith("--"))
    return found


def shell_words(command: str) -> list[str]:
    return shlex.split(command)
