"""Write the Inspect AI logs under tests/interop/data/inspect with the `inspect_ai` package itself.

Not part of the suite (inspect_ai is not a casework dependency): run it in a scratch venv that has
`inspect_ai` installed, offline, on Inspect's scripted `mockllm/model`:

    python -m venv /tmp/inspectvenv && /tmp/inspectvenv/bin/pip install inspect_ai
    /tmp/inspectvenv/bin/python tests/interop/make_inspect_log.py

Three samples, two epochs each; the scorer `includes` marks C/I by whether the target appears in
the mock model's fixed reply, so the verdicts are known in advance (the tests assert them).
Inspect writes `.eval` entries zstd-compressed; `refunds-deflate.eval` holds the same entries
deflated, as older Inspect versions wrote them (Python's zipfile reads it without `zstandard`).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Literal

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate

OUT = Path(__file__).resolve().parent / "data" / "inspect"


def task() -> Task:
    samples = [
        Sample(id="r-1", input="Refund order ORD-000001", target="refunded"),
        Sample(id="r-2", input="Where is my parcel?", target="shipped"),
        Sample(id="r-3", input="Cancel my order", target="refunded", metadata={"slice": "x"}),
    ]
    return Task(dataset=samples, solver=[generate()], scorer=includes(), epochs=2)


def main() -> int:
    # The mock model answers every call with the same text: "refunded" passes r-1 and r-3.
    formats: tuple[tuple[Literal["eval", "json"], str], ...] = (
        ("eval", ".eval"),
        ("json", ".json"),
    )
    for fmt, suffix in formats:
        reply = ModelOutput.from_content("mockllm/model", "Your order is refunded.")
        # Usage given, so the mock model does not count tokens (tiktoken would fetch its tables).
        reply.usage = ModelUsage(input_tokens=5, output_tokens=4, total_tokens=9)
        outputs = [reply] * 6
        model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
        tmp = OUT / f"_tmp_{fmt}"
        logs = eval(task(), model=model, log_dir=str(tmp), log_format=fmt, display="none")
        src = Path(logs[0].location)
        shutil.copy(src, OUT / f"refunds{suffix}")
        shutil.rmtree(tmp)
    _deflate_copy(OUT / "refunds.eval", OUT / "refunds-deflate.eval")
    return 0


def _deflate_copy(src: Path, dest: Path) -> None:
    """The same .eval with its entries deflated, as Inspect wrote them before it used zstd."""
    import zipfile

    import inspect_ai._util.zipfile  # noqa: F401  (teaches zipfile to read zstd entries)

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info.filename))


if __name__ == "__main__":
    sys.exit(main())
