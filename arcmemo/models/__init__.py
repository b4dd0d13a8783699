"""Model layer: providers behind one async interface, plus cache, retries and accounting."""

from arcmemo.models.base import (
    Completion,
    GenerateParams,
    Message,
    MissingCredentialError,
    Provider,
    ProviderError,
    RetryDecision,
    Usage,
    register_provider,
)

__all__ = [
    "Completion",
    "GenerateParams",
    "Message",
    "MissingCredentialError",
    "Provider",
    "ProviderError",
    "RetryDecision",
    "Usage",
    "register_provider",
]
