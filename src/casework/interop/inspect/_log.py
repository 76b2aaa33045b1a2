"""Inspect AI logs read as per-trial results: a ``.eval`` zip of JSON, or a ``.json`` log.

Entry point: :func:`read_inspect_results` (the ``inspect`` format of `casework import run`): one
trial per sample and epoch, scored by the first scorer or the one named; a ``.eval`` zip is
inflated within bounds (Zstandard entries through the optional ``zstandard``).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from casework.decoding import load_json
from casework.decompress import DecompressionLimits, Inflation
from casework.errors import InputError, InputErrors, Problem
from casework.interop._paths import MISSING
from casework.interop.results import (
    ExternalResults,
    ExternalTrial,
    ResultProblem,
    last_reply,
    problem_at,
    read_messages,
    score_value,
    task_id_of,
    whole_number,
)


def _inspect_score(sample: Mapping[str, Any], scorer: str | None, here: str) -> tuple[Any, str]:
    scores = sample.get("scores")
    if scores is None and "score" in sample:
        scores = {"score": sample["score"]}
    if not isinstance(scores, Mapping) or not scores:
        got = MISSING if scores is None else scores
        raise ResultProblem(f"{here}/scores", "sample has no scores (was it scored?)", got)
    name = scorer if scorer is not None else next(iter(scores))
    if name not in scores:
        raise ResultProblem(
            f"{here}/scores", f"no scorer '{name}'; the sample has {', '.join(scores)}"
        )
    score = scores[name]
    if not isinstance(score, Mapping) or "value" not in score:
        raise ResultProblem(f"{here}/scores/{name}", "score must be an object with a value", score)
    why = score.get("explanation")
    return score["value"], (why if isinstance(why, str) else "")


def _inspect_trial(sample: Any, here: str, shown: str, scorer: str | None) -> ExternalTrial:
    if not isinstance(sample, Mapping):
        raise ResultProblem(here, "an Inspect sample must be an object", sample)
    if "id" not in sample:
        raise ResultProblem(f"{here}/id", "missing")
    epoch = whole_number(sample.get("epoch", 1), f"{here}/epoch", minimum=1)
    value, why = _inspect_score(sample, scorer, here)
    messages, calls = read_messages(sample.get("messages") or [], f"{here}/messages")
    output = sample.get("output")
    reply = output.get("completion") if isinstance(output, Mapping) else None
    tokens = _usage(sample.get("model_usage"), f"{here}/model_usage")
    return ExternalTrial(
        task_id=task_id_of(sample["id"], f"{here}/id"),
        trial=epoch - 1,
        passed=None,
        reward=score_value(value, f"{here}/scores/value"),
        messages=tuple(messages),
        tool_calls=tuple(calls),
        reply=reply if isinstance(reply, str) and reply else last_reply(messages),
        explanation=why,
        where=f"{shown}#{here}",
        started_at=_when(sample.get("started_at"), f"{here}/started_at"),
        duration_s=_seconds(sample.get("total_time"), f"{here}/total_time"),
        input_tokens=tokens[0],
        output_tokens=tokens[1],
    )


def _when(value: Any, here: str) -> datetime | None:
    """Inspect's ISO 8601 `started_at` (absent in logs older than the field)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            at = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    raise ResultProblem(here, "must be an ISO 8601 date and time", value)


def _seconds(value: Any, here: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e9:
        return float(value)
    raise ResultProblem(here, "must be a number of seconds", value)


def _usage(value: Any, here: str) -> tuple[int | None, int | None]:
    """Input and output tokens summed over the models a sample used (`model_usage`)."""
    if value is None:
        return None, None
    if not isinstance(value, Mapping):
        raise ResultProblem(here, "must map each model to its usage", value)
    totals = [0, 0]
    for model, usage in value.items():
        if not isinstance(usage, Mapping):
            raise ResultProblem(f"{here}/{model}", "must be an object of token counts", usage)
        for i, key in enumerate(("input_tokens", "output_tokens")):
            totals[i] += whole_number(usage.get(key, 0), f"{here}/{model}/{key}", minimum=0)
    return totals[0], totals[1]


_ZSTD = 93  # zip compression method of Zstandard, which Inspect writes since 2025


def _zstd_entry(data: bytes, info: zipfile.ZipInfo, where: str, inflation: Inflation) -> bytes:
    """A zstd-compressed zip entry (Python's zipfile reads zstd only from 3.14), inflated bounded."""
    try:
        import zstandard  # optional: only zstd-compressed .eval logs need it
    except ImportError:
        raise InputError(
            where,
            None,
            None,
            "this .eval log is zstd-compressed; install `zstandard` (pip install zstandard) "
            "or convert it with `inspect log convert --to json`",
        ) from None
    start = info.header_offset
    if data[start : start + 4] != b"PK\x03\x04":
        raise InputError(where, None, None, "bad zip local header")
    name_len = int.from_bytes(data[start + 26 : start + 28], "little")
    extra_len = int.from_bytes(data[start + 28 : start + 30], "little")
    body = start + 30 + name_len + extra_len
    raw = data[body : body + info.compress_size]
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
    with reader:
        return inflation.read(reader, len(raw), where)


def _eval_members(
    data: bytes, shown: str, limits: DecompressionLimits | None
) -> Iterator[tuple[str, Any]]:
    """``(name, JSON)`` of a ``.eval`` zip's header and sample entries, inflated within ``limits``."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise InputError(shown, None, None, f"not an Inspect .eval log (a zip): {exc}") from None
    inflation = Inflation(shown, limits)
    for info in infos:
        name = info.filename
        if name == "header.json" or (name.startswith("samples/") and name.endswith(".json")):
            where = f"{shown}!{name}"
            try:
                if info.compress_type == _ZSTD:
                    raw = _zstd_entry(data, info, where, inflation)
                else:
                    # The member's extent is at most the file: a declared size cannot widen it.
                    extent = min(info.compress_size, len(data))
                    with archive.open(info) as member:
                        raw = inflation.read(member, extent, where)
            except InputError:
                raise
            except Exception as exc:  # zipfile and the decompressors raise many kinds
                raise InputError(where, None, None, f"unreadable zip entry: {exc}") from None
            yield name, load_json(raw, where)


def read_inspect_results(
    data: bytes, shown: str, scorer: str | None, limits: DecompressionLimits | None = None
) -> ExternalResults:
    """Inspect AI results: a ``.eval`` zip (``header.json``, ``samples/*.json``) or a JSON log.

    A ``.eval`` zip is inflated within ``limits`` (default: from the environment, see
    :class:`~casework.decompress.DecompressionLimits`).
    """
    items: list[tuple[str, Any]] = []
    header: Any = None
    if data.startswith(b"PK"):
        for name, value in _eval_members(data, shown, limits):
            if name == "header.json":
                header = value
            else:
                items.append((f"{shown}!{name}", value))
    else:
        log = load_json(data, shown)
        if not isinstance(log, Mapping) or not isinstance(log.get("samples"), list):
            raise InputError(
                shown, None, "/samples", "an Inspect JSON log needs a samples list", log
            )
        header = log
        items = [(shown, s) for s in log["samples"]]
    trials: list[ExternalTrial] = []
    problems: list[Problem] = []
    for i, (where, sample) in enumerate(items):
        here = "" if where != shown else f"/samples/{i}"
        try:
            trials.append(_inspect_trial(sample, here, where, scorer))
        except ResultProblem as exc:
            problems.append(problem_at(where, None, exc))
    if not problems and not trials:
        problems.append(Problem(shown, None, "/samples", "log holds no samples"))
    InputErrors.raise_if_any(problems)
    ev = header.get("eval") if isinstance(header, Mapping) else None
    model = ev.get("model") if isinstance(ev, Mapping) else None
    return ExternalResults("inspect", trials, agent=model if isinstance(model, str) else None)
