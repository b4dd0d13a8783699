"""The scripted runs the report tests render: their tasks, answers and client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from arcmemo.models.client import ModelClient
from arcmemo.models.config import ModelConfig
from arcmemo.models.scripted import ScriptedProvider
from arcmemo.run.config import RunConfig
from arcmemo.run.pipeline import run_benchmark

ARC_TASKS = ["66e6c45b", "00576224", "68b67ca3", "e345f17b", "bbb1b8b6", "ca8de6ea"]
XSS = "<script>alert('pwned')</script>"
NO_CHROMIUM = "Chromium is not installed (Debian/Ubuntu: apt-get install -y chromium)"

SELECTION_ANSWER = "I pick these.\n```yaml\n- tile grid\n- reflect grids\n- made up concept\n```"
PSEUDOCODE_ANSWER = "<summary>copy corners</summary><pseudocode>corners of the core</pseudocode>"
CONCEPTS_ANSWER = (
    "```yaml\n"
    "- name: tile grid\n"
    "  cues: ['output size is a multiple of the input size']\n"
    "- name: corner copy\n"
    "  kind: routine\n"
    "  routine_subtype: grid manipulation\n"
    "  description: copy the inner block's corners to the grid corners\n"
    "  parameters:\n"
    "    - name: grid\n"
    "      type: grid\n"
    "  output_type: grid\n"
    "```"
)


def scripted_client(respond: Any, out: Path) -> ModelClient:
    """A client answering through ``respond``, logging its calls under ``out``."""
    return ModelClient(
        ScriptedProvider.from_script(respond),
        config=ModelConfig(),
        call_log_path=out / "calls.jsonl",
    )


def run_scripted(config: RunConfig, respond: Any) -> None:
    """Run ``config`` with ``respond`` as the solver."""
    asyncio.run(run_benchmark(config, models={"solver": scripted_client(respond, config.out)}))


AIME_SCRIPT: dict[str, Any] = {
    "Find $2 + 3$": [
        {"text": "So the answer is \\boxed{5}.", "reasoning": "two plus three is five"},
        {"text": "\\boxed{5}", "reasoning": "adding"},
        {"text": "\\boxed{6}", "reasoning": "off by one"},
    ],
    "divisors of $2^{15}$": [
        {"text": "\\boxed{16}", "reasoning": "exponent plus one"},
        {"text": "\\boxed{15}", "reasoning": "forgot one"},
        {"text": "\\boxed{15}", "reasoning": "forgot one again"},
    ],
    "remainder when": [
        {"text": f"I refuse {XSS} to answer.", "reasoning": f"thinking {XSS}"},
        {"text": "\\boxed{1073}", "reasoning": "too big"},
        {"text": "\\boxed{73}", "reasoning": "mod 1000"},
    ],
}
