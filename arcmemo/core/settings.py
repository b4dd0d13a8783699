"""How a run setting shows on the command line, declared on the config field it belongs to.

A field of :class:`~arcmemo.run.config.RunConfig` carries a :class:`Setting` in its annotation
(``Annotated[int, Setting("--attempts", group="Solving", results=True)]``); the CLI options,
their help sections and :data:`~arcmemo.run.config.RESULT_FIELDS` are derived from it
(:mod:`arcmemo.cli.config_options`), so adding a setting is one field. This module holds
data only (no click), so the config does not depend on the CLI.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

if TYPE_CHECKING:
    from arcmemo.core.registry import Registry

# The help sections of `arcmemo run`, in the order they are printed.
GROUPS = ("Data", "Model roles", "Solving", "Memory", "Sandbox", "Scale", "Output")


@dataclass(frozen=True)
class Shortcut:
    """A named flag for one option of a component (``--top-k 8`` is ``--select-arg top_k=8``)."""

    flag: str
    key: str
    kind: type = str
    min: int | None = None
    help: str | None = None


@dataclass(frozen=True)
class Setting:
    """The command-line face of a config field.

    ``flag``: the option (None: the field has no flag of its own, e.g. a derived one);
    ``group``: its help section (one of :data:`GROUPS`); ``results``: whether the field
    changes what a task's result would be (a resume must agree on it); ``help``: the option's
    help (default: the field's description); ``aliases``: other spellings, accepted as
    equals; ``deprecated``: old spellings, accepted with a warning naming the new one;
    ``envvar``: an environment variable read when the flag is not given; ``required``:
    whether the flag must be given (None: when the field has no default); ``metavar``: how
    the help writes its value; ``help_from``: ``"module:function"`` returning the help when
    it is shown (text the registered benchmarks write, imported only for ``--help``).

    Kinds follow the field's type: a :class:`~arcmemo.core.registry.ComponentSpec` field is a
    name from ``registry`` (``"module:ATTRIBUTE"``, imported when the command is built)
    plus ``args`` (``--X-arg k=v``, repeatable) and ``shortcuts``; a nested model's flags
    are ``nested`` (its field name -> the sub-flag's :class:`Setting`); ``dict[str, str]``
    is a repeatable ``k=v``; ``list[str]`` a comma-separated list; ``joined`` makes a
    string repeatable (values joined with commas); ``invert`` makes a bool a ``--no-x`` flag
    that stores False; ``argument`` makes it a positional argument.
    """

    flag: str | None = None
    group: str = "Output"
    results: bool = False
    help: str | None = None
    aliases: tuple[str, ...] = ()
    deprecated: tuple[str, ...] = ()
    envvar: str | None = None
    registry: str | None = None
    args: str | None = None
    args_deprecated: tuple[str, ...] = ()
    shortcuts: tuple[Shortcut, ...] = ()
    nested: dict[str, Setting] = field(default_factory=dict)
    joined: bool = False
    invert: bool = False
    argument: bool = False
    choices: tuple[str, ...] = ()
    min: float | None = None
    required: bool | None = None
    metavar: str | None = None
    help_from: str | None = None

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ValueError(f"setting {self.flag}: group {self.group!r} is not one of {GROUPS}")

    def __hash__(self) -> int:  # pydantic hashes annotation metadata
        return hash((self.flag, self.group, self.results))

    def component_registry(self) -> Registry[Any]:
        """The registry ``registry`` names (imported now)."""
        if self.registry is None:
            raise ValueError(f"setting {self.flag}: names no registry")
        module, _, attribute = self.registry.partition(":")
        registry: Registry[Any] = getattr(importlib.import_module(module), attribute)
        return registry


def setting_of(info: FieldInfo) -> Setting | None:
    """The :class:`Setting` declared on a field, if any."""
    return next((m for m in info.metadata if isinstance(m, Setting)), None)


def settings_of(config_type: type[BaseModel]) -> dict[str, Setting]:
    """Field name -> its setting, in field order, for the fields that declare one."""
    found = {}
    for name in config_type.model_fields:
        # A subclass that narrows a field's type (the resolved config) keeps its setting.
        declared: list[dict[str, FieldInfo]] = [
            getattr(klass, "__pydantic_fields__", {}) for klass in config_type.__mro__
        ]
        setting = next(
            (
                found_here
                for fields in declared
                if name in fields and (found_here := setting_of(fields[name])) is not None
            ),
            None,
        )
        if setting is not None:
            found[name] = setting
    return found


def result_fields(config_type: type[BaseModel]) -> tuple[str, ...]:
    """The fields that change what a task's result would be (a resume must agree on them)."""
    return tuple(name for name, setting in settings_of(config_type).items() if setting.results)


def described(config_type: type[BaseModel], name: str) -> Any:
    """A field's description (the help of a flag that states none of its own)."""
    return config_type.model_fields[name].description
