"""A run's model roles: the model each role calls, the folding of the flat spellings
(``model``, ``aux_model``, ...) into ``roles``, and how a role falls back to another's
model and sampling (the roles themselves are :mod:`arcmemo.core.roles`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from arcmemo.core.registry import ComponentSpec
from arcmemo.core.roles import AUX, FALLBACK, MODEL_ROLES, SOLVER
from arcmemo.core.settings import Setting
from arcmemo.models.base import SamplingConfig
from arcmemo.run.data_settings import DataSettings


class ModelRole(BaseModel):
    """The model one role calls: a provider (a registered component, its options as given
    with ``--model-arg``) and its model, and the sampling of every call of the role.

    A role without a provider (every role but the solver may have none) calls the model of
    the role it falls back to (:data:`~arcmemo.core.roles.FALLBACK`): aux the solver's,
    with aux's own sampling only (the solver's is for answers); select and abstract aux's,
    with aux's sampling and their own over it.
    """

    model_config = ConfigDict(extra="forbid")

    provider: ComponentSpec | None = Field(
        default=None, description="Provider and its options; None: the solver's client."
    )
    model: str | None = Field(default=None, description="The provider's model name.")
    sampling: SamplingConfig = Field(
        default_factory=SamplingConfig, description="Sampling of every call of the role."
    )

    @classmethod
    def named(cls, spec: str, options: dict[str, str] | None = None) -> ModelRole:
        """The role calling ``provider:model`` (``spec``) with ``options``."""
        from arcmemo.models.registry import parse_spec

        provider, model = parse_spec(spec)
        return cls(provider=ComponentSpec(name=provider, options=options or {}), model=model)

    @property
    def spec(self) -> str | None:
        """``provider:model``, None for a role that uses the solver's client."""
        return None if self.provider is None else f"{self.provider.name}:{self.model}"

    @model_validator(mode="after")
    def _model_with_provider(self) -> ModelRole:
        if (self.provider is None) != (self.model is None):
            raise ValueError("a model role names both a provider and a model, or neither")
        return self


def roles_from_flat(values: dict[str, Any]) -> dict[str, Any]:
    """Fold the flat spellings (``model``, ``aux_base_url``, ...: keyword arguments, flags
    and config.json files written before roles) into ``roles`` and ``endpoints``; a flat
    spelling wins over the same setting given in ``roles``."""
    roles: dict[str, Any] = {}
    role_args: dict[str, dict[str, Any]] = {}
    for name, role in (values.get("roles") or {}).items():
        roles[name], role_args[name] = _role_input(role)
    endpoints = dict(values.get("endpoints") or {})
    prefixes = {SOLVER: "", AUX: "aux_"}
    for role in [*prefixes, *(name for name in roles if name not in prefixes)]:
        prefix = prefixes.get(role)
        flat = {} if prefix is None else {k: values.get(prefix + k) for k in _FLAT_KEYS}
        entry = dict(roles.get(role) or {})
        spec = flat.get("model")
        if spec is not None:
            named = ModelRole.named(spec).model_dump()
            entry.update(provider=named["provider"], model=named["model"])
        if role_args.get(role) and entry.get("provider") is None:
            raise ValueError(
                f"--model-role-arg {role}.KEY=VALUE needs the {role} role's model "
                f"(--model-role {role}=PROVIDER:MODEL)"
            )
        options = {**role_args.get(role, {}), **(flat.get("model_args") or {})}
        if entry.get("provider") is None:
            # Aux options without an aux model were never used (the aux role is then the
            # solver's client), and config.json files written so may hold them.
            options = {}
        if options:
            given = ComponentSpec.model_validate(entry["provider"])
            entry["provider"] = {"name": given.name, "options": {**given.options, **options}}
        if flat.get("sampling") is not None:
            entry["sampling"] = flat["sampling"]
        if entry or role == SOLVER:
            roles[role] = entry
        if flat.get("base_url") is not None:
            endpoints[role] = flat["base_url"]
    return {
        **{k: v for k, v in values.items() if k not in _FLAT_ROLE_FIELDS},
        "roles": roles,
        "endpoints": endpoints,
    }


def _role_input(role: Any) -> tuple[Any, dict[str, Any]]:
    """A role as stored, and provider options to add to it: a role may be given as
    ``provider:model`` (``roles={"aux": "openai:gpt-4.1"}``) or, from the command line, as
    ``{"spec": ..., "args": {...}}`` (``--model-role aux=SPEC``, ``--model-role-arg aux.k=v``)."""
    if isinstance(role, str):
        role = {"spec": role}
    if isinstance(role, dict) and ("spec" in role or "args" in role):
        stored = ModelRole.named(role["spec"]).model_dump() if "spec" in role else {}
        return stored, dict(role.get("args") or {})
    return role, {}


_FLAT_KEYS = ("model", "base_url", "model_args", "sampling")
_FLAT_ROLE_FIELDS = (
    "model", "base_url", "model_args", "sampling",
    "aux_model", "aux_base_url", "aux_model_args", "aux_sampling",
)  # fmt: skip


class RoleSettings(DataSettings):
    """The fields of :class:`~arcmemo.run.config.RunConfig` that name each role's model (the
    ``Model roles`` options of ``arcmemo run``), and what each role calls."""

    # The solver's and the aux model's settings as flags and keyword arguments have always
    # been spelled (config.json files before roles held them too): aliases, folded into
    # ``roles``/``endpoints`` on validation and read back from them, never written. What
    # changes results is ``roles`` (compared role by role: result_values), so a new role in
    # arcmemo.core.roles needs no field here.
    model: Annotated[
        str | None,
        Setting(
            "--model",
            group="Model roles",
            help="Solver model, provider:model (e.g. openai:o4-mini).",
        ),
    ] = Field(default=None, exclude=True, description="The solver role's provider:model.")
    base_url: Annotated[
        str | None,
        Setting(
            "--base-url",
            group="Model roles",
            joined=True,
            help="OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp, Ollama). Repeat it (or "
            "give URL,URL) for replicas of one deployment: requests are spread over them with "
            "failover.",
        ),
    ] = Field(default=None, exclude=True, description="The solver role's endpoint.")
    model_args: Annotated[
        dict[str, str] | None,
        Setting(
            "--model-arg",
            group="Model roles",
            help="Solver provider option key=value; `arcmemo models` lists each provider's "
            "options (openai: top_p, top_k, seed, stop, chat_template_kwargs, extra_body, "
            "timeout_s, ...).",
        ),
    ] = Field(default=None, exclude=True, description="The solver role's provider options.")
    aux_model: Annotated[
        str | None,
        Setting(
            "--aux-model",
            group="Model roles",
            help="Model for selection, description, abstraction and judging (default: "
            "--model; --model-role select=... or abstract=... gives selection or abstraction "
            "its own). It has its own endpoint and options: --base-url and --model-arg apply "
            "to the solver only.",
        ),
    ] = Field(default=None, exclude=True, description="The aux role's provider:model.")
    aux_base_url: Annotated[
        str | None,
        Setting(
            "--aux-base-url",
            group="Model roles",
            joined=True,
            help="Endpoint of --aux-model (default: its provider's host); repeatable like "
            "--base-url.",
        ),
    ] = Field(default=None, exclude=True, description="The aux role's endpoint.")
    aux_model_args: Annotated[
        dict[str, str] | None,
        Setting("--aux-model-arg", group="Model roles", help="Aux provider option k=v."),
    ] = Field(default=None, exclude=True, description="The aux role's provider options.")
    aux_sampling: Annotated[
        SamplingConfig | None,
        Setting(
            group="Model roles",
            nested={
                "temperature": Setting(
                    "--aux-temperature",
                    group="Model roles",
                    help="Temperature of every aux-model call.",
                ),
                "max_tokens": Setting(
                    "--aux-max-tokens",
                    group="Model roles",
                    min=1,
                    help="Token cap of every aux-model call.",
                ),
            },
        ),
    ] = Field(default=None, exclude=True, description="The aux role's sampling.")
    sampling: Annotated[
        SamplingConfig | None,
        Setting(
            group="Model roles",
            nested={
                "temperature": Setting("--temperature", group="Model roles"),
                "max_tokens": Setting("--max-tokens", group="Model roles", min=1),
                "reasoning_effort": Setting(
                    "--reasoning-effort", group="Model roles", choices=("low", "medium", "high")
                ),
                "thinking_budget": Setting("--thinking-budget", group="Model roles", min=1),
            },
        ),
    ] = Field(default=None, exclude=True, description="The solver role's sampling.")
    roles: Annotated[
        dict[str, ModelRole],
        Setting(
            "--model-role",
            group="Model roles",
            results=True,
            args="--model-role-arg",
            help="ROLE=PROVIDER:MODEL: the model of a role (solver: writes the answers; "
            "select: picks the memory entries shown, default aux; abstract: writes solutions "
            "into memory, default aux; aux: every other call, e.g. the attribution judge, "
            "default the solver's client). --model is --model-role solver=..., --aux-model "
            "is --model-role aux=...; --model-role-arg ROLE.KEY=VALUE sets its options.",
        ),
    ] = Field(
        default_factory=dict,
        description="Model roles by name (solver, select, abstract, aux): each its provider "
        "with its options, its model and its sampling. A role without a model calls the "
        "model of the role it falls back to (select and abstract: aux, with aux's sampling "
        "under their own; aux: the solver, never its endpoint, options or sampling).",
    )
    endpoints: Annotated[
        dict[str, str],
        Setting(
            "--endpoint",
            group="Model roles",
            help="ROLE=URL: the endpoint of a role with its own model (--base-url is "
            "--endpoint solver=URL, --aux-base-url is --endpoint aux=URL); several URLs "
            "comma-separated.",
        ),
    ] = Field(
        default_factory=dict,
        description="Endpoint of each role for OpenAI-compatible servers (several: replicas "
        "of one deployment, comma-separated). Not a result setting: a moved server still "
        "serves the same model.",
    )

    @property
    def solver(self) -> ModelRole:
        """The solver role (always there, always with its own model)."""
        return self.roles[SOLVER]

    @property
    def solver_spec(self) -> str:
        """The solver's ``provider:model``."""
        spec = self.solver.spec
        assert spec is not None  # checked on validation
        return spec

    @property
    def aux_spec(self) -> str:
        """The ``provider:model`` the aux role calls (the solver's when it has none)."""
        return self.role_model(AUX)

    def role_model(self, name: str) -> str:
        """The ``provider:model`` role ``name`` calls: its own, else its fallback's."""
        role: str | None = name
        while role is not None:
            spec = self.roles[role].spec
            if spec is not None:
                return spec
            role = FALLBACK[role]
        return self.solver_spec

    def model_owner(self, name: str) -> str:
        """The role whose model (client, endpoint, options) role ``name`` calls."""
        fallback = FALLBACK[name]
        while self.roles[name].provider is None and fallback is not None:
            name, fallback = fallback, FALLBACK[fallback]
        return name

    def role_sampling(self, name: str) -> SamplingConfig:
        """The sampling of role ``name``'s calls: its own; for a role falling back to aux
        (select, abstract), aux's with its own settings over it (the solver's sampling is
        for answers, so aux does not inherit it)."""
        own = self.roles[name].sampling
        fallback = FALLBACK[name]
        if fallback is None or fallback == SOLVER:
            return own
        inherited = self.role_sampling(fallback).model_dump()
        given = {key: value for key, value in own.model_dump().items() if value is not None}
        return SamplingConfig.model_validate({**inherited, **given})

    @property
    def given_roles(self) -> tuple[str, ...]:
        """The roles whose calls are counted apart: the solver, aux, and every other role
        the run names a model for."""
        return tuple(
            name
            for name in MODEL_ROLES
            if name in (SOLVER, AUX) or self.roles[name].provider is not None
        )

    def role_spec(self, name: str) -> tuple[str, str | None, dict[str, Any]]:
        """``(provider:model, endpoint, provider options)`` of a role with its own model."""
        role = self.roles[name]
        assert role.provider is not None and role.spec is not None
        return role.spec, self.endpoints.get(name), dict(role.provider.options)

    @property
    def aux(self) -> ModelRole:
        """The aux role (always there; without a provider it uses the solver's client)."""
        return self.roles[AUX]
