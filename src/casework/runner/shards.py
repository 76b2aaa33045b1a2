"""Runs sharded across worker processes on one machine, or across the workers of a Ray cluster.

The parent checks every input and writes the run header exactly as :func:`run_agent` does, then
deals the trials still to run round-robin into ``workers`` shards. Each shard runs in its own
process on its own small event loop (the trials of :func:`run_agent`, unchanged) and appends its
trials to ``runs/<run-id>.shards/part-NNN.jsonl`` (a copy of the header, then trial lines). A
parent without threads forks its workers, which inherit the dataset and everything prepared from
it; otherwise they start from a fork server (or by spawn) and load it again. The
parent follows those files for progress and the workbench. When every shard has finished, it
writes the run log once, atomically: the header, every trial line ordered by (trial, case in the
header's order), the end record; then it removes the shard files. A killed shard leaves its
finished trials in its file, so `resume` runs only the trials no file holds.
Entry point: :func:`run_sharded`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import multiprocessing.forkserver
import os
import pickle
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, NamedTuple

from casework.atomic import atomic_write_text, atomic_writer
from casework.dataset import Dataset, load_dataset
from casework.dataset._apart import fork_ok
from casework.errors import CaseworkError, InputError, UsageError
from casework.grading import Judge, load_judge
from casework.project import Project, load_project
from casework.runner.adapters import load_agent
from casework.runner.records import RunEnd, RunHeader, TrialRecord, read_log
from casework.runner.run import (
    LOG_BUFFER,
    RunObserver,
    RunRequest,
    RunSummary,
    _catalogues,
    _DbWriter,
    _heap_frozen,
    _hint_resume,
    _load_for_resume,
    _LoadHeld,
    _new_header,
    _prepare,
    _Prepared,
    _simulator,
    _Trials,
    _verdict_callback,
    run_agent,
)
from casework.runner.store import (
    RunStore,
    log_path,
    read_trial_line,
    trial_row,
    trial_row_from_line,
)
from casework.runner.toolserver import ToolServer
from casework.runner.user_sim import UserSimulator
from casework.schema import AgentTool, Case
from casework.workbench import open_workbench

__all__ = ["SHARD_POLL_S", "run_sharded", "shard_folder"]

#: Seconds between two looks at the shard files (progress and the workbench follow them).
SHARD_POLL_S = 0.1

#: Bytes of the merged log written between two syncs of it to disk while the trials run.
MERGE_SYNC_BYTES = 16 << 20


def _datasync(fd: int) -> None:
    """Write ``fd``'s data to disk (``fdatasync`` where there is one, else ``fsync``)."""
    sync = getattr(os, "fdatasync", os.fsync)
    sync(fd)


Key = tuple[str, int]


def shard_folder(log: Path) -> Path:
    """Where the shard files of the run logged at ``log`` live: ``runs/<run-id>.shards/``."""
    return log.with_name(f"{log.stem}.shards")


class _Outcome(NamedTuple):
    """What the end record counts of one trial."""

    passed: bool | None
    error: bool
    cost_usd: float
    agent_version: str | None

    @classmethod
    def of(cls, rec: TrialRecord) -> _Outcome:
        """The outcome of a validated record."""
        return cls(
            rec.verdict.passed,
            rec.trajectory.error is not None,
            rec.trajectory.usage.cost_usd,
            rec.trajectory.agent_version,
        )


@dataclass(frozen=True)
class _Shard:
    """What one worker runs: picklable, so it crosses to a process or a Ray worker."""

    root: str
    run_id: str
    path: str
    items: tuple[Key, ...]
    concurrency: int
    use_judge: bool


@dataclass(frozen=True)
class _Ready:
    """What a shard's trials read besides their keys: loaded and checked once, in the parent.

    A worker forked from the parent inherits it in memory; any other worker loads it again.
    """

    header: RunHeader
    cases: dict[str, Case]
    prepared: _Prepared
    catalogues: dict[str, list[AgentTool]]
    simulator: UserSimulator | None
    judge: Judge | None


def _inputs(project: Project, dataset: Dataset, header: RunHeader, judge: Judge | None) -> _Ready:
    """What the trials of ``header`` read, built from ``dataset`` and checked.

    Environments, shared states and golden replays, catalogues and the simulated user fail here.
    """
    by_id = {c.id: c for c in dataset.cases}
    prepared = _prepare(project, dataset, [by_id[cid] for cid in header.case_ids])
    return _Ready(
        header=header,
        cases=by_id,
        prepared=prepared,
        catalogues=_catalogues(project, dataset, header.case_ids, prepared),
        simulator=_simulator(project, dataset, header, None),
        judge=judge,
    )


def _ready(project: Project, shard: _Shard) -> _Ready:
    """Load what a shard's trials read, as the parent did: from the run log and the dataset."""
    loaded, dataset = _load_for_resume(project, RunRequest(resume=shard.run_id))
    judge = load_judge(project) if shard.use_judge else None
    judge = judge.for_cases(dataset.cases) if judge is not None else None
    return _inputs(project, dataset, loaded.header, judge)


async def _shard_trials(project: Project, shard: _Shard, ready: _Ready | None = None) -> None:
    """One shard's trials, recorded in its own file: the trials of `run_agent`, unchanged."""
    if ready is None:
        ready = _ready(project, shard)
    header = ready.header
    agent = load_agent(
        header.agent_spec,
        root=project.root,
        timeout_s=header.timeout_s,
        concurrency=shard.concurrency,
        pass_env=project.config.agent.pass_env,
    )
    server = ToolServer().start() if agent.needs_tool_server else None
    try:
        with Path(shard.path).open("a", encoding="utf-8", buffering=LOG_BUFFER) as log:
            trials = _Trials(
                header=header,
                cases=ready.cases,
                catalogues=ready.catalogues,
                agent=agent,
                judge=ready.judge,
                judge_private=project.config.models.judge.keeps_data_local,
                server=server,
                log=log,
                db=None,
                observer=None,
                clock=lambda: datetime.now(UTC),
                simulator=ready.simulator,
                prepared=ready.prepared,
            )
            with _heap_frozen():
                await trials.run_all(shard.items, shard.concurrency)
            log.flush()
            with contextlib.suppress(OSError):
                os.fsync(log.fileno())
    finally:
        if server is not None:
            server.close()
        await agent.aclose()


def run_shard(shard: _Shard) -> None:
    """Run one shard in this process (the body of a worker process or a Ray task)."""
    asyncio.run(_shard_trials(load_project(Path(shard.root)), shard))


def _report(run: Callable[[], None], conn: multiprocessing.connection.Connection) -> None:
    """Run a worker's shard, then send back None or the error (pickled)."""
    error: BaseException | None = None
    try:
        run()
    except BaseException as exc:  # reported to the parent, which raises it
        error = exc
    try:
        payload = pickle.dumps(error)
    except Exception:
        payload = pickle.dumps(CaseworkError(f"{type(error).__name__}: {error}"))
    conn.send_bytes(payload)
    conn.close()


def _process_main(shard: _Shard, conn: multiprocessing.connection.Connection) -> None:
    """A worker process started afresh: load the project and the shard's inputs, run the shard."""
    _report(lambda: run_shard(shard), conn)


def _forked_main(
    project: Project, ready: _Ready, shard: _Shard, conn: multiprocessing.connection.Connection
) -> None:
    """A worker forked from the parent: run the shard on the inputs the parent holds.

    No database connection of the parent's is used here: its run store's is inherited but never
    touched (a worker writes only its shard file), and the response caches of the judge and the
    simulated user, unopened in the parent, open their own on first use. The fork context ends
    the process with ``os._exit`` once this returns, so none of the parent's exit handlers or
    finalizers run here (they would close the parent's connections).
    """
    _report(lambda: asyncio.run(_shard_trials(project, shard, ready)), conn)


class _Follower:
    """Reads the trial lines the shards append, as they appear (complete lines only)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.offsets = dict.fromkeys(paths, 0)
        self.tails = dict.fromkeys(paths, b"")

    def new_lines(self) -> Iterator[tuple[Path, bytes]]:
        """Trial lines completed since the last call (each file's first line, its header, skipped)."""
        for path, offset in self.offsets.items():
            with path.open("rb") as handle:
                handle.seek(offset)
                data = handle.read()
            self.offsets[path] = offset + len(data)
            data = self.tails[path] + data
            cut = data.rfind(b"\n") + 1
            self.tails[path] = data[cut:]
            lines = data[:cut].split(b"\n")[:-1]
            if offset == 0 and lines:
                lines = lines[1:]
            for raw in lines:
                yield path, raw


def _recorded(path: Path, shown: str) -> dict[Key, tuple[TrialRecord, str]]:
    """The trials a log (or shard file) holds, with their lines; a torn last line is dropped."""
    loaded = read_log(path, shown)
    data = path.read_bytes()[: loaded.valid_bytes]
    lines: dict[Key, str] = {}
    for raw in data.split(b"\n")[1:]:
        if raw.strip():
            text = raw.decode("utf-8")
            rec = TrialRecord.model_validate_json(text)
            lines[(rec.case_id, rec.trial)] = text
    return {(t.case_id, t.trial): (t, lines[(t.case_id, t.trial)]) for t in loaded.trials}


def _deal(pending: Sequence[Key], workers: int) -> list[tuple[Key, ...]]:
    """Pending trials dealt round-robin, so every shard gets a similar mix of cases."""
    return [tuple(pending[i::workers]) for i in range(workers) if pending[i::workers]]


def _next_parts(folder: Path, count: int) -> list[Path]:
    """Fresh shard file names (``part-NNN.jsonl``): a resumed run never appends to an old part."""
    used = [int(p.stem.split("-")[-1]) for p in folder.glob("part-*.jsonl")]
    first = max(used, default=-1) + 1
    return [folder / f"part-{first + i:03d}.jsonl" for i in range(count)]


def _ensure_ray() -> Any:
    """Import Ray and join ``RAY_ADDRESS`` (or start a local Ray) unless already connected.

    Raises:
        UsageError: Ray is not installed (``pip install "casework[ray]"``).
    """
    try:
        import ray
    except ImportError as exc:
        raise UsageError(
            'Ray is not installed. Install the extra: pip install "casework[ray]".', param="ray"
        ) from exc
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        ray.init(
            address=address or None,
            include_dashboard=False if not address else None,
            ignore_reinit_error=True,
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    return ray


def _fork_safe() -> bool:
    """Whether workers may start as plain forks of this process, inheriting what it loaded."""
    return fork_ok()


def _context() -> multiprocessing.context.SpawnContext | multiprocessing.context.ForkServerContext:
    """How workers start when they cannot fork: from a fork server where there is one, else spawn.

    A clean single-threaded server that has imported the runner once forks each worker, so N
    workers do not each pay the imports; never a plain fork from a parent that holds threads.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    # The parent's main module too (for the CLI, its entry script): every worker would otherwise
    # import it again after the fork, as Python's spawn and forkserver workers do.
    ctx.set_forkserver_preload(["__main__", __name__])
    return ctx


def _warm_forkserver() -> None:
    """Start the fork server now: it imports the runner while the parent loads the dataset."""
    if isinstance(_context(), multiprocessing.context.ForkServerContext):
        multiprocessing.forkserver.ensure_running()


class _Workers:
    """The running shards: local processes or Ray tasks, with a uniform wait and outcome."""

    def __init__(
        self, shards: Sequence[_Shard], use_ray: bool, forked: tuple[Project, _Ready] | None
    ) -> None:
        """Start the shards: as Ray tasks, as forks given ``forked`` (inherited), else afresh."""
        self.errors: list[BaseException] = []
        self.ray: Any = None
        self.refs: list[Any] = []
        self.procs: list[tuple[Any, multiprocessing.connection.Connection]] = []
        if use_ray:
            self.ray = _ensure_ray()
            task = self.ray.remote(num_cpus=1, max_retries=0)(run_shard)
            self.refs = [task.remote(s) for s in shards]
            return
        ctx: (
            multiprocessing.context.ForkContext
            | multiprocessing.context.ForkServerContext
            | multiprocessing.context.SpawnContext
        ) = multiprocessing.get_context("fork") if forked is not None else _context()
        for i, shard in enumerate(shards):
            parent, child = ctx.Pipe(duplex=False)
            target: Callable[..., None] = _process_main
            args: tuple[object, ...] = (shard, child)
            if forked is not None:  # a fork pickles nothing: the worker inherits these
                target, args = _forked_main, (*forked, shard, child)
            proc = ctx.Process(target=target, args=args, name=f"casework-shard-{i}")
            proc.start()
            child.close()
            self.procs.append((proc, parent))

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; True once every shard has ended."""
        if self.ray is not None:
            done, self.refs = self.ray.wait(self.refs, num_returns=len(self.refs), timeout=timeout)
            for ref in done:
                self._ray_outcome(ref)
            return not self.refs
        alive = [p for p, _ in self.procs if p.exitcode is None]
        if alive:
            multiprocessing.connection.wait([p.sentinel for p in alive], timeout)
        return all(p.exitcode is not None for p, _ in self.procs)

    def _ray_outcome(self, ref: Any) -> None:
        try:
            self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as exc:
            cause = exc.cause if isinstance(exc.cause, BaseException) else exc
            self.errors.append(cause)
        except self.ray.exceptions.RayError as exc:  # a worker or node died
            self.errors.append(CaseworkError(f"a Ray worker running a shard stopped: {exc}"))

    def outcome(self) -> None:
        """Collect every shard's outcome (local processes); errors are kept in ``errors``."""
        for i, (proc, conn) in enumerate(self.procs):
            proc.join()
            try:
                payload = conn.recv_bytes() if conn.poll() else None
            except EOFError:  # the worker died before it could answer
                payload = None
            conn.close()
            error = pickle.loads(payload) if payload else None
            if error is not None:
                self.errors.append(error)
            elif proc.exitcode != 0:
                how = f"signal {-proc.exitcode}" if proc.exitcode < 0 else f"exit {proc.exitcode}"
                self.errors.append(
                    CaseworkError(
                        f"shard {i} (worker process {proc.pid}) stopped by {how}; "
                        "its finished trials are kept"
                    )
                )

    def stop(self) -> None:
        """End every shard still running (an interrupt in the parent)."""
        for proc, _ in self.procs:
            if proc.exitcode is None:
                proc.terminate()
            proc.join()
        if self.ray is not None:
            for ref in self.refs:
                self.ray.cancel(ref, force=True)


def run_sharded(
    project: Project,
    request: RunRequest,
    *,
    workers: int = 1,
    use_ray: bool = False,
    observer: RunObserver | None = None,
    clock: Callable[[], datetime] | None = None,
) -> RunSummary:
    """Run (or resume) a run with its trials sharded across ``workers`` processes or Ray tasks.

    With one local worker and no shard files from an earlier session, this is :func:`run_agent`.
    Otherwise the trials still to run are dealt into ``workers`` shards (``request.concurrency``
    trials in flight in all, split between them). The run log, the workbench rows and the end
    record are those of a run in one process; the log's trial lines are ordered by (trial, case
    in the header's order). The judge and the simulated user's client are the configured ones
    (each worker builds its own).

    With ``use_ray``, each shard is a Ray task on the cluster named by ``RAY_ADDRESS`` (a local
    Ray otherwise); every node must see the project folder at the same path, as workers read the
    dataset and write their shard files there.

    Raises:
        UsageError: Bad options, or anything :func:`run_agent` refuses.
        CaseworkError: A shard failed or its worker was killed; the run stays resumable.
    """
    clock = clock or (lambda: datetime.now(UTC))
    if workers < 1:
        raise UsageError(f"must be at least 1. Got {workers}.", param="workers")
    if request.concurrency < 1:
        raise UsageError(f"must be at least 1. Got {request.concurrency}.", param="concurrency")
    sharded_before = (
        request.resume is not None and shard_folder(log_path(project, request.resume)).is_dir()
    )
    if workers == 1 and not use_ray and not sharded_before:
        return run_agent(project, request, observer=observer, clock=clock)
    return _Sharded(project, request, workers, use_ray, observer, clock).run()


class _Sharded:
    """One session of a sharded run, in the parent."""

    def __init__(
        self,
        project: Project,
        request: RunRequest,
        workers: int,
        use_ray: bool,
        observer: RunObserver | None,
        clock: Callable[[], datetime],
    ) -> None:
        self.project = project
        self.request = request
        self.workers = workers
        self.use_ray = use_ray
        self.observer = observer
        self.clock = clock
        #: Trial lines not yet in the merged log (which takes them in the log's order).
        self.lines: dict[Key, bytes] = {}
        self.outcomes: dict[Key, _Outcome] = {}
        #: The run log's keys in its order, and how many of them the merged log has taken.
        self.order: list[Key] = []
        self.taken = 0
        #: The outcomes of the trials the merged log holds, in its order (for the end record).
        self.written: list[_Outcome] = []
        self.merged: IO[bytes] | None = None
        self.unsynced = 0
        self.store: RunStore | None = None
        self.db: _DbWriter | None = None
        #: What the trials read: held only until this session's workers have started.
        self.inputs: _Ready | None = None
        #: The observer's verdict-only callback: lines then go unvalidated, as without one.
        self.passed = _verdict_callback(observer) if observer is not None else None

    def _start(self) -> tuple[_Ready, Path, dict[Key, tuple[TrialRecord, str]]]:
        """What the trials read, the header among it (written for a new run), and past trials."""
        project, request = self.project, self.request
        judge = load_judge(project) if request.use_judge else None
        if request.resume:
            loaded, dataset = _load_for_resume(project, request)
            header = loaded.header
            judge = judge.for_cases(dataset.cases) if judge is not None else None
        else:
            if not request.dataset:
                raise UsageError("run: name a dataset (DATASET or DATASET@VERSION).")
            dataset = load_dataset(project, request.dataset)
            judge = judge.for_cases(dataset.cases) if judge is not None else None
            header = _new_header(project, request, dataset, judge, self.clock())
        # Everything the trials read fails here, before anything is written: a worker must not
        # be first.
        ready = _inputs(project, dataset, header, judge)
        path = log_path(project, header.run_id)
        if not request.resume:
            header = header.model_copy(
                update={
                    "scoring": dict(ready.prepared.scoring),
                    "golden_failures": ready.prepared.golden_failures,
                }
            )
            if path.exists():
                raise UsageError(f"run {header.run_id}: {project.relative(path)} already exists.")
            atomic_write_text(path, header.model_dump_json() + "\n")
        previous = _recorded(path, project.relative(path))
        folder = shard_folder(path)
        if folder.is_dir():
            for part in sorted(folder.glob("part-*.jsonl")):
                previous.update(_recorded(part, project.relative(part)))
        return replace(ready, header=header), path, previous

    def run(self) -> RunSummary:
        """Run the session's shards and merge their trials into the run log."""
        with _LoadHeld() as held:
            return self._run(held)

    def _run(self, held: _LoadHeld) -> RunSummary:
        project, request = self.project, self.request
        if not self.use_ray and not _fork_safe():
            _warm_forkserver()
        ready, path, previous = self._start()
        header = ready.header
        self.inputs = ready
        del ready
        for key, (rec, line) in previous.items():
            self.outcomes[key] = _Outcome.of(rec)
            self.lines[key] = line.encode("utf-8")
        self.order = [(cid, t) for t in range(header.k) for cid in header.case_ids]
        pending = [key for key in self.order if key not in previous]
        held.loaded()
        store = self.store = RunStore(open_workbench(project)) if request.store else None
        if store is not None:
            store.save_header(header)
            store.save_trials([rec for rec, _ in previous.values()])
        started = time.perf_counter()
        # Frozen before the workers fork, so their collector never writes to (and copies) the
        # pages of what they inherit; and while this process follows them and merges, so its
        # collections do not walk the dataset and the trials it holds again.
        # The merged log is a temp file until the end: it replaces the run log only once every
        # trial is in it (a failed session leaves the log and the shard files as they were).
        with _heap_frozen(), contextlib.ExitStack() as merging:
            try:
                self._run_shards(header, path, pending, len(previous), merging)
            except CaseworkError as exc:
                _hint_resume(exc, header.run_id)
                raise
            finally:
                if self.db is not None:
                    self.db.close()
                if store is not None:
                    store.workbench.close()
            if self.db is not None and self.db.error is not None:
                raise self.db.error
            end = self._merge(header, path, time.perf_counter() - started, merging)
        # The log now holds every trial: the shard files are spent.
        shutil.rmtree(shard_folder(path), ignore_errors=True)
        if store is not None:
            store.workbench = open_workbench(project)
            try:
                if end.agent_version and not header.agent_version:
                    header = header.model_copy(update={"agent_version": end.agent_version})
                    store.update_header(header)
                store.finish(end)
            finally:
                store.workbench.close()
        return RunSummary(header, end, path, resumed=len(previous), ran=len(pending))

    def _begin(self, header: RunHeader, resumed: int) -> None:
        """Once the workers run: the workbench writer's thread, then the observer's first word.

        Not before: a worker forked from a parent with threads could deadlock.
        """
        if self.store is not None:
            self.db = _DbWriter(self.store)
        if self.observer is not None:
            self.observer.started(len(header.case_ids) * header.k, resumed)

    def _run_shards(
        self,
        header: RunHeader,
        path: Path,
        pending: Sequence[Key],
        resumed: int,
        merging: contextlib.ExitStack,
    ) -> None:
        dealt = _deal(pending, self.workers)
        if not dealt:
            self._begin(header, resumed)
            return
        folder = shard_folder(path)
        folder.mkdir(exist_ok=True)
        parts = _next_parts(folder, len(dealt))
        each = max(1, -(-self.request.concurrency // len(dealt)))
        header_line = header.model_dump_json() + "\n"
        shards = []
        for part, items in zip(parts, dealt, strict=True):
            atomic_write_text(part, header_line)
            shards.append(
                _Shard(
                    str(self.project.root),
                    header.run_id,
                    str(part),
                    items,
                    each,
                    self.request.use_judge,
                )
            )
        follower = _Follower(parts)
        # Forked workers start at once on what this process loaded; with threads alive, a fork
        # could deadlock, so workers start afresh (a fork server or spawn) and load it again.
        ready, self.inputs = self.inputs, None
        assert ready is not None, "a session's workers start once"
        forked = (self.project, ready) if not self.use_ray and _fork_safe() else None
        running = _Workers(shards, self.use_ray, forked)
        # From here this process needs only the header: the cases and what was prepared from
        # them are freed while the workers run, not after the last trial (0.17 s of CPU at
        # 25,000 cases). A forked worker keeps its own copy; `start` dropped each process's args.
        del ready, forked
        # Opened after the fork, so no worker inherits the temp file.
        self._open_merged(path, merging)
        try:
            self._begin(header, resumed)
            while not running.wait(SHARD_POLL_S):
                self._follow(follower)
        except BaseException:
            running.stop()
            raise
        finally:
            self._follow(follower)
        running.outcome()
        if running.errors:
            raise running.errors[0]

    def _follow(self, follower: _Follower) -> None:
        db = self.db
        for part, raw in follower.new_lines():
            text = raw.decode("utf-8")
            try:
                key, outcome, row, rec = self._read(raw, text, db is not None)
            except (ValueError, KeyError, TypeError) as exc:
                shown = self.project.relative(part)
                raise InputError(shown, None, None, f"bad shard line: {exc}") from exc
            self.outcomes[key] = outcome
            self.lines[key] = raw
            if db is not None and row is not None:
                db.put(row)
            if self.passed is not None:
                self.passed(outcome.passed)
            elif self.observer is not None and rec is not None:
                self.observer.trial_done(rec)
        self._take_ready()

    def _open_merged(self, path: Path, merging: contextlib.ExitStack) -> None:
        """Start the merged log (a temp file that ``merging`` renames over ``path``): its header."""
        with path.open("rb") as log:
            first = log.readline().rstrip(b"\n") + b"\n"
        self.merged = merging.enter_context(atomic_writer(path))
        self.merged.write(first)

    def _take_ready(self) -> None:
        """Into the merged log: the lines next in its order that have arrived.

        The shards deal the trials in that order and end them nearly in it, so few lines wait
        and, when the last trial ends, only the last few remain to write.
        """
        order, lines, at = self.order, self.lines, self.taken
        if self.merged is None:
            return
        ready: list[bytes] = []
        while at < len(order) and order[at] in lines:
            ready.append(lines.pop(order[at]))
            self.written.append(self.outcomes[order[at]])
            at += 1
        self.taken = at
        if ready:
            ready.append(b"")
            block = b"\n".join(ready)
            self.merged.write(block)
            self.unsynced += len(block)
            if self.unsynced >= MERGE_SYNC_BYTES:
                # On disk as it grows, while this process mostly waits: the rename at the end
                # then waits for the last few megabytes, not for the whole log (130 MB at
                # 100,000 trials).
                self.merged.flush()
                _datasync(self.merged.fileno())
                self.unsynced = 0

    def _read(
        self, raw: bytes, text: str, want_row: bool
    ) -> tuple[Key, _Outcome, dict[str, object] | None, TrialRecord | None]:
        """One shard line: its key, outcome, workbench row and (for an observer) its record.

        A worker wrote the line from a validated record, so unless a progress observer wants
        each record only the fields the row and the end record need are read: validating it
        again cost the parent more CPU than the worker spent running the trial. Resume
        validates shard files whole.
        """
        if self.observer is not None and self.passed is None:
            rec = TrialRecord.model_validate_json(raw)
            row = trial_row(rec, text) if want_row else None
            return (rec.case_id, rec.trial), _Outcome.of(rec), row, rec
        fields = read_trial_line(raw)
        trajectory = fields.trajectory
        outcome = _Outcome(
            fields.verdict.passed,
            trajectory.error is not None,
            trajectory.usage.cost_usd,
            trajectory.agent_version,
        )
        row = trial_row_from_line(fields, text) if want_row else None
        return (fields.case_id, fields.trial), outcome, row, None

    def _merge(
        self, header: RunHeader, path: Path, wall_s: float, merging: contextlib.ExitStack
    ) -> RunEnd:
        """The merged log completed: the trials still waiting, in order, then the end record.

        ``merging`` renames it over the run log when it closes.
        """
        if self.merged is None:  # no worker ran: every trial was recorded before
            self._open_merged(path, merging)
        self._take_ready()
        assert self.merged is not None
        rest = []
        for key in self.order[self.taken :]:
            if key in self.lines:
                rest.append(self.lines.pop(key))
                self.written.append(self.outcomes[key])
        if self.lines:  # a shard logged a trial the run does not hold
            case_id, trial = min(self.lines)
            raise CaseworkError(
                f"run {header.run_id}: a shard file holds trial {trial} of case '{case_id}', "
                "which the run's header does not list"
            )
        if rest:
            rest.append(b"")
            self.merged.write(b"\n".join(rest))
        # In the log's order, so sums and the first agent version are the same in every session.
        records = self.written
        verdicts = [r.passed for r in records]
        agent_version = header.agent_version or next(
            (r.agent_version for r in records if r.agent_version), None
        )
        end = RunEnd(
            run_id=header.run_id,
            finished_at=self.clock(),
            trials=len(records),
            passed=verdicts.count(True),
            failed=verdicts.count(False),
            undetermined=verdicts.count(None),
            errors=sum(r.error for r in records),
            cost_usd=round(sum(r.cost_usd for r in records), 6),
            wall_s=round(wall_s, 3),
            agent_version=agent_version,
        )
        self.merged.write(end.model_dump_json().encode("utf-8") + b"\n")
        return end
