"""`casework mine`: read production traces, scrub in memory, add draft situations to a dataset.

Entry point: :func:`mine`. The key is loaded and every trace read and scrubbed before anything
is written; the only write is the dataset release, which holds scrubbed drafts only.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from casework.dataset import load_dataset, release
from casework.dataset.lock import dataset_lock
from casework.dataset.versions import CASES_FILE
from casework.errors import InputError, InputErrors, Problem, UsageError
from casework.mining.conversation import RawConversation
from casework.mining.drafts import DraftOptions, draft_case
from casework.mining.generic import parse_mapping, read_generic
from casework.mining.openinference import conversations_from_openinference
from casework.mining.otel_genai import content_off, conversations_from_genai
from casework.mining.otlp import read_spans
from casework.mining.signals import SIGNALS, failure_signals
from casework.names import check_name
from casework.privacy import load_key, scrubber_for
from casework.privacy.keys import check_fingerprints
from casework.project import Project
from casework.schema import Case, LabelRecord, Split, VersionRecord

__all__ = [
    "FORMATS",
    "MineOptions",
    "MineReport",
    "TraceFormat",
    "detect_format",
    "mine",
    "read_conversations",
    "trace_files",
]

TraceFormat = Literal["jsonl", "otel", "openinference"]
#: Trace formats `casework mine --trace-format` accepts (`jsonl` is the generic format, JSON too).
FORMATS: tuple[TraceFormat, ...] = ("jsonl", "otel", "openinference")
_SUFFIXES = (".jsonl", ".ndjson", ".json")


@dataclass(frozen=True)
class MineOptions:
    """What `casework mine` does with the traces.

    Attributes:
        trace_format: Format of every file, or ``None`` to detect it per file.
        mapping: ``DST=SRC.PATH`` field mappings (generic format only).
        failing_only: Keep only conversations with at least one failure signal.
        slice: Slice of drafts whose trace names none.
        split: Split of the drafts.
        message: Release message (default: says what was mined).
        now: Mining time (injected by tests; default: now, UTC).
        environ: Environment to read the key from (default: the process environment).
    """

    trace_format: TraceFormat | None = None
    mapping: tuple[str, ...] = ()
    failing_only: bool = False
    slice: str = "unsorted"
    split: Split = "dev"
    message: str | None = None
    now: datetime | None = None
    environ: Mapping[str, str] | None = None


@dataclass(frozen=True)
class MineReport:
    """What a mining run did (counts only: no identifiers).

    Attributes:
        dataset: Dataset name.
        files: Trace files read.
        conversations: Conversations read.
        drafted: Ids of the new draft cases.
        already_present: Conversations whose draft the dataset already holds.
        not_failing: Conversations left out by ``--failing-only``.
        no_user_turn: Conversations without a user message (nothing to draft).
        signals: How many conversations read show each failure signal.
        expired: Rows past ``retain_until`` removed in the same release.
        version: The new release, or ``None`` when nothing changed.
        key_fingerprint: Fingerprint of the pseudonym key used.
        formats: How many files were read in each format.
    """

    dataset: str
    files: list[str]
    conversations: int
    drafted: list[str]
    already_present: int
    not_failing: int
    no_user_turn: int
    signals: dict[str, int]
    expired: int
    version: VersionRecord | None
    key_fingerprint: str
    formats: dict[str, int] = field(default_factory=dict)


def trace_files(paths: Sequence[Path]) -> list[Path]:
    """The files to read: each file given, and the `.jsonl`/`.ndjson`/`.json` files of each folder.

    Raises:
        UsageError: A path does not exist, or a folder holds no trace file.
    """
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in _SUFFIXES)
            if not found:
                raise UsageError(f"{path}: folder holds no .jsonl, .ndjson or .json trace file.")
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            raise UsageError(f"{path}: no such file or folder.")
    return out


def detect_format(path: Path) -> TraceFormat:
    """Guess a file's format: OTLP `resourceSpans` with OpenInference attributes, OTLP, or generic.

    An OTLP log export (`resourceLogs`: GenAI content emitted as events) is OTLP.
    """
    with path.open("rb") as handle:
        head = handle.read(1 << 20)
    if b'"resourceLogs"' in head or b'"resource_logs"' in head:
        return "otel"
    if b'"resourceSpans"' in head or b'"resource_spans"' in head:
        if b'"openinference.span.kind"' in head or b'"llm.input_messages.' in head:
            return "openinference"
        return "otel"
    return "jsonl"


def read_conversations(
    project: Project,
    files: Sequence[Path],
    trace_format: TraceFormat | None,
    mapping: Sequence[str],
) -> tuple[list[RawConversation], dict[str, int]]:
    """Read every file in its format; conversations in file order, and files per format.

    Raises:
        UsageError: ``--map`` given for a span format, or malformed.
        InputErrors: Every bad record of every file, and every non-empty file of a format from
            whose files no conversation was read.
    """
    fields = parse_mapping(mapping)
    shown = {p: project.relative(p) for p in files}
    by_format: dict[TraceFormat, list[Path]] = {}
    for path in files:
        by_format.setdefault(trace_format or detect_format(path), []).append(path)
    if mapping and set(by_format) - {"jsonl"}:
        raise UsageError(
            "applies to the generic JSONL/JSON format only (not to OTLP spans).", param="map"
        )
    problems: list[Problem] = []
    out: list[RawConversation] = []
    for fmt, paths in by_format.items():
        try:
            if fmt == "jsonl":
                found = read_generic(paths, fields, shown)
            else:
                spans = read_spans(paths, shown)
                reader = (
                    conversations_from_genai if fmt == "otel" else conversations_from_openinference
                )
                found = reader(spans)
                why = content_off(spans) if not found and fmt == "otel" else None
                if why is not None:
                    raise InputErrors([_content_off(paths, shown, why)])
        except InputErrors as exc:
            problems.extend(exc.problems)
        except InputError as exc:
            problems.append(exc.problem)
        else:
            problems.extend(_nothing_read(fmt, paths, shown) if not found else ())
            out.extend(found)
    InputErrors.raise_if_any(problems)
    return out, {k: len(v) for k, v in by_format.items()}


def _content_off(paths: Sequence[Path], shown: Mapping[Path, str], why: str) -> Problem:
    """The files hold GenAI model calls but no message content: say how to turn capture on."""
    return Problem(", ".join(shown[p] for p in paths), None, None, why)


def _nothing_read(
    fmt: TraceFormat, paths: Sequence[Path], shown: Mapping[Path, str]
) -> list[Problem]:
    """A problem for each non-empty file of a format group that yielded no conversation."""
    return [
        Problem(
            shown[p],
            None,
            None,
            f"no conversation read from this file as format '{fmt}'; check the trace format "
            "(or let it be detected)",
        )
        for p in paths
        if p.stat().st_size and p.read_bytes().strip()
    ]


def mine(
    project: Project,
    paths: Sequence[Path],
    dataset: str,
    options: MineOptions | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> MineReport:
    """Mine traces into draft cases of ``dataset`` and release a new version.

    Every conversation is scrubbed in memory (keyed pseudonyms, known values) before the
    release writes anything. Drafts already in the dataset (same session) are not added twice;
    rows past their ``retain_until`` leave in the same release.

    Raises:
        ConfigError: No usable pseudonym key, a key other than the one the dataset's rows were
            mined with, or bad privacy config.
        UsageError: Bad paths or ``--map``.
        InputErrors: Bad trace records (all reported; nothing is written).
    """
    opts = options or MineOptions()
    if not opts.slice.strip():
        raise UsageError("must not be empty.", param="slice")
    check_name(opts.slice, "slice")
    key = load_key(project, opts.environ if opts.environ is not None else os.environ)
    existing, labels = _existing(project, dataset)
    check_fingerprints(
        key,
        (c.provenance.scrub.key_fingerprint for c in existing if c.provenance.scrub),
        f"dataset '{dataset}'",
        "drafts mined under it would not match those rows (the same session drafted again, "
        "pseudonyms of one customer that never join)",
    )
    scrubber = scrubber_for(project, key)
    files = trace_files(paths)
    conversations, formats = read_conversations(project, files, opts.trace_format, opts.mapping)
    now = opts.now or datetime.now(UTC)
    draft_options = DraftOptions(opts.slice, opts.split, now, project.config.privacy.retention_days)
    signal_counts: Counter[str] = Counter()
    drafts: list[Case] = []
    problems: list[Problem] = []
    not_failing = no_user = 0
    for done, conv in enumerate(conversations, start=1):
        signals = failure_signals(conv)
        signal_counts.update(signals)
        if opts.failing_only and not signals:
            not_failing += 1
        else:
            try:
                case = draft_case(conv, scrubber, draft_options, signals)
            except InputErrors as exc:
                problems.extend(exc.problems)
            else:
                if case is None:
                    no_user += 1
                else:
                    drafts.append(case)
        if on_progress is not None:
            on_progress(done, len(conversations))
    InputErrors.raise_if_any(problems)
    with dataset_lock(project, dataset):
        # Read again under the lock: another command may have released meanwhile.
        existing, labels = _existing(project, dataset)
        check_fingerprints(
            key,
            (c.provenance.scrub.key_fingerprint for c in existing if c.provenance.scrub),
            f"dataset '{dataset}'",
            "drafts mined under it would not match those rows",
        )
        known_ids = {c.id for c in existing}
        new: list[Case] = []
        for case in drafts:
            if case.id not in known_ids:
                known_ids.add(case.id)
                new.append(case)
        today = now.date()
        expired = {
            c.id
            for c in existing
            if c.provenance.retain_until and c.provenance.retain_until < today
        }
        kept = [c for c in existing if c.id not in expired]
        version = None
        if new or expired:
            changes = []
            if new:
                changes.append(
                    f"mine: added {len(new)} draft case(s) mined from {len(conversations)} conversation(s)"
                )
            if expired:
                changes.append(f"expire: removed {len(expired)} row(s) past their retention date")
            version = release(
                project,
                dataset,
                [*kept, *new],
                opts.message or f"mine: {len(new)} new draft(s) for labelling",
                changes=changes,
                labels=[rec for rec in labels if rec.case_id not in expired] if expired else None,
                now=now,
            )
    return MineReport(
        dataset=dataset,
        files=[project.relative(p) for p in files],
        conversations=len(conversations),
        drafted=[c.id for c in new],
        already_present=len(drafts) - len(new),
        not_failing=not_failing,
        no_user_turn=no_user,
        signals={s: signal_counts[s] for s in SIGNALS if signal_counts[s]},
        expired=len(expired),
        version=version,
        key_fingerprint=key.fingerprint,
        formats=dict(formats),
    )


def _existing(project: Project, name: str) -> tuple[list[Case], list[LabelRecord]]:
    if not (project.dataset_dir(name) / CASES_FILE).exists():
        return [], []
    ds = load_dataset(project, name)
    return list(ds.cases), list(ds.labels)
