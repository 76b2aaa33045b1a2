"""Run exported samples through Inspect AI itself, on its scripted mock model, and write its log.

Run in a fresh process (Inspect's event loop leaves streams for the garbage collector, which the
test suite's strict warnings would report): ``python -m tests.interop.inspect_run SAMPLES LOG_DIR
ID...``. Each chosen sample runs two epochs; the mock model gives every call the same reply with
a known token usage (so it does not count tokens: tiktoken would fetch its tables), and Inspect's
`includes` scorer scores it. Prints the log's path. Nothing here imports casework.
"""

from __future__ import annotations

import sys

from inspect_ai import Task, eval
from inspect_ai.dataset import json_dataset
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


def main(samples: str, log_dir: str, ids: list[str]) -> str:
    """Evaluate the samples named by ``ids``; returns the log's location."""
    chosen = [s for s in json_dataset(samples) if str(s.id) in ids]
    reply = ModelOutput.from_content("mockllm/model", "Your refund is on its way.")
    reply.usage = ModelUsage(input_tokens=11, output_tokens=7, total_tokens=18)
    model = get_model("mockllm/model", custom_outputs=[reply] * (2 * len(chosen)), memoize=False)
    task = Task(dataset=chosen, solver=generate(), scorer=includes(), epochs=2)
    [log] = eval(task, model=model, log_dir=log_dir, display="none")
    if log.status != "success":
        raise SystemExit(f"Inspect's run ended {log.status}: {log.error}")
    return str(log.location)


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
