"""Inspect AI, both ways: cases out as samples, and Inspect logs read as per-trial results.

Entry points: :func:`export_inspect_samples` / :func:`inspect_samples` (cases as Inspect
samples) and :func:`read_inspect_results` (a ``.eval`` or ``.json`` log, the ``inspect`` format
of `casework import run`). Samples come in as generic rows with Inspect's defaults
(:func:`casework.interop.generic.import_cases`).
"""

from casework.interop.inspect._samples import export_inspect_samples

__all__ = [
    "export_inspect_samples",
]
