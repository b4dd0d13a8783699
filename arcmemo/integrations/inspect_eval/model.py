"""arcmemo's model interface over an inspect model, so the run loop calls inspect's model
(its retries, cache, limits and transcript) without knowing it."""

from __future__ import annotations

from typing import Any, ClassVar

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)

from arcmemo.core.registry import NoOptions
from arcmemo.core.tokens import Usage
from arcmemo.models.base import Completion, GenerateParams, Message, Provider, ProviderError
from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.registry import register_provider


def _chat(message: Message) -> ChatMessage:
    if message.role == "system":
        return ChatMessageSystem(content=message.content)
    if message.role == "assistant":
        return ChatMessageAssistant(content=message.content)
    return ChatMessageUser(content=message.content)


def _config(params: GenerateParams) -> GenerateConfig:
    """The sampling arcmemo asks for; what it leaves unset stays inspect's (--temperature,
    --max-tokens, ... on the inspect command line)."""
    fields: dict[str, Any] = {
        "temperature": params.temperature,
        "max_tokens": params.max_tokens,
        "stop_seqs": list(params.stop) if params.stop else None,
        "reasoning_effort": params.reasoning_effort,
        "reasoning_tokens": params.thinking_budget,
        "seed": params.seed,
    }
    return GenerateConfig(**{k: v for k, v in fields.items() if v is not None})


class InspectProvider(Provider):
    """One inspect model as an arcmemo provider (one sample per request: not every inspect
    provider honours ``num_choices``)."""

    name: ClassVar[str] = "inspect"
    supports_n: ClassVar[bool] = False

    def __init__(self, model: Model) -> None:
        super().__init__(str(model))
        self.inspect_model = model

    async def generate(self, messages: list[Message], params: GenerateParams) -> list[Completion]:
        try:
            output = await self.inspect_model.generate(
                [_chat(m) for m in messages], config=_config(params)
            )
        except Exception as error:  # inspect retried already; the run records the failure
            raise ProviderError(f"{self.model}: {error}") from error
        if output.error:
            raise ProviderError(f"{self.model}: {output.error}")
        usage = output.usage
        tokens = Usage(
            prompt_tokens=usage.input_tokens if usage else 0,
            completion_tokens=usage.output_tokens if usage else 0,
            reasoning_tokens=(usage.reasoning_tokens or 0) if usage else 0,
            cached_tokens=(usage.input_tokens_cache_read or 0) if usage else 0,
            cache_write_tokens=(usage.input_tokens_cache_write or 0) if usage else 0,
        )
        choice = output.choices[0] if output.choices else None
        reasoning = None
        if choice is not None and not isinstance(choice.message.content, str):
            thoughts = [getattr(c, "reasoning", "") for c in choice.message.content]
            reasoning = "\n".join(t for t in thoughts if t) or None
        return [
            Completion(
                text=output.completion,
                reasoning=reasoning,
                finish_reason=choice.stop_reason if choice else None,
                usage=tokens,
                latency_s=output.time or 0.0,
            )
        ]


@register_provider(
    "inspect", summary="The model an inspect_ai evaluation runs", cls=InspectProvider
)
def inspect_from_spec(options: NoOptions, *, model: str) -> InspectProvider:
    """``inspect:MODEL``: inspect's model ``MODEL`` (``inspect:openai/o4-mini``), as
    ``get_model`` makes it; the name an inspect task's run config records for its solver."""
    return InspectProvider(get_model(model))


def inspect_client(model: Model) -> ModelClient:
    """A model client over ``model``: inspect already caches and retries, so arcmemo's
    response cache is off and a failure is not retried twice."""
    config = ModelConfig(cache=False, cache_write=False, request_retries=0)
    return ModelClient(InspectProvider(model), config=config)
