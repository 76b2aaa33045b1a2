"""Running an agent on a pinned dataset version: k independent trials per case, graded as they end.

Each trial gets a fresh copy of the case's state and its own fixture tool session, so trials are
independent; verdicts stream into the run log (`runs/<run-id>.jsonl`) and the workbench. An
interrupted run resumes from its log. Entry points: :func:`run_agent` and :class:`RunRequest`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import os
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol, cast

from casework import __version__
from casework.atomic import atomic_write_text
from casework.dataset import Dataset, declared_tools, load_dataset, select_cases
from casework.dataset.catalogue import CatalogueError, CatalogueFiles, case_catalogue
from casework.dataset.state import apply_shared, initial_state, state_diff
from casework.dataset.tools import ToolDecl
from casework.dataset.versions import CASES_FILE
from casework.errors import CaseworkError, ConfigError, Hint, InputError, UsageError
from casework.grading import Judge, Verdict, grade, load_judge
from casework.grading.judge import CHECK_KINDS
from casework.grading.programmatic import check_environment
from casework.grading.scoring import Scoring, imported_from_tau2
from casework.grading.tau2_state import tau2_domain_of
from casework.llm import LLMClient, client_for
from casework.project import Project
from casework.runner.adapters import Agent, load_agent
from casework.runner.environment import (
    EnvironmentFactory,
    FixtureEnvironment,
    environment_catalogue,
    load_environment,
    replay_golden,
)
from casework.runner.fixtures import FixtureBook, ToolError, ToolSession, catalogue_from, clone
from casework.runner.records import (
    CheckCertification,
    GoldenFailure,
    JudgeInfo,
    LoadedRun,
    RunEnd,
    RunHeader,
    SliceCalibration,
    TrialRecord,
    read_log,
)
from casework.runner.store import RunStore, log_path, trial_row
from casework.runner.tau2_environment import (
    AirlineEnvironment,
    RetailEnvironment,
    Tau2DomainEnvironment,
    TelecomEnvironment,
    tau2_golden_state,
    tau2_initialised,
)
from casework.runner.toolserver import ToolServer
from casework.runner.user_sim import UserSimRecord, UserSimulator, converse, user_seed
from casework.schema import AgentInput, AgentTool, Case, Trajectory, Turn
from casework.workbench import open_workbench

__all__ = ["RunObserver", "RunRequest", "RunSummary", "new_run_id", "run_agent", "trial_seed"]


@dataclass(frozen=True)
class RunRequest:
    """What `casework run` asks for.

    Attributes:
        dataset: ``name`` or ``name@version``.
        agent: Adapter spec (default: ``[agent] spec`` in casework.toml).
        k: Trials per case.
        concurrency: Trials in flight at once.
        slices: Only these slices (empty: all).
        splits: Only these splits (empty: all).
        seed: Run seed (trial seeds derive from it).
        agent_version: Version label of the agent (default: what its trajectories report).
        timeout_s: Seconds one trial may take.
        resume: Id of an interrupted run to finish instead of starting a new one.
        use_judge: Use the configured judge for what the record cannot decide.
        run_id: Id for the new run (default: time, agent and a random suffix).
        store: Also write the run to the workbench (the log is always written).
    """

    dataset: str = ""
    agent: str | None = None
    k: int = 3
    concurrency: int = 16
    slices: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    seed: int = 0
    agent_version: str | None = None
    timeout_s: float = 300.0
    resume: str | None = None
    use_judge: bool = True
    run_id: str | None = None
    store: bool = True


@dataclass(frozen=True)
class RunSummary:
    """What a finished run did.

    Attributes:
        header: The run's header record.
        end: Its end record.
        log: Path of the run log.
        resumed: Trials recorded by an earlier session of the run.
        ran: Trials run in this session.
    """

    header: RunHeader
    end: RunEnd
    log: Path
    resumed: int
    ran: int


class RunObserver(Protocol):
    """Progress callbacks (the CLI draws a progress bar with them).

    An observer that needs only each trial's verdict may also define
    ``trial_passed(passed: bool | None)``: every run then calls it instead of
    :meth:`trial_done`, and the parent of a sharded run reads the workers' trial lines without
    validating each into a :class:`TrialRecord` first (31 µs of the parent's CPU a trial, as
    much as a fifth of what a worker spends running it).
    """

    def started(self, total: int, done: int) -> None:
        """The run starts: ``total`` trials, ``done`` already recorded."""

    def trial_done(self, record: TrialRecord) -> None:
        """One trial finished and was recorded."""


#: Evidence of a judged check on a frozen case when the judge's endpoint is not private.
FROZEN_NO_JUDGE = (
    "frozen case: the judge is not marked private ([models.judge] private = true), so it never "
    "reads this case; a person decides this check"
)


def _verdict_callback(observer: RunObserver) -> Callable[[bool | None], None] | None:
    """The observer's ``trial_passed``, when it has one (see :class:`RunObserver`)."""
    found = getattr(observer, "trial_passed", None)
    return found if callable(found) else None


#: Seconds between flushes of the run log while trials stream in.
LOG_FLUSH_S = 0.5

#: Bytes the run log buffers between flushes: a flush's trials in a few writes, not one per 8 KiB.
LOG_BUFFER = 1 << 20


def trial_seed(run_seed: int, case_id: str, trial: int) -> int:
    """Seed of one trial: stable for a run, different across trials and cases (31 bits)."""
    digest = hashlib.sha256(f"{run_seed}\0{case_id}\0{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def _slug(text: str) -> str:
    tail = text.rstrip("/").replace("\\", "/").split("/")[-1].split(":")[-1]
    cleaned = "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in tail.lower()).strip(
        "-"
    )
    return cleaned[:24] or "agent"


def new_run_id(agent_spec: str, now: datetime) -> str:
    """``20261130T101500Z-<agent>-<4 hex>``: sortable by time, readable, unique."""
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{_slug(agent_spec)}-{secrets.token_hex(2)}"


def _catalogue(project: Project, dataset: Dataset) -> list[AgentTool]:
    try:
        declared = declared_tools(project)
    except ConfigError:
        declared = {}
    if declared:
        return catalogue_from(declared, declared)
    # No declarations: every tool the dataset names (never per case: that would leak the case).
    return catalogue_from({f.tool for c in dataset.cases for f in c.situation.fixtures})


def _catalogues(
    project: Project, dataset: Dataset, case_ids: Sequence[str], prepared: _Prepared
) -> dict[str, list[AgentTool]]:
    """The tools each case offers: its own catalogue (`tools` / `tools_file`), else its slice's.

    A slice served by a tool environment offers the environment's declarations; a case's own
    `tools` then pick from those.

    Raises:
        UsageError: A case's catalogue cannot be built (see `casework dataset check`).
    """
    shared = _catalogue(project, dataset)
    try:
        declared = declared_tools(project)
    except ConfigError:
        declared = {t.name: ToolDecl(t.name) for t in shared}
    files = CatalogueFiles(project.root)
    by_id = {c.id: c for c in dataset.cases}
    out: dict[str, list[AgentTool]] = {}
    for case_id in case_ids:
        case = by_id[case_id]
        env_tools = prepared.catalogues.get(case.slice)
        if case.situation.tools is None and case.situation.tools_file is None:
            out[case_id] = shared if env_tools is None else env_tools
            continue
        base = declared
        if env_tools is not None:
            base = {t.name: ToolDecl(t.name, t.description, dict(t.parameters)) for t in env_tools}
        try:
            offered = case_catalogue(case, base, files)
        except CatalogueError as exc:
            raise UsageError(f"case {case_id}: {exc.message}.").suggest(
                Hint("dataset check", args=(dataset.name,))
            ) from exc
        # A fixture outside the offered set would answer a tool the agent was never offered.
        stray = sorted({f.tool for f in case.situation.fixtures} - set(offered))
        if stray:
            raise UsageError(
                f"case {case_id}: a fixture answers {', '.join(stray)}, which the case does not "
                "offer."
            ).suggest(Hint("dataset check", args=(dataset.name,)))
        out[case_id] = catalogue_from(offered, offered)
    return out


def _simulator(
    project: Project, dataset: Dataset, header: RunHeader, user: LLMClient | None
) -> UserSimulator | None:
    """The simulated user's client, when a case of the run has a `user_scenario`.

    Raises:
        UsageError: A frozen case has a scenario and `[models.user]` does not keep data local.
    """
    ids = set(header.case_ids)
    chosen = [c for c in dataset.cases if c.id in ids]
    scripted = [c for c in chosen if c.situation.user_scenario is not None]
    if not scripted:
        return None
    config = project.config.models.user
    frozen = [c.id for c in scripted if c.frozen]
    if frozen and user is None and not config.keeps_data_local:
        raise UsageError(
            f"frozen case {frozen[0]} has a user_scenario and [models.user] is not private; "
            "set [models.user] private = true for a local model, or leave the case out."
        )
    return UserSimulator(user if user is not None else client_for(project, "user"))


def _fresh_turn(turn: Turn) -> Turn:
    """A copy of a turn the agent may scribble on without touching the case (cheaper than deepcopy)."""
    if not turn.tool_calls:
        return turn.model_copy()
    calls = [
        c.model_copy(update={"arguments": clone(c.arguments), "result": clone(c.result)})
        for c in turn.tool_calls
    ]
    return turn.model_copy(update={"tool_calls": calls})


def _gradable(case: Case) -> bool:
    oracle = case.oracle
    return case.label is not None or bool(
        oracle.assertions or oracle.golden_actions or oracle.check
    )


@dataclass
class _Prepared:
    """What trials read besides the case (tool environments, issue 16), built before the log.

    Attributes:
        factories: Environment per slice served by one.
        catalogues: The tools those slices offer (the environment's declarations).
        states: Initial state per case on a shared `state_ref` (read-only; shared parts).
        golden: Golden final state per case with golden actions, as a diff from its initial state.
        scoring: Cases scored other than by casework's checks (`tau2`).
        golden_failures: Golden actions that failed on replay (recorded and skipped).
    """

    factories: dict[str, EnvironmentFactory]
    catalogues: dict[str, list[AgentTool]]
    states: dict[str, dict[str, Any]]
    golden: dict[str, list[dict[str, Any]]]
    scoring: dict[str, Scoring] = field(default_factory=dict)
    golden_failures: list[GoldenFailure] = field(default_factory=list)

    def scoring_of(self, case: Case) -> Scoring:
        """How ``case`` is scored."""
        return self.scoring.get(case.id, "casework")

    def records_diff(self, case: Case) -> bool:
        """Whether the log keeps a state diff for this case instead of its final state."""
        return case.slice in self.factories or case.situation.state_ref is not None


def _fixture_factory(case: Case) -> EnvironmentFactory:
    def make() -> FixtureEnvironment:
        return FixtureEnvironment(case.situation.fixtures)

    return make


#: τ²-bench domains whose own tools run an imported slice with no environment configured.
_TAU2_ENVIRONMENTS: dict[str, type[Tau2DomainEnvironment]] = {
    "airline": AirlineEnvironment,
    "retail": RetailEnvironment,
    "telecom": TelecomEnvironment,
}


def _scoring(project: Project, dataset: Dataset, case: Case) -> Scoring:
    """`[run] scoring` for the dataset, else `tau2` for cases imported from τ²-bench."""
    chosen = project.config.run.scoring.get(dataset.name)
    if chosen is not None:
        return chosen
    return "tau2" if imported_from_tau2(case) else "casework"


def _tau2_factories(
    project: Project, cases: Sequence[Case], prepared: _Prepared, shown: str
) -> None:
    """Serve each slice imported from τ²-bench, with no environment configured, by τ²'s own tools.

    A slice qualifies when every case of it was imported from τ²-bench and their shared state
    is one τ² domain's database.
    """
    run = project.config.run
    by_slice: dict[str, list[Case]] = {}
    for case in cases:
        by_slice.setdefault(case.slice, []).append(case)
    for name, members in sorted(by_slice.items()):
        if run.environment_for(name) is not None or not all(map(imported_from_tau2, members)):
            continue
        if members[0].situation.state_ref is None:
            continue
        domain = tau2_domain_of(initial_state(project.root, members[0], where=shown))
        env = _TAU2_ENVIRONMENTS.get(domain or "")
        if env is None:
            continue
        spec = f"{env.__module__}:{env.__name__}"
        prepared.factories[name] = env
        prepared.catalogues[name] = environment_catalogue(env, spec)


def _brought_factories(project: Project, cases: Sequence[Case], prepared: _Prepared) -> None:
    """Serve each slice with no environment configured by the one its cases' check brings.

    A slice qualifies when every case of it names a programmatic check that brings the same
    environment (an imported AgentDojo suite: AgentDojo's own tools).
    """
    by_slice: dict[str, list[Case]] = {}
    for case in cases:
        by_slice.setdefault(case.slice, []).append(case)
    for name, members in sorted(by_slice.items()):
        if name in prepared.factories or project.config.run.environment_for(name) is not None:
            continue
        brought = {
            (b.name if b else None): b for b in map(check_environment, (c.oracle for c in members))
        }
        only = brought.popitem()[1] if len(brought) == 1 else None
        if only is None:
            continue
        factory = cast(EnvironmentFactory, only.make)
        prepared.factories[name] = factory
        prepared.catalogues[name] = environment_catalogue(factory, only.name)


def _prepare(project: Project, dataset: Dataset, cases: Sequence[Case]) -> _Prepared:
    """Load environments, resolve shared states and replay golden actions, or fail before writing.

    A required golden action that fails is recorded and skipped (as τ²-bench does), never a
    stopped run: a case scored by casework's checks then leaves its golden-state check
    undetermined; a case scored as τ² scores is graded on what the other actions left.

    Raises:
        ConfigError: An environment cannot be loaded.
        StateRefError: A case's `state_ref` or `state_patch` is unusable.
    """
    run = project.config.run
    prepared = _Prepared({}, {}, {}, {})
    specs: dict[str, tuple[EnvironmentFactory, list[AgentTool]]] = {}
    for name in sorted({c.slice for c in cases}):
        spec = run.environment_for(name)
        if spec is None:
            continue
        if spec not in specs:
            where = f"run.environments.{name}" if name in run.environments else "run.environment"
            factory = load_environment(spec, project.root, where=where)
            specs[spec] = (factory, environment_catalogue(factory, spec))
        prepared.factories[name], prepared.catalogues[name] = specs[spec]
    shown = f"{project.relative(dataset.path)}/{CASES_FILE}"
    _tau2_factories(project, cases, prepared, shown)
    _brought_factories(project, cases, prepared)
    for case in cases:
        state = initial_state(project.root, case, where=shown)
        if case.situation.state_ref is not None:
            prepared.states[case.id] = state
        scoring = _scoring(project, dataset, case)
        if scoring != "casework":
            prepared.scoring[case.id] = scoring
        tau2_env = _tau2_served(prepared, case)
        if tau2_env is not None and case.oracle.tau2 is not None:
            _prepare_tau2(prepared, case, tau2_env, state, shown)
            continue
        if case.oracle.golden_actions:
            factory = prepared.factories.get(case.slice) or _fixture_factory(case)
            replay = replay_golden(
                factory, state, case.oracle.golden_actions, case_id=case.id, skip_failures=True
            )
            actions = case.oracle.golden_actions
            prepared.golden_failures += [
                GoldenFailure(case_id=case.id, index=i, tool=actions[i].name, error=error)
                for i, error in replay.failed
            ]
            if replay.failed and scoring == "casework":
                continue  # no golden state: its check stays undetermined (fails closed)
            # Kept as a diff: a golden copy of a large shared state per case would not fit.
            prepared.golden[case.id] = state_diff(state, replay.state)
    return prepared


def _tau2_served(prepared: _Prepared, case: Case) -> type[Tau2DomainEnvironment] | None:
    """The τ² environment class serving ``case``'s slice, if τ²'s own tools serve it."""
    factory = prepared.factories.get(case.slice)
    if isinstance(factory, type) and issubclass(factory, Tau2DomainEnvironment):
        return factory
    return None


def _prepare_tau2(
    prepared: _Prepared,
    case: Case,
    env: type[Tau2DomainEnvironment],
    state: dict[str, Any],
    shown: str,
) -> None:
    """A τ² case's start and golden states, as τ²'s evaluator builds them.

    The trial starts from the shared state with the task's initialization applied (the user's
    device data and initialization actions); the golden state replays every published golden
    action by its requestor (the user's too), a failing one recorded and skipped.

    Raises:
        InputError: An initialization action fails on the case's state.
    """
    tau2 = case.oracle.tau2
    assert tau2 is not None
    init = tau2.initial_state or {}
    data = init.get("initialization_data")
    start = state
    if init.get("initialization_actions") or (isinstance(data, dict) and data.get("user_data")):
        try:
            start = tau2_initialised(env, state, init)
        except ToolError as exc:
            why = f"case {case.id}: {exc}"
            raise InputError(shown, None, "oracle.tau2.initial_state", why) from None
        prepared.states[case.id] = start
    actions = [a for a in tau2.evaluation_criteria.get("actions") or [] if isinstance(a, dict)]
    golden, failed = tau2_golden_state(env, start, actions)
    prepared.golden_failures += [
        GoldenFailure(case_id=case.id, index=i, tool=str(actions[i].get("name")), error=error)
        for i, error in failed
    ]
    if failed and prepared.scoring_of(case) == "casework":
        return  # no golden state: its check stays undetermined (fails closed)
    prepared.golden[case.id] = state_diff(start, golden)


def _judge_info(judge: Judge | None) -> JudgeInfo | None:
    if judge is None:
        return None
    return JudgeInfo(
        model=judge.model,
        calibration={
            name: SliceCalibration(
                kappa=c.kappa,
                accuracy=c.accuracy,
                n=c.n,
                admissible=all(judge.admissible(name, kind) for kind in CHECK_KINDS),
            )
            for name, c in sorted(judge.calibration.items())
        },
        prompt_version=judge.prompt_version,
        certification=_certification_info(judge),
    )


def _certification_info(judge: Judge) -> dict[str, dict[str, CheckCertification]]:
    """The judge's current certification per slice and check kind (admissible or not)."""
    out: dict[str, dict[str, CheckCertification]] = {}
    for name in sorted(judge.rubric_digests):
        for kind in CHECK_KINDS:
            cert = judge.certification(name, kind)
            if cert is not None:
                out.setdefault(name, {})[kind] = CheckCertification(
                    tp=cert.tp,
                    fn=cert.fn,
                    tn=cert.tn,
                    fp=cert.fp,
                    admissible=cert.admissible,
                    certified_at=cert.certified_at,
                    cases=list(cert.cases),
                )
    return out


def _load_for_resume(project: Project, request: RunRequest) -> tuple[LoadedRun, Dataset]:
    assert request.resume is not None
    path = log_path(project, request.resume)
    loaded = read_log(path, project.relative(path))
    header = loaded.header
    if loaded.end is not None:
        raise UsageError(f"run {header.run_id} already finished; nothing to resume.")
    if request.agent and request.agent != header.agent_spec:
        raise UsageError(
            f"run {header.run_id} used `agent` {header.agent_spec}. Got '{request.agent}'.",
            param="resume",
            mentions=("agent",),
        )
    name, _, version = header.dataset_ref.partition("@")
    dataset = load_dataset(project, name if version == "working" else header.dataset_ref)
    if dataset.hash != header.dataset_hash:
        raise UsageError(
            f"run {header.run_id}: dataset {header.dataset_ref} changed since the run started "
            f"(hash {header.dataset_hash[:12]}, now {dataset.hash[:12]}); start a new run.",
            param="resume",
        )
    return loaded, dataset


def _cut_torn_tail(path: Path, valid_bytes: int | None) -> None:
    """Drop a half-written last line (a crash mid-write) so new records start on a fresh line."""
    if valid_bytes is None:
        return
    with path.open("r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size > valid_bytes:
            handle.truncate(valid_bytes)
        elif size == valid_bytes and size and not _ends_with_newline(handle):
            handle.write(b"\n")


def _ends_with_newline(handle: IO[bytes]) -> bool:
    handle.seek(-1, os.SEEK_END)
    return handle.read(1) == b"\n"


def _new_header(
    project: Project, request: RunRequest, dataset: Dataset, judge: Judge | None, now: datetime
) -> RunHeader:
    if request.k < 1:
        raise UsageError(f"must be at least 1. Got {request.k}.", param="k")
    spec = request.agent or project.config.agent.spec
    if not spec:
        raise UsageError(
            "run: no agent; pass `agent` SPEC or set [agent] spec in casework.toml.",
            mentions=("agent",),
        )
    known = sorted({c.slice for c in dataset.cases})
    unknown = [s for s in request.slices if s not in known]
    if unknown:
        raise UsageError(
            f"no slice {', '.join(unknown)} in {dataset.ref} (slices: {', '.join(known)}).",
            param="slice",
        )
    chosen = select_cases(dataset.cases, slices=request.slices, splits=request.splits)
    skipped = {c.id: "no label and no state assertions" for c in chosen if not _gradable(c)}
    cases = [c for c in chosen if _gradable(c)]
    if not cases:
        raise UsageError(f"run: no gradable case in {dataset.ref} matches the filters.")
    return RunHeader(
        run_id=request.run_id or new_run_id(spec, now),
        dataset=dataset.name,
        dataset_ref=dataset.ref,
        dataset_hash=dataset.hash,
        agent_spec=spec,
        agent_version=request.agent_version,
        k=request.k,
        seed=request.seed,
        concurrency=request.concurrency,
        slices=list(request.slices),
        splits=list(request.splits),
        case_ids=[c.id for c in cases],
        skipped=skipped,
        judge=_judge_info(judge),
        timeout_s=request.timeout_s,
        started_at=now,
        casework_version=__version__,
    )


#: Trials handed to the workbench writer at once, and the longest a finished trial waits for it.
DB_BATCH = 500
DB_BATCH_S = 1.0


class _DbWriter:
    """Writes trials to the workbench in batches on its own thread, off the event loop.

    Rows collect in a list the event loop appends to; the thread takes the whole list once a
    batch is full or ``interval_s`` has passed, so the loop never wakes the thread per trial (a
    thread hand-off per trial cost more CPU than the insert). A crash loses only rows not yet
    inserted, which the run log holds: `resume` inserts them.
    """

    def __init__(
        self, store: RunStore, batch: int | None = None, interval_s: float | None = None
    ) -> None:
        self._store = store
        self._batch = DB_BATCH if batch is None else batch
        self._interval = DB_BATCH_S if interval_s is None else interval_s
        self._pending: list[dict[str, object]] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closing = False
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="casework-run-db", daemon=True)
        self._thread.start()

    def put(self, row: dict[str, object]) -> None:
        """Queue one trial's row (inserted within ``interval_s``, or when a batch is full)."""
        self.put_many((row,))

    def put_many(self, rows: Iterable[dict[str, object]]) -> None:
        """Queue trials' rows (inserted within ``interval_s``, or when a batch is full)."""
        with self._lock:
            self._pending.extend(rows)
            full = len(self._pending) >= self._batch
        if full:
            self._wake.set()

    def _take(self) -> list[dict[str, object]]:
        with self._lock:
            rows, self._pending = self._pending, []
        return rows

    def _loop(self) -> None:
        while True:
            self._wake.wait(self._interval)
            self._wake.clear()
            closing = self._closing
            rows = self._take()
            if rows:
                self._flush(rows)
            if closing:
                return

    def _flush(self, rows: list[dict[str, object]]) -> None:
        if self.error is not None:
            return
        try:
            self._store.insert_rows(rows)
        except Exception as exc:  # kept and raised by close(): the log still has every trial
            self.error = exc

    def close(self) -> None:
        """Insert what is left and stop the thread."""
        self._closing = True
        self._wake.set()
        self._thread.join()


#: Allocations between young collections while trials run (Python's default: 700).
GC_YOUNG_THRESHOLD = 50_000


def _hint_resume(exc: CaseworkError, run_id: str) -> None:
    """Add to ``exc``, raised while a run's trials ran, that the run can be resumed."""
    exc.add_hint(f"Run {run_id} is resumable: `resume` {run_id}.", mentions=("resume",))


class _LoadHeld:
    """The cyclic collector held off while a run loads its inputs, which are then frozen.

    Loading the cases, preparing their states and dealing the trials allocate millions of
    objects that hold no garbage cycles, and every full collection among them walked all those
    loaded so far again: 2.1 s of the 3.3 s before the first trial of a run of 100,000 trials
    over 25,000 cases. Held off, then frozen at once (``gc.freeze`` moves the objects alive to
    the permanent generation without walking them), they are never walked while the run lasts.
    On exit the collector is as it was and the objects thawed, so a long-lived process (the
    tests, the web app) collects them again, after a failed start too.
    """

    def __enter__(self) -> _LoadHeld:
        self._enabled = gc.isenabled()
        gc.disable()
        return self

    def loaded(self) -> None:
        """The inputs are loaded: freeze every object alive now and let the collector run."""
        gc.freeze()
        if self._enabled:
            gc.enable()

    def __exit__(self, *exc: object) -> None:
        gc.unfreeze()
        if self._enabled:
            gc.enable()


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """Leave the objects that exist before the trials out of the cyclic collector's walks.

    A run holds its cases, catalogues and prepared states from start to end, and every full
    collection walked all of them again: 0.46 ms of CPU a trial at 50,000 trials, 0.35 with them
    frozen. They are thawed when the trials end, so a long-lived process collects them again.

    Young collections are rarer meanwhile: with hundreds of trials in flight, each one found
    their objects alive and promoted them, and older collections walked them again (8% of a
    run's CPU at 8,000 trials, 2% with this threshold). The thresholds are restored after.
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], GC_YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


class _Trials:
    """Runs trials and records them: the run log line first, then the workbench, then progress."""

    def __init__(
        self,
        *,
        header: RunHeader,
        cases: dict[str, Case],
        catalogues: Mapping[str, list[AgentTool]],
        agent: Agent,
        judge: Judge | None,
        judge_private: bool,
        server: ToolServer | None,
        log: IO[str],
        db: _DbWriter | None,
        observer: RunObserver | None,
        clock: Callable[[], datetime],
        simulator: UserSimulator | None = None,
        prepared: _Prepared | None = None,
    ) -> None:
        self.prepared = prepared or _Prepared({}, {}, {}, {})
        self.header = header
        self.cases = cases
        # Taken as built (cases of a slice share one list), never walked here: in a worker
        # forked from the parent, touching 25,000 inherited lists copied their pages (0.17 s
        # before the first trial).
        self.catalogues = catalogues
        self.simulator = simulator
        self.agent = agent
        self.judge = judge
        self.judge_private = judge_private
        self.server = server
        self.log = log
        self.db = db
        self.observer = observer
        self._passed = _verdict_callback(observer) if observer is not None else None
        self.clock = clock
        self.records: list[tuple[bool | None, bool, float]] = []
        self.agent_version: str | None = header.agent_version
        self._flushed = time.monotonic()
        self._staged: list[dict[str, object]] = []
        self._ids = random.Random(secrets.randbits(64))
        # Each case's fixtures read once for its k trials (by tool, effect paths parsed).
        self._books: dict[str, FixtureBook] = {}

    def _session(self, case: Case, catalogue: list[AgentTool]) -> ToolSession:
        """The trial's tool session: its own environment instance and its own copy of the state."""
        prepared = self.prepared
        state = prepared.states.get(case.id, case.situation.state)
        factory = prepared.factories.get(case.slice)
        if factory is None:
            book = self._books.get(case.id)
            if book is None:
                book = self._books[case.id] = FixtureBook(case.situation.fixtures)
            return ToolSession(book, state, catalogue)
        try:
            return ToolSession(case.situation.fixtures, state, catalogue, environment=factory())
        except Exception as exc:  # user code: stops the run (resumable) with the reason
            raise UsageError(
                f"the tool environment of slice {case.slice} failed to start: {exc}"
            ) from exc

    async def one(self, case: Case, trial: int) -> TrialRecord:
        catalogue = self.catalogues[case.id]
        session = self._session(case, catalogue)
        token, url = self.server.register(session) if self.server is not None else (None, None)
        request = AgentInput(
            trial_id=f"{self._ids.getrandbits(64):016x}",
            turns=[_fresh_turn(t) for t in case.situation.turns],
            tools=catalogue,
            tool_server=url,
            seed=trial_seed(self.header.seed, case.id, trial),
        )
        started = self.clock()
        t0 = time.perf_counter()
        scenario = case.situation.user_scenario
        sim: UserSimRecord | None = None
        try:
            if scenario is not None and self.simulator is not None:
                seed = user_seed(self.header.seed, case.id, trial)
                trajectory, sim = await converse(
                    self.agent, request, session, scenario, self.simulator, seed
                )
            else:
                trajectory = await self.agent.run(request, session)
        finally:
            if token is not None and self.server is not None:
                self.server.unregister(token)
        duration = time.perf_counter() - t0
        calls, state = session.snapshot()
        trajectory = trajectory.model_copy(update={"tool_calls": calls, "final_state": state})
        verdict = await self._grade(case, trajectory, session)
        if self.prepared.records_diff(case):
            # The log keeps what changed, not a copy of a possibly large shared state.
            diff = state_diff(session.initial_state, state)
            trajectory = trajectory.model_copy(update={"final_state": None, "state_diff": diff})
        return TrialRecord(
            run_id=self.header.run_id,
            case_id=case.id,
            trial=trial,
            slice=case.slice,
            split=case.split,
            source=case.source,
            satisfiable=case.satisfiable,
            frozen=case.frozen,
            seed=request.seed,
            started_at=started,
            duration_s=round(duration, 6),
            verdict=verdict,
            trajectory=trajectory,
            user_sim=sim,
        )

    async def _grade(self, case: Case, trajectory: Trajectory, session: ToolSession) -> Verdict:
        diff = self.prepared.golden.get(case.id)
        golden = apply_shared(session.initial_state, diff) if diff is not None else None
        scoring = self.prepared.scoring_of(case)
        if self.judge is None or scoring == "tau2":
            # τ²'s default reward asks no judge: its NL assertions are not scored.
            return grade(
                case,
                trajectory,
                initial_state=session.initial_state,
                golden_state=golden,
                scoring=scoring,
            )
        if case.frozen and not self.judge_private:
            # Frozen content never leaves casework: only a private endpoint may read it.
            return grade(
                case,
                trajectory,
                initial_state=session.initial_state,
                no_judge=FROZEN_NO_JUDGE,
                golden_state=golden,
            )
        return await asyncio.to_thread(
            grade,
            case,
            trajectory,
            initial_state=session.initial_state,
            judge=self.judge,
            golden_state=golden,
        )

    def record(self, rec: TrialRecord) -> None:
        line = rec.model_dump_json()
        self.log.write(line + "\n")
        if self.db is not None:
            # A row waits until its log line is flushed: the workbench never holds a trial that
            # a crash could take from the log (resume would run it again and store it twice).
            self._staged.append(trial_row(rec, line))
        if time.monotonic() - self._flushed >= LOG_FLUSH_S:
            self.flush()  # a crash loses at most this much; those trials rerun
        if self.agent_version is None and rec.trajectory.agent_version:
            self.agent_version = rec.trajectory.agent_version
        self.records.append(
            (rec.verdict.passed, rec.trajectory.error is not None, rec.trajectory.usage.cost_usd)
        )
        if self._passed is not None:
            self._passed(rec.verdict.passed)
        elif self.observer is not None:
            self.observer.trial_done(rec)

    def flush(self) -> None:
        """Flush the run log, then hand the trials it now holds to the workbench writer."""
        self.log.flush()
        self._flushed = time.monotonic()
        if self.db is not None and self._staged:
            self.db.put_many(self._staged)
            self._staged = []

    async def run_all(self, pending: Sequence[tuple[str, int]], concurrency: int) -> None:
        work: Iterator[tuple[str, int]] = iter(pending)

        async def worker() -> None:
            for case_id, trial in work:
                self.record(await self.one(self.cases[case_id], trial))

        tasks = [
            asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(pending))))
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def run_agent(
    project: Project,
    request: RunRequest,
    *,
    observer: RunObserver | None = None,
    judge: Judge | None = None,
    clock: Callable[[], datetime] | None = None,
    user: LLMClient | None = None,
) -> RunSummary:
    """Run (or resume) a run to the end and return its summary.

    Args:
        project: The project.
        request: What to run.
        observer: Progress callbacks.
        judge: Judge to use (default: the configured one, when ``request.use_judge``).
        clock: UTC clock (injected by tests).
        user: Client playing simulated users (default: `[models.user]`, built only when a case
            of the run has a `user_scenario`).

    Raises:
        UsageError: Bad options, an unknown slice, nothing to run, a run that cannot resume.
        AgentUnavailable: The agent cannot be reached; the run stays resumable.
    """
    with _LoadHeld() as held:
        return asyncio.run(
            _run(
                project, request, observer, judge, clock or (lambda: datetime.now(UTC)), user, held
            )
        )


async def _run(
    project: Project,
    request: RunRequest,
    observer: RunObserver | None,
    judge: Judge | None,
    clock: Callable[[], datetime],
    user: LLMClient | None = None,
    held: _LoadHeld | None = None,
) -> RunSummary:
    if request.concurrency < 1:
        raise UsageError(f"must be at least 1. Got {request.concurrency}.", param="concurrency")
    if judge is None and request.use_judge:
        judge = load_judge(project)
    if request.resume:
        loaded, dataset = _load_for_resume(project, request)
        judge = judge.for_cases(dataset.cases) if judge is not None else None
        header = loaded.header
        done = loaded.done()
        previous = loaded.trials
    else:
        if not request.dataset:
            raise UsageError("run: name a dataset (DATASET or DATASET@VERSION).")
        dataset = load_dataset(project, request.dataset)
        # The judge's certifications apply only under the rubrics of the cases it now grades.
        judge = judge.for_cases(dataset.cases) if judge is not None else None
        header = _new_header(project, request, dataset, judge, clock())
        done, previous = set(), []
    by_id = {c.id: c for c in dataset.cases}
    # Environments, shared states and golden replays fail here, before anything is written.
    prepared = _prepare(project, dataset, [by_id[cid] for cid in header.case_ids])
    if not request.resume:
        header = header.model_copy(
            update={"scoring": dict(prepared.scoring), "golden_failures": prepared.golden_failures}
        )
    catalogues = _catalogues(project, dataset, header.case_ids, prepared)
    simulator = _simulator(project, dataset, header, user)
    path = log_path(project, header.run_id)
    if request.resume:
        _cut_torn_tail(path, loaded.valid_bytes)
    else:
        if path.exists():
            raise UsageError(f"run {header.run_id}: {project.relative(path)} already exists.")
        atomic_write_text(path, header.model_dump_json() + "\n")
    pending = [(cid, t) for t in range(header.k) for cid in header.case_ids if (cid, t) not in done]
    if held is not None:
        held.loaded()
    store = RunStore(open_workbench(project)) if request.store else None
    if store is not None:
        store.save_header(header)
        store.save_trials(previous)
    agent = load_agent(
        header.agent_spec,
        root=project.root,
        timeout_s=header.timeout_s,
        concurrency=request.concurrency,
        pass_env=project.config.agent.pass_env,
    )
    server = ToolServer().start() if agent.needs_tool_server else None
    db = _DbWriter(store) if store is not None else None
    started = time.perf_counter()
    if observer is not None:
        observer.started(len(header.case_ids) * header.k, len(done))
    try:
        with path.open("a", encoding="utf-8", buffering=LOG_BUFFER) as log:
            trials = _Trials(
                header=header,
                cases=by_id,
                catalogues=catalogues,
                agent=agent,
                judge=judge,
                judge_private=project.config.models.judge.keeps_data_local,
                server=server,
                log=log,
                db=db,
                observer=observer,
                clock=clock,
                simulator=simulator,
                prepared=prepared,
            )
            try:
                with _heap_frozen():
                    await trials.run_all(pending, request.concurrency)
            except CaseworkError as exc:
                _hint_resume(exc, header.run_id)
                raise
            finally:
                trials.flush()
            outcomes = [
                (t.verdict.passed, t.trajectory.error is not None, t.trajectory.usage.cost_usd)
                for t in previous
            ]
            outcomes += trials.records
            end = RunEnd(
                run_id=header.run_id,
                finished_at=clock(),
                trials=len(outcomes),
                passed=sum(p is True for p, _, _ in outcomes),
                failed=sum(p is False for p, _, _ in outcomes),
                undetermined=sum(p is None for p, _, _ in outcomes),
                errors=sum(e for _, e, _ in outcomes),
                cost_usd=round(sum(c for _, _, c in outcomes), 6),
                wall_s=round(time.perf_counter() - started, 3),
                agent_version=header.agent_version or trials.agent_version,
            )
            log.write(end.model_dump_json() + "\n")
            log.flush()
            with contextlib.suppress(OSError):
                os.fsync(log.fileno())
    finally:
        if db is not None:
            db.close()
        if server is not None:
            server.close()
        await agent.aclose()
        if store is not None:
            store.workbench.close()
    if db is not None and db.error is not None:
        raise db.error
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
