"""Prompt templates: jinja2 files under ``prompts/``, rendered strictly.

A template that uses a variable the caller did not pass is an error, never an empty string.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2

from arcmemo.resources import data_dir


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("prompts"))),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


def render(name: str, **variables: Any) -> str:
    """Render the template ``prompts/<name>`` (``.j2`` added when missing)."""
    if not name.endswith(".j2"):
        name += ".j2"
    return _environment().get_template(name).render(**variables).strip() + "\n"
