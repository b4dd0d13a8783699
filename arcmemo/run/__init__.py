"""One run, from its config to its summary: resolving the config, opening the session (the
benchmark, the memory, the selector, one model client per role), the task loop and its
scheduler, online memory updates, the run directory, the dry-run estimate.
"""
