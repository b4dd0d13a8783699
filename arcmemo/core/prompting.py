"""Prompt templates: jinja2 files under ``prompts/``, rendered strictly.

A template that uses a variable the caller did not pass is an error, never an empty string.
Every string a template puts into a prompt passes :func:`arcmemo.sandbox.text.clean_text` (model and
program text can hold control characters and lone surrogates).

Any template can be replaced from a folder (``--prompts DIR``, ``RunConfig.prompts``, or
:func:`prompt_overlay` in Python): a file at ``DIR/arc/solve.j2`` is rendered in place of
``prompts/arc/solve.j2``, the others stay the package's. :func:`check_overlay` refuses, in
one line, a file that replaces no template, a template that does not parse, and one that
uses a variable the template it replaces is not given (the variables the package's template
uses are the ones its caller passes).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Any, Literal

import jinja2
from jinja2 import meta
from pydantic import Field

from arcmemo.core.registry import WHEN_ABSENT
from arcmemo.core.resources import data_dir
from arcmemo.sandbox.text import clean_text

# The prompt structures a component may follow: the published code's (the default) or
# arcmemo's earlier one, kept as a named alternative.
PromptStructure = Literal["paper", "arcmemo"]


def structure_option(description: str) -> Any:
    """The option field choosing a component's :data:`PromptStructure`: the paper's by
    default; a run saved before the option existed had arcmemo's."""
    return Field(
        default="paper", json_schema_extra={WHEN_ABSENT: "arcmemo"}, description=description
    )


def _clean(value: Any) -> Any:
    return clean_text(value) if isinstance(value, str) else value


# The folder whose templates replace the package's, for what runs in this context (a run's
# session sets it; asyncio tasks and to_thread calls inherit it).
_OVERLAY: ContextVar[Path | None] = ContextVar("arcmemo_prompt_overlay", default=None)
TEMPLATE_SUFFIX = ".j2"


class PromptOverlayError(ValueError):
    """A prompt folder that cannot be used; the message names the file and says why."""


@cache
def _environment(overlay: Path | None = None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(overlay))] if overlay else []
    loaders.append(jinja2.FileSystemLoader(str(data_dir("prompts"))))
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        finalize=_clean,
    )


def render(name: str, **variables: Any) -> str:
    """Render the template ``prompts/<name>`` (``.j2`` added when missing), from the active
    overlay folder where it holds one."""
    if not name.endswith(TEMPLATE_SUFFIX):
        name += TEMPLATE_SUFFIX
    template = _environment(_OVERLAY.get()).get_template(name)
    return template.render(**variables).strip() + "\n"


def _templates(folder: Path) -> list[str]:
    # In path order (the order the prompts fingerprint has always hashed them in).
    return [p.relative_to(folder).as_posix() for p in sorted(folder.rglob(f"*{TEMPLATE_SUFFIX}"))]


def check_overlay(folder: str | Path) -> Path:
    """The resolved ``folder`` when every template in it can replace the package's; else
    :class:`PromptOverlayError` with one line naming the file."""
    path = Path(folder).expanduser().resolve()
    if not path.is_dir():
        raise PromptOverlayError(f"--prompts {folder}: not a folder")
    names = _templates(path)
    if not names:
        raise PromptOverlayError(
            f"--prompts {folder}: no {TEMPLATE_SUFFIX} templates (a file at DIR/arc/solve.j2 "
            "replaces prompts/arc/solve.j2)"
        )
    builtin = data_dir("prompts")
    environment = _environment(None)
    for name in names:
        file = path / name
        if not (builtin / name).is_file():
            raise PromptOverlayError(f"{file}: replaces no template (there is no prompts/{name})")
        try:
            parsed = environment.parse(file.read_text(encoding="utf-8"))
        except jinja2.TemplateSyntaxError as error:
            raise PromptOverlayError(f"{file}:{error.lineno}: {error.message}") from None
        except (OSError, UnicodeDecodeError) as error:
            raise PromptOverlayError(f"{file}: cannot be read: {error}") from None
        given = meta.find_undeclared_variables(
            environment.parse((builtin / name).read_text(encoding="utf-8"))
        )
        unknown = sorted(meta.find_undeclared_variables(parsed) - given)
        if unknown:
            raise PromptOverlayError(
                f"{file}: uses {', '.join(unknown)}, which prompts/{name} is not given "
                f"(it is given: {', '.join(sorted(given)) or 'nothing'})"
            )
    return path


def templates_fingerprint(folder: str | Path | None = None) -> str:
    """sha256 of every template a render would read: the package's, each replaced by the
    overlay ``folder``'s where it holds one (without a folder, the package's alone)."""
    builtin = data_dir("prompts")
    overlay = Path(folder).expanduser().resolve() if folder is not None else None
    digest = hashlib.sha256()
    for name in _templates(builtin):
        replaced = overlay / name if overlay is not None else None
        source = replaced if replaced is not None and replaced.is_file() else builtin / name
        digest.update(name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


@contextlib.contextmanager
def prompt_overlay(folder: str | Path | None) -> Iterator[Path | None]:
    """Within the block, templates in ``folder`` replace the package's (checked first by
    :func:`check_overlay`); ``None`` changes nothing."""
    if folder is None:
        yield None
        return
    path = check_overlay(folder)
    token = _OVERLAY.set(path)
    try:
        yield path
    finally:
        _OVERLAY.reset(token)
