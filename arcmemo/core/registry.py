"""One registry shape for every extension point.

Providers, benchmarks, selectors, memory formats (abstractors), write signals and sandboxes
are each a :class:`Registry`. A component registers under a name with a pydantic *options
model*; a run stores every component it uses as a :class:`ComponentSpec` (name + validated
options) in ``config.json``, so the file holds each setting that changes results and a run
can be rebuilt from it. The CLI takes its choices and help text from the registries, so a
newly registered component is usable from ``arcmemo run`` without further edits.

Built-in components are imported lazily, by name (a provider's SDK is imported only when a
spec names it). Third-party packages add components through the ``arcmemo.plugins``
entry-point group: each entry point names a module that registers components on import::

    [project.entry-points."arcmemo.plugins"]
    my_selector = "my_package.arcmemo_plugin"
"""

from __future__ import annotations

import difflib
import importlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

PLUGIN_GROUP = "arcmemo.plugins"
# The key, in an option field's json_schema_extra, of the value a saved run that does not
# spell the option out had (Registry.saved_spec).
WHEN_ABSENT = "when_absent"


class NoOptions(BaseModel):
    """Options model of a component that takes none."""

    model_config = ConfigDict(extra="forbid")


class ComponentSpec(BaseModel):
    """A registered component by name with its options, as stored in ``config.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Registered name of the component.")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Its validated options, every field spelled out."
    )


class RegistryError(ValueError):
    """A component name or its options cannot be used; the message says what is known."""


class ComponentUnavailableError(RegistryError):
    """A component exists but cannot be loaded here (a missing optional package)."""


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered component: its name, how to build it, its options model, and (through
    :attr:`cls`) the capabilities its class declares."""

    name: str
    factory: Callable[..., T]
    options: type[BaseModel]
    summary: str
    kind: str = ""
    registered_class: type[T] | None = None

    @property
    def cls(self) -> type[T]:
        """The component's class: its class attributes (declared, typed, on the kind's base
        class: a benchmark's ``defaults``, a sandbox's ``isolation``) are what the rest of
        arcmemo knows about the component before building it."""
        if self.registered_class is None:
            raise RegistryError(
                f"{self.kind or 'component'} {self.name!r} is registered as a bare factory, "
                "so it declares no capabilities (register its class, or pass cls=)"
            )
        return self.registered_class

    def describe(self) -> str:
        """The summary and the options with their defaults, in one line."""
        fields = ", ".join(
            field if info.is_required() else f"{field}={_shown_default(info)}"
            for field, info in self.options.model_fields.items()
        )
        return self.summary + (f" [options: {fields}]" if fields else "")


def _shown_default(info: FieldInfo) -> str:
    default = info.get_default(call_default_factory=True)
    if isinstance(default, BaseModel):  # nested options: named, set one by one (a.b=v)
        return f"<{type(default).__name__}>"
    return repr(default)


_plugins_lock = threading.Lock()
_plugins_loaded = False


def load_plugins() -> None:
    """Import every module of the ``arcmemo.plugins`` entry-point group, once."""
    global _plugins_loaded
    with _plugins_lock:
        if _plugins_loaded:
            return
        _plugins_loaded = True
        from importlib.metadata import entry_points

        for point in entry_points(group=PLUGIN_GROUP):
            try:
                point.load()
            except Exception as error:  # a broken plugin must not hide the built-ins
                import warnings

                warnings.warn(
                    f"arcmemo plugin {point.name!r} ({point.value}) failed to load: {error}",
                    stacklevel=2,
                )


def _identity(factory: Callable[..., Any]) -> tuple[str, str]:
    return (getattr(factory, "__module__", ""), getattr(factory, "__qualname__", repr(factory)))


def _summary(factory: Callable[..., Any]) -> str:
    doc = (factory.__doc__ or "").strip()
    return doc.splitlines()[0].rstrip(".") if doc else ""


class Registry(Generic[T]):
    """Named components of one kind, each with a factory and an options model.

    ``modules`` maps built-in names to the module that registers them, imported on first
    use of that name; ``install_hints`` maps a name to (package, how to install it) for
    components that need an optional package. Factories are called as
    ``factory(options, **context)`` with the validated options model instance.
    """

    def __init__(
        self,
        kind: str,
        *,
        modules: Mapping[str, str] | None = None,
        install_hints: Mapping[str, tuple[str, str]] | None = None,
    ) -> None:
        self.kind = kind
        self._modules = dict(modules or {})
        self._hints = dict(install_hints or {})
        self._entries: dict[str, Entry[T]] = {}
        self._lock = threading.RLock()

    # -- registering ----------------------------------------------------------------------

    def register(
        self,
        name: str,
        *,
        options: type[BaseModel] = NoOptions,
        summary: str | None = None,
        cls: type[T] | None = None,
    ) -> Callable[[F], F]:
        """Decorator: register a class or factory as ``name``.

        A factory that builds a class through another constructor names that class as
        ``cls`` (the class declares the capabilities, :attr:`Entry.cls`). The class gets
        its ``name`` attribute from here (the registered name is the one place it is
        written). Registering a second, different factory under a taken name
        is an error (a plugin must not silently replace a built-in), and so is a class that
        declares another name than the one it is registered under.
        """

        def decorate(factory: F) -> F:
            with self._lock:
                existing = self._entries.get(name)
                # The same class imported again (a module reloaded) is not a conflict.
                if existing is not None and _identity(existing.factory) != _identity(factory):
                    raise RegistryError(f"{self.kind} {name!r} is already registered")
                component = cls if cls is not None else factory
                if isinstance(component, type):
                    declared = component.__dict__.get("name", name)
                    if declared != name:
                        raise RegistryError(
                            f"{self.kind} {name!r}: class {component.__qualname__} is already "
                            f"named {declared!r}"
                        )
                    type.__setattr__(component, "name", name)  # as its class body would
                self._entries[name] = Entry(
                    name=name,
                    factory=factory,
                    options=options,
                    summary=summary if summary is not None else _summary(factory),
                    kind=self.kind,
                    registered_class=component if isinstance(component, type) else None,
                )
            return factory

        return decorate

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register a component for their own use)."""
        with self._lock:
            self._entries.pop(name, None)

    # -- looking up -----------------------------------------------------------------------

    def names(self) -> list[str]:
        """Every name a spec may use: registered, built-in (not yet imported) or plugin."""
        load_plugins()
        with self._lock:
            return sorted(set(self._entries) | set(self._modules))

    def _load(self, name: str) -> None:
        module = self._modules.get(name)
        if module is None:
            return
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            missing = error.name or ""
            package, hint = self._hints.get(name, ("", ""))
            if package and (missing == package or missing.startswith(f"{package}.")):
                raise ComponentUnavailableError(
                    f"{self.kind} {name!r} needs the {package!r} package, which is not "
                    f"installed: {hint}"
                ) from error
            raise

    def get(self, name: str) -> Entry[T]:
        """The entry registered as ``name``; a one-line error listing the known names."""
        with self._lock:
            entry = self._entries.get(name)
        if entry is None:
            load_plugins()
            self._load(name)
            with self._lock:
                entry = self._entries.get(name)
        if entry is None:
            known = self.names()
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise RegistryError(f"unknown {self.kind} {name!r}{hint}; known: {', '.join(known)}")
        return entry

    def entries(self) -> list[Entry[T]]:
        """Every entry, built-ins imported (for help texts and listings)."""
        result = []
        for name in self.names():
            try:
                result.append(self.get(name))
            except ComponentUnavailableError:
                continue
        return result

    # -- options and building ---------------------------------------------------------------

    def options(self, name: str, values: Mapping[str, Any] | None = None) -> BaseModel:
        """``values`` validated against the options model of ``name``."""
        entry = self.get(name)
        try:
            return entry.options.model_validate(dict(values or {}))
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'options'}: {e['msg']}"
                for e in error.errors()
            )
            known = ", ".join(entry.options.model_fields) or "none"
            raise RegistryError(
                f"{self.kind} {name!r}: {problems} (its options: {known})"
            ) from None

    def spec(self, name: str, values: Mapping[str, Any] | None = None) -> ComponentSpec:
        """A validated spec with every option spelled out (what ``config.json`` stores)."""
        return ComponentSpec(name=name, options=self.options(name, values).model_dump(mode="json"))

    def saved_spec(self, name: str, values: Mapping[str, Any] | None = None) -> ComponentSpec:
        """:meth:`spec` of options a run saved: an option missing there reads as what a run
        did before the option existed, which is its default unless the option's field says
        otherwise (``json_schema_extra={WHEN_ABSENT: value}``, for a default that changed
        when the option was added later)."""
        filled = dict(values or {})
        for field_name, field in self.get(name).options.model_fields.items():
            extra = field.json_schema_extra
            if field_name not in filled and isinstance(extra, dict) and WHEN_ABSENT in extra:
                filled[field_name] = extra[WHEN_ABSENT]
        return self.spec(name, filled)

    def create(self, spec: ComponentSpec | str, **context: Any) -> T:
        """Build the component of ``spec`` (a name means its default options)."""
        if isinstance(spec, str):
            spec = ComponentSpec(name=spec)
        entry = self.get(spec.name)
        return entry.factory(self.options(spec.name, spec.options), **context)

    def help(self) -> str:
        """Every component in one line each: name, summary and options."""
        return "\n".join(f"{entry.name}: {entry.describe()}" for entry in self.entries())
