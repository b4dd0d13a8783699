"""A ``--batch`` run's provider batches: listed with where each stands, and canceled.

The batches are those the run recorded in ``batches.jsonl`` (:mod:`arcmemo.models.batch`,
its only writer); each is asked of its provider through the endpoint and options of the
run's model role that made it (``config.json``), so a key goes only to its own host. A
batch the provider cannot be asked about (gone, or its model no longer in the config) is
listed as recorded, with the reason.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from arcmemo.models.base import ProviderError
from arcmemo.models.batch import BatchBackend, BatchRecord, BatchStatus, read_batch_log
from arcmemo.models.registry import create_provider
from arcmemo.run.directory.reader import RunDirectory
from arcmemo.run.directory.records import RunDirError


class ProviderBatch(BaseModel):
    """One provider batch of a run, as its provider reports it now (or as recorded)."""

    batch_id: str
    model: str = Field(description="The provider:model spec that made it.")
    submitted: str = Field(description="When the run submitted it (UTC, from batches.jsonl).")
    requests: int = Field(description="Requests the run put in it.")
    state: str = Field(description="The provider's word now, else the recorded one.")
    done: int | None = None
    failed: int | None = None
    created: str | None = Field(default=None, description="When the provider created it.")
    reason: str | None = Field(default=None, description="Why it failed, where it did.")
    collected: bool = Field(description="Whether the run read its results.")
    note: str | None = Field(default=None, description="Why the provider was not asked.")
    canceled: bool = Field(default=False, description="Canceled by this command.")

    @property
    def ended(self) -> bool:
        return self.state in _ENDED_STATES


# Every provider's words for a batch that no longer changes, and the recorded states.
_ENDED_STATES = frozenset(
    {"completed", "expired", "failed", "cancelled", "ended", "unreadable", "gone"}
)


def _batch_log(run_dir: Path) -> tuple[RunDirectory, list[BatchRecord]]:
    rundir = RunDirectory(run_dir)
    if not rundir.config_path.exists():
        raise RunDirError(f"{run_dir}: not a run directory (no config.json)")
    if not rundir.batches_path.exists():
        raise RunDirError(
            f"{run_dir}: no batches.jsonl (the run was not made with --batch); nothing to list"
        )
    return rundir, read_batch_log(rundir.batches_path)


@asynccontextmanager
async def _backends(rundir: RunDirectory) -> AsyncIterator[dict[str, BatchBackend]]:
    """The batch API of each model role of the run, by its provider:model spec."""
    config = rundir.read_config()
    assert config is not None  # _batch_log checked config.json
    backends: dict[str, BatchBackend] = {}
    async with AsyncExitStack() as stack:
        for name, role in config.roles.items():
            if role.provider is None or role.spec is None or role.spec in backends:
                continue
            spec, endpoint, options = config.role_spec(name)
            provider: Any = create_provider(spec, base_url=endpoint, **options)
            stack.push_async_callback(provider.aclose)
            factory = getattr(provider, "batch_backend", None)
            if factory is not None:
                backends[spec] = factory()
        yield backends


def _recorded(record: BatchRecord, collected: BatchRecord | None) -> ProviderBatch:
    return ProviderBatch(
        batch_id=record.batch_id,
        model=record.model,
        submitted=record.ts,
        requests=len(record.requests),
        state=collected.state or "ended" if collected else "submitted",
        done=collected.answered if collected else None,
        reason=collected.reason if collected else None,
        collected=collected is not None,
    )


def _with_status(row: ProviderBatch, status: BatchStatus) -> ProviderBatch:
    return row.model_copy(
        update={
            "state": status.state,
            "done": status.done,
            "failed": status.failed,
            "created": status.created,
            "reason": status.rejected or row.reason,
        }
    )


async def _rows(
    rundir: RunDirectory,
    records: list[BatchRecord],
    backends: dict[str, BatchBackend],
    ids: list[str],
) -> list[ProviderBatch]:
    """The submitted batches (``ids``: only these; the provider is asked about no other)."""
    collected = {r.batch_id: r for r in records if r.event == "collected"}
    rows = []
    for record in _chosen(records, ids, rundir.path):
        row = _recorded(record, collected.get(record.batch_id))
        backend = backends.get(record.model)
        if backend is None:
            row.note = f"{record.model} is no batch-capable model of {rundir.config_path}"
        else:
            try:
                row = _with_status(row, await backend.status(record.batch_id))
            except ProviderError as error:
                # Deleted once collected (Anthropic), or the provider is not answering.
                row.note = str(error) if not row.collected else "deleted by the provider"
        rows.append(row)
    return rows


def _chosen(records: list[BatchRecord], ids: list[str], run_dir: Path) -> list[BatchRecord]:
    """The submission records of the batches ``ids`` (every one without ``ids``)."""
    submitted = [r for r in records if r.event == "submitted"]
    if not ids:
        return submitted
    known = {record.batch_id for record in submitted}
    unknown = [batch_id for batch_id in ids if batch_id not in known]
    if unknown:
        raise RunDirError(
            f"{run_dir}: no batch {', '.join(unknown)} in batches.jsonl "
            f"(its batches: {', '.join(sorted(known)) or 'none'})"
        )
    return [record for record in submitted if record.batch_id in ids]


async def list_batches(run_dir: Path, ids: list[str] | None = None) -> list[ProviderBatch]:
    """The run's batches (``ids``: only these), oldest first, with their state now."""
    rundir, records = _batch_log(run_dir)
    async with _backends(rundir) as backends:
        return await _rows(rundir, records, backends, ids or [])


async def cancel_batches(run_dir: Path, ids: list[str] | None = None) -> list[ProviderBatch]:
    """Cancel the run's batches still running (``ids``: only these) through the provider's
    cancel endpoint; every chosen batch, those canceled marked. A run waiting on one fails
    its requests with the reason instead of paying full price for them."""
    rundir, records = _batch_log(run_dir)
    async with _backends(rundir) as backends:
        rows = await _rows(rundir, records, backends, ids or [])
        result = []
        for row in rows:
            backend = backends.get(row.model)
            if backend is not None and row.note is None and not row.ended:
                status = await backend.cancel(row.batch_id)
                row = _with_status(row, status).model_copy(update={"canceled": True})
            result.append(row)
        return result
