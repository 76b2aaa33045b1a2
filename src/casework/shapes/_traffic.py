"""Failing traffic: traces read as `casework mine` reads them, failing ones drafted and scrubbed."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from casework.dataset.parallel import parallel_workers
from casework.errors import InputErrors, Problem, UsageError
from casework.mining import draft_case, failure_signals, read_conversations
from casework.mining.drafts import DraftOptions
from casework.mining.mine import TraceFormat, trace_files
from casework.privacy import Scrubber, load_key, scrubber_for
from casework.privacy.keys import check_fingerprints
from casework.project import Project
from casework.shapes._text import case_text


@dataclass
class Failing:
    """The failing conversations of some traces, scrubbed (nothing raw is kept).

    Attributes:
        files: Trace files read (as the user would name them).
        conversations: Conversations read.
        after_as_of: Conversations left out for starting after the as-of date.
        case_ids: Draft case id of each failing conversation.
        sessions: Session pseudonym of each.
        texts: Scrubbed clustering text of each (see :func:`case_text`).
        openings: The customer's first message of each, scrubbed.
        situations: Scrubbed draft situation of each, as JSON text.
        signals: Failure signals of each.
        key_fingerprint: Fingerprint of the pseudonym key used.
    """

    files: list[str] = field(default_factory=list)
    conversations: int = 0
    after_as_of: int = 0
    case_ids: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    openings: list[str] = field(default_factory=list)
    situations: list[str] = field(default_factory=list)
    signals: list[list[str]] = field(default_factory=list)
    key_fingerprint: str = ""

    def merge(self, other: Failing) -> None:
        """Append ``other``'s conversations (files and fingerprint stay this one's)."""
        self.conversations += other.conversations
        self.after_as_of += other.after_as_of
        for name in ("case_ids", "sessions", "texts", "openings", "situations", "signals"):
            getattr(self, name).extend(getattr(other, name))


@dataclass(frozen=True)
class _Job:
    """What every file is read with (held in a global so forked workers inherit it)."""

    project: Project
    scrubber: Scrubber
    options: DraftOptions
    trace_format: TraceFormat | None
    as_of: date | None


_JOB: _Job | None = None
#: Files read in parallel only from this many on (forking costs more than one file saves).
PARALLEL_MIN_FILES = 2


def _read_file(path: Path) -> tuple[Failing, list[Problem]]:
    """One file's failing conversations, drafted and scrubbed (raw conversations stay here)."""
    job = _JOB
    assert job is not None
    out = Failing()
    try:
        conversations, _ = read_conversations(job.project, [path], job.trace_format, ())
    except InputErrors as exc:
        return out, list(exc.problems)
    problems: list[Problem] = []
    for conv in conversations:
        out.conversations += 1
        if job.as_of is not None and conv.started_at and conv.started_at.date() > job.as_of:
            out.after_as_of += 1
            continue
        signals = failure_signals(conv)
        if not signals:
            continue
        try:
            case = draft_case(conv, job.scrubber, job.options, signals)
        except InputErrors as exc:
            problems.extend(exc.problems)
            continue
        if case is None:
            continue
        out.case_ids.append(case.id)
        out.sessions.append(case.provenance.source_session or "")
        out.texts.append(case_text(case))
        out.openings.append(next((t.content for t in case.situation.turns if t.role == "user"), ""))
        out.situations.append(case.situation.model_dump_json())
        out.signals.append(signals)
    return out, problems


def _map(files: list[Path]) -> Iterator[tuple[Failing, list[Problem]]]:
    """:func:`_read_file` of each file, in file order; on forked workers when it pays."""
    workers = min(parallel_workers(), len(files))
    if workers < 2 or len(files) < PARALLEL_MIN_FILES:
        yield from map(_read_file, files)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        yield from pool.map(_read_file, files)


def read_failing(
    project: Project,
    paths: Sequence[Path],
    *,
    trace_format: TraceFormat | None = None,
    as_of: date | None = None,
    environ: Mapping[str, str] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    param: str = "traces",
    scrubbed_as: tuple[str, str] | None = None,
) -> Failing:
    """Read the traces and scrub every failing conversation in memory, exactly as `mine` does.

    Files are read one at a time with :func:`casework.mining.read_conversations` (so a session
    split across files counts once per file), on forked workers when there are several (Linux);
    each failing conversation becomes its draft case with :func:`casework.mining.draft_case` and
    the project's scrubber, and only the scrubbed draft leaves the worker.

    Args:
        project: The project (its key, scrubber and id patterns).
        paths: Trace files or folders.
        trace_format: Format of every file, or ``None`` to detect it per file.
        as_of: Leave out conversations that started after this UTC date.
        environ: Environment the key is read from (default: the process's).
        on_progress: Called with (files done, files) after each file.
        param: Parameter named when no conversation is failing.
        scrubbed_as: ``(where, fingerprint)``: refuse a key other than the one ``where`` (a shape
            set, as the user names it) was scrubbed with.

    Raises:
        ConfigError: No usable pseudonym key, or not the key of ``scrubbed_as``.
        UsageError: Bad paths, or no conversation shows a failure signal.
        InputErrors: Bad trace records, of every file (nothing is written).
    """
    key = load_key(project, environ if environ is not None else os.environ)
    if scrubbed_as is not None:
        check_fingerprints(
            key,
            [scrubbed_as[1]],
            scrubbed_as[0],
            "its members and these conversations would carry unrelated pseudonyms",
        )
    files = trace_files(paths)
    now = datetime.now(UTC)
    out = Failing(files=[project.relative(p) for p in files], key_fingerprint=key.fingerprint)
    global _JOB
    _JOB = _Job(
        project,
        scrubber_for(project, key),
        DraftOptions("unsorted", "dev", now, project.config.privacy.retention_days),
        trace_format,
        as_of,
    )
    problems: list[Problem] = []
    try:
        for done, (part, found) in enumerate(_map(files), start=1):
            out.merge(part)
            problems.extend(found)
            if on_progress is not None:
                on_progress(done, len(files))
    finally:
        _JOB = None
    InputErrors.raise_if_any(problems)
    if not out.texts:
        raise UsageError(
            f"none of the {out.conversations} conversation(s) read shows a failure signal "
            "(thumbs down, escalation, retry, abandonment, tool error): nothing to cluster.",
            param=param,
        )
    return out
