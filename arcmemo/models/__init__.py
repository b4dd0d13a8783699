"""Model layer: providers behind one async interface, plus cache, retries and accounting.

Importing this package never imports a provider SDK; provider modules load on first use
through :func:`create_provider` / :func:`open_model`.
"""

from arcmemo.core.tokens import Usage
from arcmemo.models.accounting import CallRecord, StageUsage, UsageSummary, usage_from_records
from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    MissingCredentialError,
    Provider,
    ProviderError,
    ProviderOptions,
    RetryDecision,
)
from arcmemo.models.cache import ResponseCache
from arcmemo.models.client import ModelClient, open_model
from arcmemo.models.config import ModelConfig
from arcmemo.models.limiter import Limiter
from arcmemo.models.prices import PriceTable
from arcmemo.models.registry import (
    PROVIDERS,
    create_provider,
    parse_spec,
    register_provider,
)
from arcmemo.models.retry import ModelCallError
from arcmemo.models.scripted import ScriptedProvider, ScriptError

__all__ = [
    "PROVIDERS",
    "CallRecord",
    "Completion",
    "GenerateParams",
    "Limiter",
    "Message",
    "MissingCredentialError",
    "ModelCallError",
    "ModelClient",
    "ModelConfig",
    "PriceTable",
    "Provider",
    "ProviderError",
    "ProviderOptions",
    "ResponseCache",
    "RetryDecision",
    "ScriptError",
    "ScriptedProvider",
    "StageUsage",
    "Usage",
    "UsageSummary",
    "create_provider",
    "open_model",
    "parse_spec",
    "register_provider",
    "usage_from_records",
]
