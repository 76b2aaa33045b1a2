"""Failing traffic: traces read as `casework mine` reads them, failing ones drafted and scrubbed."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from casework.dataset.parallel import parallel_workers
from casework.errors import InputErrors, Problem, UsageError
from casework.mining import draft_case, failure_signals, read_conversations
from casework.mining.drafts import DraftOptions
from casework.mining.mine import TraceFormat, trace_files
from casework.privacy import Scrubber, load_key, scrubber_for
from casework.privacy.keys import PseudonymKey, check_fingerprints
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
    key: PseudonymKey
    scrubber: Scrubber
    options: DraftOptions
    trace_format: TraceFormat | None
    as_of: date | None

    def __getstate__(self) -> dict[str, Any]:
        # A scrubber holds compiled pattern sets that cannot be pickled: a Ray worker gets the
        # key and builds the same scrubber from the project's config.
        state = dict(self.__dict__)
        del state["scrubber"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, scrubber=scrubber_for(state["project"], state["key"]))


_JOB: _Job | None = None
#: Files read in parallel only from this many on (forking costs more than one file saves).
PARALLEL_MIN_FILES = 2


def _read_file(path: Path) -> tuple[Failing, list[Problem]]:
    """One file's failing conversations, read with the job forked workers inherit."""
    job = _JOB
    assert job is not None
    return read_part(job, path)


def read_part(job: _Job, path: Path) -> tuple[Failing, list[Problem]]:
    """One file's failing conversations, drafted and scrubbed (raw conversations stay here)."""
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


@dataclass(frozen=True)
class Traffic:
    """Trace files ready to be read, with what every file is read with (the scrubber's key).

    Attributes:
        files: The trace files, in reading order.
        shown: Each file as the user would name it.
        key_fingerprint: Fingerprint of the pseudonym key used.
        job: What every file is read with (picklable: Ray workers receive it).
    """

    files: list[Path]
    shown: list[str]
    key_fingerprint: str
    job: _Job

    def parts(self) -> Iterator[tuple[Failing, list[Problem]]]:
        """Each file's failing conversations and problems, in file order (forked workers)."""
        global _JOB
        _JOB = self.job
        try:
            yield from _map(self.files)
        finally:
            _JOB = None


def open_traffic(
    project: Project,
    paths: Sequence[Path],
    *,
    trace_format: TraceFormat | None = None,
    as_of: date | None = None,
    environ: Mapping[str, str] | None = None,
    scrubbed_as: tuple[str, str] | None = None,
) -> Traffic:
    """The trace files at ``paths`` and the scrubber they are read with (nothing read yet).

    Raises:
        ConfigError: No usable pseudonym key, or not the key of ``scrubbed_as``.
        UsageError: Bad paths.
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
    job = _Job(
        project,
        key,
        scrubber_for(project, key),
        DraftOptions("unsorted", "dev", now, project.config.privacy.retention_days),
        trace_format,
        as_of,
    )
    return Traffic(files, [project.relative(p) for p in files], key.fingerprint, job)


def no_failing(conversations: int, param: str) -> UsageError:
    """The error of traces where no conversation shows a failure signal."""
    return UsageError(
        f"none of the {conversations} conversation(s) read shows a failure signal "
        "(thumbs down, escalation, retry, abandonment, tool error): nothing to cluster.",
        param=param,
    )


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
    traffic = open_traffic(
        project,
        paths,
        trace_format=trace_format,
        as_of=as_of,
        environ=environ,
        scrubbed_as=scrubbed_as,
    )
    out = Failing(files=traffic.shown, key_fingerprint=traffic.key_fingerprint)
    problems: list[Problem] = []
    for done, (part, found) in enumerate(traffic.parts(), start=1):
        out.merge(part)
        problems.extend(found)
        if on_progress is not None:
            on_progress(done, len(traffic.files))
    InputErrors.raise_if_any(problems)
    if not out.texts:
        raise no_failing(out.conversations, param)
    return out
