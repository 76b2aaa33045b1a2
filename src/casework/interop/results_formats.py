"""Per-trial results written by other eval tools, read into :class:`ExternalTrial` values.

Three formats (:data:`RESULT_FORMATS`): ``generic`` JSONL (one trial a line, fields found by
``--map``), ``tau`` (τ-bench's results JSON: a list of ``{task_id, reward, info, traj, trial}``)
and ``inspect`` (Inspect AI logs: a ``.eval`` zip of JSON or a ``.json`` log). Entry point:
:func:`read_results`. Every problem is reported (``path:line`` for JSONL, a JSON pointer for
JSON), all at once.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from casework.decoding import BadJSON, decode_utf8, load_json, parse_json
from casework.decompress import DecompressionLimits, Inflation
from casework.errors import InputError, InputErrors, Problem, UsageError
from casework.schema import Message, TrajectoryToolCall

ResultFormat = Literal["generic", "inspect", "tau"]
#: The per-trial result formats `import-run` reads.
RESULT_FORMATS: tuple[ResultFormat, ...] = get_args(ResultFormat)

#: Generic JSONL: destination fields ``--map`` accepts, with the source paths read by default.
RESULT_FIELDS: Mapping[str, tuple[str, ...]] = {
    "task_id": ("task_id", "case_id", "id"),
    "trial": ("trial", "epoch", "attempt"),
    "passed": ("passed", "pass", "success"),
    "reward": ("reward", "score"),
    "messages": ("messages", "traj", "trajectory"),
    "reply": ("reply", "final_reply", "output"),
    "tool_calls": ("tool_calls",),
    "explanation": ("explanation", "reason"),
    "dataset_hash": ("dataset_hash",),
    "scorer": (),
}

_MISSING: Any = object()
_TEXT_VALUES = {"c": 1.0, "correct": 1.0, "i": 0.0, "incorrect": 0.0, "p": 0.5, "partial": 0.5}
_TEXT_VALUES |= {"n": 0.0, "noanswer": 0.0, "true": 1.0, "yes": 1.0, "false": 0.0, "no": 0.0}


@dataclass(frozen=True)
class ExternalTrial:
    """One trial another tool ran and scored.

    Attributes:
        task_id: The tool's task or sample id (a case id when the run is pinned to a dataset).
        trial: Trial number, 0-based (Inspect epochs are 1-based and shifted).
        passed: The tool's pass/fail, when it gave one; else ``reward`` decides with a threshold.
        reward: The tool's score in [0, 1] (or any number, compared with the threshold).
        messages: The trial's messages, when the file holds them.
        tool_calls: Every tool call of the trial, in order.
        reply: The agent's last reply.
        explanation: The tool's reason for the score, if any.
        where: Where the trial was read (``file:line`` or ``file#/pointer``).
        metadata: Other fields kept with the trial.
    """

    task_id: str
    trial: int
    passed: bool | None
    reward: float | None
    messages: tuple[Message, ...] = ()
    tool_calls: tuple[TrajectoryToolCall, ...] = ()
    reply: str = ""
    explanation: str = ""
    where: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExternalResults:
    """Every trial of one results file, and what the file says about the run.

    Attributes:
        format: The format read.
        trials: The trials, in file order.
        dataset_hash: A dataset content hash the file names, if any.
        agent: The agent or model the file names, if any.
    """

    format: ResultFormat
    trials: list[ExternalTrial]
    dataset_hash: str | None = None
    agent: str | None = None


class _Bad(Exception):
    def __init__(self, pointer: str, message: str, got: Any = _MISSING) -> None:
        super().__init__(message)
        self.pointer = pointer
        self.message = message
        self.got = got


def _problem(shown: str, line: int | None, exc: _Bad) -> Problem:
    has = exc.got is not _MISSING
    return Problem(shown, line, exc.pointer or None, exc.message, exc.got if has else None, has)


def parse_field_map(specs: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Parse ``--map DST=SRC.PATH`` for results (``scorer=NAME`` picks an Inspect scorer).

    Raises:
        UsageError: A spec is not ``DST=SRC`` or names an unknown destination.
    """
    paths = {k: tuple(v) for k, v in RESULT_FIELDS.items()}
    for spec in specs:
        dst, sep, src = (s.strip() for s in spec.partition("="))
        if not sep or not dst or not src:
            raise UsageError(
                f"'{spec}': expected DST=SRC.PATH (e.g. task_id=meta.id).", param="map"
            )
        if dst not in RESULT_FIELDS:
            raise UsageError(
                f"'{spec}': unknown destination '{dst}'; use one of: {', '.join(RESULT_FIELDS)}.",
                param="map",
            )
        paths[dst] = (src,)
    return paths


def resolve(record: Any, path: str) -> Any:
    """Follow a dotted path (`meta.id`, `items.0.id`) through objects and lists (or ``_MISSING``)."""
    value = record
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def _first(record: Any, paths: Sequence[str]) -> tuple[str, Any]:
    for path in paths:
        value = resolve(record, path)
        if value is not _MISSING:
            return path, value
    return (paths[0] if paths else ""), _MISSING


def _task_id(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise _Bad(where, "task id must be a non-empty string or an integer", value)
    return str(value)


def _int(value: Any, where: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _Bad(where, f"must be an integer of at least {minimum}", value)
    return value


def score_value(value: Any, where: str) -> float:
    """A score as a number: numbers as they are; Inspect's C/I/P/N letters; yes/no; booleans."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer past a float's range
            number = float("inf")
        if number != number or number in (float("inf"), float("-inf")):
            raise _Bad(where, "score must be a finite number", value)
        return number
    if isinstance(value, str) and value.strip().lower() in _TEXT_VALUES:
        return _TEXT_VALUES[value.strip().lower()]
    raise _Bad(where, "score must be a number, a boolean or one of C, I, P, N, yes, no", value)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = parse_json(raw)
        except BadJSON:
            return {"_raw": raw}
    return dict(raw) if isinstance(raw, Mapping) else ({} if raw is None else {"_value": raw})


def _text(value: Any) -> str:
    """Text of a message content: a string, or the text parts of a list of parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p.get("text") for p in value if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return json.dumps(value, ensure_ascii=False, default=str)


def _call(raw: Any, where: str) -> tuple[TrajectoryToolCall, str | None]:
    """An OpenAI-style (``function.name``/``arguments``) or flat (``name``/``arguments``) call."""
    if not isinstance(raw, Mapping):
        raise _Bad(where, "tool call must be an object", raw)
    fn: Mapping[str, Any] = raw["function"] if isinstance(raw.get("function"), Mapping) else raw
    name = fn.get("name")
    if name is None and isinstance(raw.get("function"), str):
        name = raw["function"]  # Inspect: `function` is the tool's name
    if not isinstance(name, str) or not name:
        raise _Bad(f"{where}/function/name", "tool call needs a name", name)
    args = fn.get("arguments", fn.get("args", raw.get("arguments")))
    call_id = raw.get("id")
    return (
        TrajectoryToolCall(name=name, arguments=_arguments(args)),
        call_id if isinstance(call_id, str) else None,
    )


_ROLES: dict[str, Literal["user", "assistant", "system", "tool"]] = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool",
}
_ROLES |= {"human": "user", "model": "assistant", "ai": "assistant", "function": "tool"}


def read_messages(raw: Any, where: str) -> tuple[list[Message], list[TrajectoryToolCall]]:
    """Messages of a trial (OpenAI chat shape) and every tool call, results paired by call id."""
    if not isinstance(raw, list):
        raise _Bad(where, "messages must be a list", raw)
    messages: list[Message] = []
    calls: list[TrajectoryToolCall] = []
    by_id: dict[str, int] = {}
    for i, m in enumerate(raw):
        here = f"{where}/{i}"
        if not isinstance(m, Mapping):
            raise _Bad(here, "message must be an object", m)
        role = _ROLES.get(str(m.get("role", "")).lower())
        if role is None:
            raise _Bad(
                f"{here}/role", "role must be user, assistant, system or tool", m.get("role")
            )
        own: list[TrajectoryToolCall] = []
        raw_calls = m.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise _Bad(f"{here}/tool_calls", "must be a list", raw_calls)
        for j, c in enumerate(raw_calls):
            call, call_id = _call(c, f"{here}/tool_calls/{j}")
            own.append(call)
            if call_id is not None:
                by_id[call_id] = len(calls)
            calls.append(call)
        content = _text(m.get("content"))
        result_of = m.get("tool_call_id")
        if role == "tool" and isinstance(result_of, str) and result_of in by_id:
            k = by_id[result_of]
            error = m.get("error")
            update: dict[str, Any] = {"result": _maybe_json(content)}
            if error:
                update = {
                    "error": _text(error.get("message") if isinstance(error, Mapping) else error)
                }
            calls[k] = calls[k].model_copy(update=update)
        messages.append(Message(role=role, content=content, tool_calls=own))
    return messages, calls


def _maybe_json(text: str) -> Any:
    try:
        return parse_json(text)
    except BadJSON:
        return text


def _last_reply(messages: Sequence[Message]) -> str:
    for m in reversed(messages):
        if m.role == "assistant" and m.content.strip():
            return m.content
    return ""


def _generic_trial(
    obj: Any, paths: Mapping[str, tuple[str, ...]], counts: dict[str, int], where: str
) -> ExternalTrial:
    if not isinstance(obj, Mapping):
        raise _Bad("", "a result line must be a JSON object", obj)
    at, raw_id = _first(obj, paths["task_id"])
    if raw_id is _MISSING:
        raise _Bad(at, "no task id (map one with task_id=PATH)")
    task_id = _task_id(raw_id, at)
    at, raw_trial = _first(obj, paths["trial"])
    trial = counts.get(task_id, 0) if raw_trial is _MISSING else _int(raw_trial, at)
    counts[task_id] = max(counts.get(task_id, 0), trial + 1)
    at_p, raw_pass = _first(obj, paths["passed"])
    at_r, raw_reward = _first(obj, paths["reward"])
    raw_pass = None if raw_pass is _MISSING else raw_pass
    raw_reward = None if raw_reward is _MISSING else raw_reward
    if raw_pass is None and raw_reward is None:
        raise _Bad(at_p, "no pass/fail and no reward (map one with passed=PATH or reward=PATH)")
    passed = None if raw_pass is None else score_value(raw_pass, at_p) >= 1.0
    reward = None if raw_reward is None else score_value(raw_reward, at_r)
    messages: list[Message] = []
    calls: list[TrajectoryToolCall] = []
    at, raw_msgs = _first(obj, paths["messages"])
    if raw_msgs is not _MISSING and raw_msgs is not None:
        messages, calls = read_messages(raw_msgs, at)
    at, raw_calls = _first(obj, paths["tool_calls"])
    if raw_calls is not _MISSING and raw_calls is not None:
        if not isinstance(raw_calls, list):
            raise _Bad(at, "must be a list of tool calls", raw_calls)
        calls = [_call(c, f"{at}.{i}")[0] for i, c in enumerate(raw_calls)]
    _, reply = _first(obj, paths["reply"])
    _, why = _first(obj, paths["explanation"])
    return ExternalTrial(
        task_id=task_id,
        trial=trial,
        passed=passed,
        reward=reward,
        messages=tuple(messages),
        tool_calls=tuple(calls),
        reply=_text(reply) if reply is not _MISSING else _last_reply(messages),
        explanation=_text(why) if why is not _MISSING else "",
        where=where,
    )


def read_generic_results(
    data: bytes, shown: str, paths: Mapping[str, tuple[str, ...]]
) -> ExternalResults:
    """Generic JSONL results: one trial a line (blank lines skipped), every bad line reported."""
    text = decode_utf8(data, shown)
    trials: list[ExternalTrial] = []
    problems: list[Problem] = []
    counts: dict[str, int] = {}
    hashes: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = parse_json(line)
        except BadJSON as exc:
            problems.append(Problem(shown, number, None, exc.message))
            continue
        try:
            trials.append(_generic_trial(obj, paths, counts, f"{shown}:{number}"))
            at, h = _first(obj, paths["dataset_hash"])
            if h is not _MISSING:
                if not isinstance(h, str) or not h:
                    raise _Bad(at, "dataset hash must be a string", h)
                hashes.add(h)
        except _Bad as exc:
            problems.append(_problem(shown, number, exc))
    if not problems and len(hashes) > 1:
        problems.append(Problem(shown, None, "dataset_hash", "lines name different dataset hashes"))
    if not problems and not trials:
        problems.append(Problem(shown, None, None, "no result lines"))
    InputErrors.raise_if_any(problems)
    return ExternalResults("generic", trials, next(iter(hashes), None))


def _tau_trial(obj: Any, i: int, shown: str) -> ExternalTrial:
    here = f"/{i}"
    if not isinstance(obj, Mapping):
        raise _Bad(
            here, "a τ-bench result must be an object {task_id, reward, info, traj, trial}", obj
        )
    for key in ("task_id", "reward"):
        if key not in obj:
            raise _Bad(f"{here}/{key}", "missing")
    messages, calls = read_messages(obj.get("traj") or [], f"{here}/traj")
    info = obj.get("info") if isinstance(obj.get("info"), Mapping) else {}
    reward_info = info.get("reward_info") if isinstance(info, Mapping) else None
    return ExternalTrial(
        task_id=_task_id(obj["task_id"], f"{here}/task_id"),
        trial=_int(obj.get("trial", 0), f"{here}/trial"),
        passed=None,
        reward=score_value(obj["reward"], f"{here}/reward"),
        messages=tuple(messages),
        tool_calls=tuple(calls),
        reply=_last_reply(messages),
        explanation="" if reward_info is None else json.dumps(reward_info, default=str)[:500],
        where=f"{shown}#{here}",
    )


def read_tau_results(data: bytes, shown: str) -> ExternalResults:
    """τ-bench results: a JSON list of ``{task_id, reward, info, traj, trial}`` (pointers located)."""
    value = load_json(data, shown)
    if not isinstance(value, list):
        raise InputError(shown, None, "/", "τ-bench results must be a JSON list of results", value)
    trials: list[ExternalTrial] = []
    problems: list[Problem] = []
    for i, obj in enumerate(value):
        try:
            trials.append(_tau_trial(obj, i, shown))
        except _Bad as exc:
            problems.append(_problem(shown, None, exc))
    if not problems and not trials:
        problems.append(Problem(shown, None, "/", "no results"))
    InputErrors.raise_if_any(problems)
    return ExternalResults("tau", trials)


def _inspect_score(sample: Mapping[str, Any], scorer: str | None, here: str) -> tuple[Any, str]:
    scores = sample.get("scores")
    if scores is None and "score" in sample:
        scores = {"score": sample["score"]}
    if not isinstance(scores, Mapping) or not scores:
        got = _MISSING if scores is None else scores
        raise _Bad(f"{here}/scores", "sample has no scores (was it scored?)", got)
    name = scorer if scorer is not None else next(iter(scores))
    if name not in scores:
        raise _Bad(f"{here}/scores", f"no scorer '{name}'; the sample has {', '.join(scores)}")
    score = scores[name]
    if not isinstance(score, Mapping) or "value" not in score:
        raise _Bad(f"{here}/scores/{name}", "score must be an object with a value", score)
    why = score.get("explanation")
    return score["value"], (why if isinstance(why, str) else "")


def _inspect_trial(sample: Any, here: str, shown: str, scorer: str | None) -> ExternalTrial:
    if not isinstance(sample, Mapping):
        raise _Bad(here, "an Inspect sample must be an object", sample)
    if "id" not in sample:
        raise _Bad(f"{here}/id", "missing")
    epoch = _int(sample.get("epoch", 1), f"{here}/epoch", minimum=1)
    value, why = _inspect_score(sample, scorer, here)
    messages, calls = read_messages(sample.get("messages") or [], f"{here}/messages")
    output = sample.get("output")
    reply = output.get("completion") if isinstance(output, Mapping) else None
    return ExternalTrial(
        task_id=_task_id(sample["id"], f"{here}/id"),
        trial=epoch - 1,
        passed=None,
        reward=score_value(value, f"{here}/scores/value"),
        messages=tuple(messages),
        tool_calls=tuple(calls),
        reply=reply if isinstance(reply, str) and reply else _last_reply(messages),
        explanation=why,
        where=f"{shown}#{here}",
    )


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
        except _Bad as exc:
            problems.append(_problem(where, None, exc))
    if not problems and not trials:
        problems.append(Problem(shown, None, "/samples", "log holds no samples"))
    InputErrors.raise_if_any(problems)
    ev = header.get("eval") if isinstance(header, Mapping) else None
    model = ev.get("model") if isinstance(ev, Mapping) else None
    return ExternalResults("inspect", trials, agent=model if isinstance(model, str) else None)


def read_results(
    path: Path,
    fmt: ResultFormat,
    mapping: Sequence[str] = (),
    shown: str | None = None,
    limits: DecompressionLimits | None = None,
) -> ExternalResults:
    """Read a results file of format ``fmt``.

    Args:
        path: The file.
        fmt: ``generic``, ``tau`` or ``inspect``.
        mapping: ``DST=SRC.PATH`` specs (generic fields; ``scorer=NAME`` for Inspect).
        shown: How to name the file in errors.
        limits: How much a compressed file (an Inspect ``.eval`` zip) may inflate; default
            from ``CASEWORK_MAX_DECOMPRESSED`` and ``CASEWORK_MAX_COMPRESSION_RATIO``.

    Raises:
        InputError: The file is missing or bad (every problem, located).
        UsageError: A bad mapping, or a mapping given for a format that takes none.
    """
    name = shown or str(path)
    paths = parse_field_map(mapping)
    if fmt == "tau" and mapping:
        raise UsageError(
            "τ-bench results have a fixed shape; `map` is for generic files.", param="map"
        )
    if not path.is_file():
        raise InputError(name, None, None, "results file not found")
    data = path.read_bytes()
    readers: dict[str, Callable[[], ExternalResults]] = {
        "generic": lambda: read_generic_results(data, name, paths),
        "tau": lambda: read_tau_results(data, name),
        "inspect": lambda: read_inspect_results(
            data, name, paths["scorer"][0] if paths["scorer"] else None, limits
        ),
    }
    return readers[fmt]()
