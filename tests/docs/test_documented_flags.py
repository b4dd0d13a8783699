"""Every `arcmemo` command the documentation spells names a real command, and every flag it
gives is one that command accepts and shows: renaming or removing a flag fails here until
the pages say the new word (a retired spelling, still accepted with a warning, is hidden
and counts as not documented)."""

from __future__ import annotations

import click
import pytest

from arcmemo.cli.main import cli
from tests.support.docs_blocks import REPO, documented_commands, flags_of, pages, resolve


def all_commands() -> list[tuple[str, str]]:
    return [
        (str(page.relative_to(REPO)), command)
        for page in pages()
        for command in documented_commands(page)
    ]


def test_the_pages_spell_commands_at_all() -> None:
    found = all_commands()
    assert len(found) > 100, len(found)
    assert any("arcmemo run" in c for _, c in found)


def test_every_documented_flag_is_accepted_by_its_command() -> None:
    wrong = []
    for page, command in all_commands():
        target, path, flags = resolve(cli, command)
        if isinstance(target, click.Group) and len(path) > 1 and not flags:
            continue  # a group named in prose ("arcmemo memory")
        accepted = flags_of(target)
        for flag in flags:
            if flag not in accepted:
                wrong.append(f"{page}: {' '.join(path)} has no {flag}: {command}")
    assert not wrong, "\n".join(wrong)


def test_a_renamed_flag_would_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above sees a rename: hide --feedback-rounds as if it were retired."""
    run = cli.get_command(click.Context(cli), "run")
    assert run is not None
    option = next(p for p in run.params if "--feedback-rounds" in getattr(p, "opts", []))
    monkeypatch.setattr(option, "hidden", True)
    target, _, flags = resolve(cli, "arcmemo run arc-agi-1 --feedback-rounds 2")
    assert "--feedback-rounds" in flags and "--feedback-rounds" not in flags_of(target)
