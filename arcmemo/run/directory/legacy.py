"""Reading a run saved by an earlier arcmemo: what it ran with where its config.json
predates a setting, and its components' options spelled out by today's registries."""

from __future__ import annotations

from typing import Any, TypeVar

from arcmemo.core.registry import ComponentSpec, RegistryError
from arcmemo.core.settings import settings_of
from arcmemo.run.config import RunConfig

# The config a run starts with, of whatever RunConfig type it has (the resolved one).
C = TypeVar("C", bound=RunConfig)

# What a config.json written before a field existed ran with.
LEGACY: dict[str, Any] = {
    "schedule": lambda saved: "tasks",
    "reselect": lambda saved: saved.get("update") == "online",
}


def spelled_out(config: C) -> C:
    """``config`` with each component's options spelled out by today's registries: an option
    added since the run was saved reads as what that run did (its default, unless the field
    names another value for runs saved without it: Registry.saved_spec). A component or
    option no longer known is compared as saved."""
    update: dict[str, ComponentSpec] = {}
    for name, setting in settings_of(type(config)).items():
        spec = getattr(config, name)
        if setting.registry is not None and isinstance(spec, ComponentSpec):
            try:
                update[name] = setting.component_registry().saved_spec(spec.name, spec.options)
            except RegistryError:
                continue
    return config.model_copy(update=update)
