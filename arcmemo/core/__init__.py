"""The foundation every layer stands on: records of a run, the registry shape, atomic files,
templates, token counts, statistics, settings, the model roles and live progress.

Nothing here imports a model SDK, the memory or a run.
"""
