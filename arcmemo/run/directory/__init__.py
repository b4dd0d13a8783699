"""The run directory: the one place that knows its files.

Files: ``config.json`` (the resolved :class:`~arcmemo.run.config.RunConfig`), ``results.jsonl``
(one finished task per line, flushed and fsynced as it finishes; the new result of a task
that a rerun solved again replaces the old line when the session ends,
:meth:`RunWriter.compact_results`), ``summary.json``,
``calls.jsonl`` (the model layer's log of every request), ``task_order.json`` (the processing
order), ``prompts/`` and ``estimate.json`` (dry runs), ``abstraction.jsonl`` (what each
abstraction wrote and what failed), ``run.lock`` (held by every live process of the run:
shared by runs that claim tasks, exclusive for a run in task batches) and ``claims/`` (one lock file
per task being solved, see :meth:`RunWriter.claim`), ``in_flight/`` (a marker per provider
request out) and ``cut_off_calls.jsonl`` (the requests a kill or an interrupt left in flight,
:mod:`arcmemo.models.in_flight`). A run made by ``arcmemo merge`` has
``merged.json`` (:mod:`arcmemo.analysis.shards`). A ``--batch`` run also keeps
``batches.jsonl``: each provider batch it submitted (id and the cache keys of its requests)
and each it collected (:class:`~arcmemo.models.batch.BatchRecord`), so a resume awaits a
batch instead of paying for it again.

A run in task batches (``--update online``, or ``--schedule passes``) also keeps
``schedule.json`` (its task batches, fixed when it starts: :class:`Schedule`), ``passes.jsonl``
(the state of each task still to be retried after a batch: :class:`TaskProgress`),
``memory/initial.json`` (the memory before the first batch), ``memory/batch-NNNN.delta.json``
(the memory after batch NNNN as its changes to the one before: :mod:`.snapshots`)
and ``memory/processed.json`` (:class:`BatchCommit`), written last in every batch: the batch
it names is done, and whatever the append-only files hold beyond the lengths it records
belongs to the next, unfinished batch and is cut off when the run resumes.

Formats: ``config.json`` records the directory's ``format_version`` (:data:`RUNDIR_FORMAT`);
a directory without one (format 1, arcmemo before it was recorded) kept each batch's memory
whole as ``memory/batch-NNNN.json``. Both kinds of snapshot are read, and a format-1 run
resumed today goes on with deltas whose chain starts at its last full snapshot.
``summary.json`` has its own version (:mod:`arcmemo.run.summary`).

:class:`RunDirectory` only reads (reports, bootstrapping, ``abstract --from``): a torn last
line of a crashed run is skipped, never cut. :class:`RunWriter` is what a running run holds:
it repairs the directory when the run starts and appends to it.

Modules: :mod:`.paths` (where each file lives), :mod:`.records` (what the files hold),
:mod:`.snapshots` (memory deltas), :mod:`.legacy` (runs saved by an earlier arcmemo),
:mod:`.reader` and :mod:`.writer`.
"""
