"""Click options generated from the :class:`~arcmemo.core.settings.Setting` of config fields.

:func:`config_options` turns a config model's settings into click parameters (type, range,
default shown, environment variable, help section), and :func:`config_values` turns the
parsed values back into the config's fields. A field added to the config with a
``Setting`` is an option of every command built from it, in its help section, with no
edit here.
"""

from __future__ import annotations

import importlib
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import click
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from arcmemo.core.registry import ComponentSpec, Registry
from arcmemo.core.settings import GROUPS, Setting, Shortcut, settings_of

# The section of the options a command writes by hand (not config fields).
OTHER_GROUP = "Other"


class GroupedOption(click.Option):
    """An option that knows its help section (and may write its help only when shown)."""

    def __init__(
        self, *args: Any, group: str = OTHER_GROUP, help_from: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.group = group
        self.help_from = help_from

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        if self.help_from is not None:
            module, _, function = self.help_from.partition(":")
            written = getattr(importlib.import_module(module), function)()
            self.help = f"{written} {self.help}" if self.help else written
        return super().get_help_record(ctx)


class GroupedArgument(click.Argument):
    """A positional argument that knows its help section (listed under it)."""

    def __init__(self, *args: Any, group: str = OTHER_GROUP, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.group = group


def format_grouped_options(
    command: click.Command, ctx: click.Context, formatter: click.HelpFormatter
) -> None:
    """The options of ``command`` under one heading per group, in :data:`GROUPS` order."""
    sections: dict[str, list[tuple[str, str]]] = {}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        sections.setdefault(getattr(param, "group", OTHER_GROUP), []).append(record)
    for group in (*GROUPS, OTHER_GROUP):
        if sections.get(group):
            with formatter.section(group):
                formatter.write_dl(sections[group])


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The annotation without ``| None``, and whether None was allowed."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def _bound(info: FieldInfo, name: str) -> float | None:
    return next((getattr(m, name) for m in info.metadata if hasattr(m, name)), None)


def _click_type(annotation: Any, info: FieldInfo | None, setting: Setting | Shortcut) -> Any:
    """The click type of a scalar field (ranges from the field's ``ge``/``gt`` or the
    setting's ``min``)."""
    if isinstance(setting, Setting) and setting.choices:
        return click.Choice(setting.choices)
    if typing.get_origin(annotation) is Literal:
        return click.Choice([str(a) for a in typing.get_args(annotation)])
    low = setting.min
    low_open = False
    if low is None and info is not None:
        low = _bound(info, "ge")
        if low is None:
            low, low_open = _bound(info, "gt"), True
    if annotation is int:
        return click.IntRange(min=int(low)) if low is not None else int
    if annotation is float:
        return click.FloatRange(min=low, min_open=low_open) if low is not None else float
    if annotation is Path:
        return click.Path(path_type=Path)
    return str


def _shown_default(info: FieldInfo) -> Any:
    if info.is_required():
        return None
    default = info.get_default(call_default_factory=True)
    if isinstance(default, ComponentSpec):
        return default.name
    if default is None or isinstance(default, (dict, list, BaseModel)) or default is False:
        return None
    return default


class ComponentChoice(click.ParamType):
    """A registered component's name; the choices come from its registry.

    Listing the names imports nothing; a wrong name fails with the registry's one-line
    message (known names and the closest match).
    """

    def __init__(self, registry: Registry[Any]) -> None:
        self.registry = registry
        self.name = registry.kind

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.registry.names()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from arcmemo.core.registry import RegistryError

        try:
            self.registry.get(str(value))
        except RegistryError as error:
            self.fail(str(error), param, ctx)
        return str(value)


class ParsedType(click.ParamType):
    """A field type written as text and read by its ``parse`` class method (``--shard I/N``)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = model.__name__

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, self.model):
            return value
        try:
            return self.model.parse(str(value))
        except ValueError as error:
            self.fail(str(error), param, ctx)


@dataclass(frozen=True)
class _Param:
    """One generated click parameter and where its value goes."""

    dest: str
    field: str
    setting: Setting
    role: str  # value | name | args | shortcut | sub | deprecated-value | deprecated-args
    key: str | None = None  # the shortcut's option key, the sub-flag's field
    old: str | None = None  # the deprecated spelling this parameter stands for


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _help(setting: Setting, info: FieldInfo) -> dict[str, Any]:
    """The help keyword arguments of an option: its text, or where it is written when shown
    (then the text given here is appended)."""
    formerly = f" (formerly {', '.join(setting.deprecated)})" if setting.deprecated else ""
    if setting.help_from:
        return {"help_from": setting.help_from, "help": formerly.strip() or None}
    text = setting.help or info.description
    return {"help": text + formerly if text else text}


def _with_default(kwargs: dict[str, Any], info: FieldInfo) -> dict[str, Any]:
    # The config's default, shown in the help; a value left at it is not passed on
    # (config_values asks click where each value came from), so the config decides.
    shown = _shown_default(info)
    if shown is not None:
        kwargs.update(default=shown, show_default=True)
    return kwargs


@dataclass(frozen=True)
class _Click:
    """How to declare one click parameter: ``click.option(*decls, **kwargs)``."""

    argument: bool
    decls: tuple[str, ...]
    kwargs: dict[str, Any]

    def apply(self, function: Callable[..., Any]) -> Callable[..., Any]:
        if self.argument:
            return click.argument(*self.decls, cls=GroupedArgument, **self.kwargs)(function)
        return click.option(*self.decls, cls=GroupedOption, **self.kwargs)(function)


def _field_params(
    name: str, info: FieldInfo, setting: Setting, sub: Iterable[str] | None = None
) -> list[tuple[_Click, _Param]]:
    """The click parameters of one field (``sub``: only these sub-flags of a nested one)."""
    annotation, optional = _unwrap(info.annotation)
    group = setting.group
    out: list[tuple[_Click, _Param]] = []

    def option(decls: list[str], dest: str, param: _Param, **kwargs: Any) -> None:
        out.append((_Click(False, (*decls, dest), {"group": group, **kwargs}), param))

    def deprecated(olds: Iterable[str], role: str, **kwargs: Any) -> None:
        for old in olds:
            dest = f"{name}__{_dest(old)}"
            option([old], dest, _Param(dest, name, setting, role, old=old), hidden=True, **kwargs)

    if setting.nested:
        assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
        for key, sub_setting in setting.nested.items():
            if sub is not None and key not in sub:
                continue
            sub_info = annotation.model_fields[key]
            sub_type, _ = _unwrap(sub_info.annotation)
            assert sub_setting.flag is not None
            dest = _dest(sub_setting.flag)
            kwargs: dict[str, Any] = _help(sub_setting, sub_info)
            if sub_setting.invert:
                kwargs["is_flag"] = True
                kwargs["default"] = None
            else:
                kwargs["type"] = _click_type(sub_type, sub_info, sub_setting)
                _with_default(kwargs, sub_info)
            if sub_setting.envvar:
                kwargs.update(envvar=sub_setting.envvar, show_envvar=True)
            option(
                [sub_setting.flag, *sub_setting.aliases],
                dest,
                _Param(dest, name, sub_setting, "sub", key=key),
                **kwargs,
            )
        return out
    assert setting.flag is not None
    if annotation is ComponentSpec:
        assert setting.registry is not None
        choice = ComponentChoice(setting.component_registry())
        if setting.argument:
            declared = _Click(True, (name,), {"type": choice, "group": group})
            out.append((declared, _Param(name, name, setting, "name")))
        else:
            kwargs = _with_default({"type": choice, **_help(setting, info)}, info)
            option(
                [setting.flag, *setting.aliases],
                name,
                _Param(name, name, setting, "name"),
                **kwargs,
            )
            deprecated(setting.deprecated, "deprecated-value", type=choice)
        if setting.args:
            dest = f"{name}__args"
            option(
                [setting.args],
                dest,
                _Param(dest, name, setting, "args"),
                multiple=True,
                help=f"{setting.flag if not setting.argument else name.capitalize()} option "
                "k=v (repeatable; a dotted key sets a nested option, JSON for lists)."
                + (
                    f" (formerly {', '.join(setting.args_deprecated)})"
                    if setting.args_deprecated
                    else ""
                ),
            )
            deprecated(setting.args_deprecated, "deprecated-args", multiple=True)
        for shortcut in setting.shortcuts:
            dest = f"{name}__{shortcut.key}"
            option(
                [shortcut.flag],
                dest,
                _Param(dest, name, setting, "shortcut", key=shortcut.key),
                type=_click_type(shortcut.kind, None, shortcut),
                help=shortcut.help,
            )
        return out
    decls = [setting.flag, *setting.aliases]
    kwargs = _help(setting, info)
    if setting.metavar:
        kwargs["metavar"] = setting.metavar
    if setting.envvar:
        kwargs.update(envvar=setting.envvar, show_envvar=True)
    origin = typing.get_origin(annotation)
    if annotation is bool and optional:
        decls = [f"{setting.flag}/--no-{setting.flag.removeprefix('--')}"]
        kwargs["default"] = None
    elif annotation is bool:
        kwargs.update(is_flag=True, default=None)
    elif origin is dict or setting.joined:
        kwargs["multiple"] = True
    elif origin is list:
        kwargs["type"] = str
    elif isinstance(annotation, type) and hasattr(annotation, "parse"):
        kwargs["type"] = ParsedType(annotation)
    else:
        kwargs["type"] = _click_type(annotation, info, setting)
        _with_default(kwargs, info)
    if setting.required if setting.required is not None else info.is_required():
        kwargs["required"] = True
    option(decls, name, _Param(name, name, setting, "value"), **kwargs)
    if setting.args:  # a mapping of models: its entries' options, ENTRY.KEY=VALUE
        dest = f"{name}__args"
        option(
            [setting.args],
            dest,
            _Param(dest, name, setting, "args"),
            multiple=True,
            help=f"NAME.KEY=VALUE: an option of the {setting.flag} NAME (repeatable).",
        )
    kept = ("type", "multiple", "is_flag", "default")
    deprecated(
        setting.deprecated, "deprecated-value", **{k: kwargs[k] for k in kept if k in kwargs}
    )
    return out


def _params(
    config_type: type[BaseModel], only: dict[str, Iterable[str] | None] | None
) -> list[tuple[_Click, _Param]]:
    params = []
    for name, setting in settings_of(config_type).items():
        if only is not None and name not in only:
            continue
        if setting.flag is None and not setting.nested:
            continue
        info = config_type.model_fields[name]
        params.extend(_field_params(name, info, setting, None if only is None else only[name]))
    return params


def config_options(
    config_type: type[BaseModel], only: dict[str, Iterable[str] | None] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator adding the options of ``config_type``'s settings to a click command
    (``only``: these fields, and of a nested field these sub-flags; None: all of them)."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        # click lists parameters in the order their decorators ran: reversed, as written.
        for declared, _ in reversed(_params(config_type, only)):
            function = declared.apply(function)
        return function

    return decorate


def parse_key_values(values: Iterable[str], option: str) -> dict[str, str]:
    """``("key=value", ...)`` from a repeated option (values stay strings)."""
    parsed = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected key=value, got {value!r}", param_hint=option)
        parsed[key.strip()] = val.strip()
    return parsed


def parse_component_args(values: Iterable[str], option: str) -> dict[str, Any]:
    """Options of a component from repeated ``--X-arg key=value``.

    A dotted key sets a nested option (``limits.timeout_s=5``); a value starting with ``[``
    or ``{`` is read as JSON; anything else stays a string for the options model to coerce.
    """
    import json

    parsed: dict[str, Any] = {}
    for value in values:
        key, sep, raw = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected key=value, got {value!r}", param_hint=option)
        item: Any = raw.strip()
        if item[:1] in "[{":
            try:
                item = json.loads(item)
            except json.JSONDecodeError as error:
                raise click.BadParameter(
                    f"{key}: not valid JSON ({error.msg})", param_hint=option
                ) from None
        target = parsed
        *parents, leaf = key.strip().split(".")
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = item
    return parsed


def _given(dest: str, value: Any) -> bool:
    """Whether the user gave the option (on the command line or in its environment
    variable), not click's default."""
    if value is None or value == ():
        return False
    ctx = click.get_current_context(silent=True)
    if ctx is None or dest not in ctx.params:
        return True
    return ctx.get_parameter_source(dest) not in (click.core.ParameterSource.DEFAULT, None)


def config_values(
    config_type: type[BaseModel],
    options: dict[str, Any],
    *,
    warn: Callable[[str], None] | None = None,
    only: dict[str, Iterable[str] | None] | None = None,
) -> dict[str, Any]:
    """The config fields given by parsed option values (``options``: click's keyword
    arguments; the generated ones are removed from it). A setting left unset is left out,
    so the config's own default applies. A deprecated spelling warns through ``warn``."""
    values: dict[str, Any] = {}
    components: dict[str, dict[str, Any]] = {}
    for _, spec in _params(config_type, only):
        raw = options.pop(spec.dest, None)
        if not _given(spec.dest, raw):
            continue
        setting, field = spec.setting, spec.field
        if spec.old is not None and warn is not None:
            primary = setting.flag if spec.role == "deprecated-value" else setting.args
            warn(f"{spec.old} is deprecated; use {primary}")
        info = config_type.model_fields[field]
        # A primary spelling comes before its deprecated ones, so setdefault lets it win.
        if spec.role == "sub":
            assert spec.key is not None
            values.setdefault(field, {})[spec.key] = (not raw) if setting.invert else raw
        elif _unwrap(info.annotation)[0] is ComponentSpec:
            component = components.setdefault(field, {})
            if spec.role in ("name", "deprecated-value"):
                component.setdefault("name", raw)
            elif spec.role == "shortcut":
                component.setdefault("options", {})[spec.key] = raw
            else:
                flag = spec.old or setting.args or ""
                component.setdefault("options", {}).update(parse_component_args(raw, flag))
        elif _entries_are_models(info):  # a mapping of models, by entry name
            entries = values.setdefault(field, {})
            if spec.role == "args":
                for entry, given in parse_component_args(raw, setting.args or "").items():
                    if not isinstance(given, dict):
                        raise click.BadParameter(
                            f"expected NAME.KEY=VALUE, got {entry}={given}", param_hint=setting.args
                        )
                    entries.setdefault(entry, {}).setdefault("args", {}).update(given)
            else:
                for entry, text in parse_key_values(raw, setting.flag or "").items():
                    entries.setdefault(entry, {})["spec"] = text
        else:
            values.setdefault(field, _field_value(info, setting, raw))
    for field, component in components.items():
        if "name" not in component:
            default = config_type.model_fields[field].get_default(call_default_factory=True)
            if isinstance(default, ComponentSpec):
                component["name"] = default.name
        values[field] = component
    return values


def _entries_are_models(info: FieldInfo) -> bool:
    annotation, _ = _unwrap(info.annotation)
    if typing.get_origin(annotation) is not dict:
        return False
    value = typing.get_args(annotation)[1]
    return isinstance(value, type) and issubclass(value, BaseModel)


def _field_value(info: FieldInfo, setting: Setting, raw: Any) -> Any:
    annotation, _ = _unwrap(info.annotation)
    origin = typing.get_origin(annotation)
    if setting.joined:
        return ",".join(raw) or None
    if origin is dict:
        return parse_key_values(raw, setting.flag or "")
    if origin is list:
        return [item.strip() for item in raw.split(",") if item.strip()] or None
    return raw
