"""What the tests share: scripted models, fake servers, fixture loaders and builders.

Test modules import from here (``from tests.support.paths import FIXTURES``), never from
another test module or a conftest; conftest files hold only fixtures and hooks. One module
per job; the data they read lives in ``tests/fixtures/``.

- paths: where the fixtures, scripts and puzzles are
- scripted_models: the scripted models of tests/fixtures as modules (loop_model, arc_plan, ...)
- arc_solutions: programs that solve real ARC evaluation tasks, and their concept
- schedule_script: the schedule tests' prompt-determined model that can crash on cue
- model_clients, fake_llm_server, fake_batch_server, local_model, inspect_server,
  arc_plan_server: model clients and OpenAI/Anthropic-protocol servers on 127.0.0.1
- sandboxes, native_module, sandbox_corpus: sandboxes, programs and native code to run in them
- memories, library_programs, library_run, task_results, report_runs, synthetic_runs,
  paper_runs: builders of memories, library programs, results and whole runs
- abstraction, selection: recording models for the abstraction and selection tests
- barc, puzzle_modules: BARC checkouts and puzzle generator modules
- report_pages, chromium: reading rendered report pages, a headless Chromium
- experiment_scripts, local_slurm: the experiments/ scripts and a local SLURM cluster
- slow_report: the end-of-run list of tests over 5 s not marked slow
"""
