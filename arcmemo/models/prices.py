"""Token prices and the cost of a call.

The packaged table (``prices.json`` next to this module) holds list prices for common
models in USD per million tokens; a user file of the same shape (``ARCMEMO_PRICES`` or
an explicit path) overrides or extends it. A model missing from both, or a price field
that is ``null`` but needed, makes the cost ``None``: never a guess.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from arcmemo.core.tokens import Usage

PRICES_ENV = "ARCMEMO_PRICES"
DEFAULT_PRICES_PATH = Path(__file__).with_name("prices.json")
_PER_TOKENS = 1_000_000
# OpenAI's Batch API and Anthropic's Message Batches both bill every token at half price.
BATCH_DISCOUNT = 0.5


class ModelPrice(BaseModel):
    """USD per million tokens for one model; ``None`` = unknown."""

    input: float | None = Field(default=None, description="Uncached prompt tokens.")
    cached_input: float | None = Field(
        default=None, description="Prompt tokens read from the cache."
    )
    cache_write: float | None = Field(
        default=None, description="Prompt tokens written to the cache."
    )
    output: float | None = Field(default=None, description="Generated tokens, reasoning included.")

    def cost_usd(self, usage: Usage) -> float | None:
        """Cost of ``usage`` at these prices, or ``None`` when a needed price is unknown."""
        uncached = max(usage.prompt_tokens - usage.cached_tokens - usage.cache_write_tokens, 0)
        parts = [
            (uncached, self.input),
            (usage.cached_tokens, self.cached_input),
            (usage.cache_write_tokens, self.cache_write),
            (usage.completion_tokens, self.output),
        ]
        total = 0.0
        for tokens, price in parts:
            if tokens == 0:
                continue
            if price is None:
                return None
            total += tokens * price
        return total / _PER_TOKENS


class PriceFile(BaseModel):
    """The on-disk shape of a price table."""

    models: dict[str, ModelPrice] = Field(default_factory=dict)


class PriceTableError(ValueError):
    """A price file that cannot be used; the message names the file and what to fix."""


def _read_price_file(path: Path) -> dict[str, ModelPrice]:
    try:
        return PriceFile.model_validate(json.loads(path.read_text())).models
    except FileNotFoundError as error:
        raise FileNotFoundError(f"price table {path} does not exist") from error
    except json.JSONDecodeError as error:
        raise PriceTableError(
            f"price table {path} is not valid JSON (line {error.lineno} column {error.colno}: "
            f'{error.msg}); it holds {{"models": {{"provider:model": {{"input": USD per '
            'million, "output": ...}}}'
        ) from None
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        raise PriceTableError(f"price table {path}: at {where}: {first['msg']}") from None
    except UnicodeDecodeError as error:
        raise PriceTableError(f"price table {path}: not UTF-8 text (byte {error.start})") from None


class PriceTable:
    """Prices by ``provider:model`` spec, with ``provider:*`` fallbacks."""

    def __init__(self, prices: dict[str, ModelPrice]) -> None:
        self.prices = dict(prices)

    @classmethod
    def load(cls, override_path: Path | None = None) -> PriceTable:
        """The packaged table, overridden by ``override_path`` or else ``$ARCMEMO_PRICES``."""
        prices = _read_price_file(DEFAULT_PRICES_PATH)
        if override_path is None and os.environ.get(PRICES_ENV):
            override_path = Path(os.environ[PRICES_ENV]).expanduser()
        if override_path is not None:
            prices.update(_read_price_file(override_path))
        return cls(prices)

    def price_for(self, spec: str) -> ModelPrice | None:
        """The price entry of ``spec``: exact match, else the provider's ``*`` entry."""
        if spec in self.prices:
            return self.prices[spec]
        provider = spec.partition(":")[0]
        return self.prices.get(f"{provider}:*")

    def cost_usd(self, spec: str, usage: Usage) -> float | None:
        """Cost of ``usage`` for model ``spec``; ``None`` when unknown."""
        price = self.price_for(spec)
        return None if price is None else price.cost_usd(usage)

    def batch_cost_usd(self, spec: str, usage: Usage) -> float | None:
        """Cost of ``usage`` answered by a provider batch (the table's price, discounted)."""
        cost = self.cost_usd(spec, usage)
        return None if cost is None else cost * BATCH_DISCOUNT
