"""`casework import run`: another tool's per-trial results become a casework run log in runs/.

Entry points: :func:`import_run` (project level: reads, pins, writes atomically) over
:func:`read_results` (picks the reader of the file's format: ``generic``, ``inspect``,
``tau``, ``tau2``), :func:`run_records` (pure: results to header, trial records and end
record) and :func:`run_log_schema` (the JSON Schema of one run-log line, `casework schema run`).

An imported trial's verdict carries one check, ``imported``, whose evidence is what the tool
reported (pass, or reward against the threshold): casework has no per-check detail for it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from casework import __version__
from casework.atomic import atomic_write_bytes
from casework.dataset import dataset_versions, load_dataset
from casework.decoding import load_json
from casework.decompress import DecompressionLimits
from casework.errors import InputError, InputErrors, Problem, UsageError
from casework.grading import CheckResult, Verdict
from casework.interop.generic._results import parse_field_map, read_generic_results
from casework.interop.inspect._log import read_inspect_results
from casework.interop.results import ExternalResults, ExternalTrial, ResultFormat
from casework.interop.tau2._results import read_tau_results
from casework.interop.tau2._simulations import read_tau2_results
from casework.names import check_name, name_problem
from casework.project import Project
from casework.runner import RunEnd, RunHeader, TrialRecord, log_path
from casework.schema import Case, Trajectory, Usage

#: The spec prefix of imported runs' agents (``import:tau``…): how the gate knows a run was imported.
IMPORTED_SPEC = "import:"
#: Name of the single check an imported verdict carries.
IMPORTED_CHECK = "imported"
#: Dataset name of a run standing alone (its tasks are not cases of a dataset).
STANDALONE_DATASET = "external"


@dataclass(frozen=True)
class RunImportOptions:
    """How to import a results file.

    Attributes:
        format: ``generic``, ``inspect``, ``tau`` or ``tau2``.
        mapping: ``DST=SRC.PATH`` field mappings (generic; ``scorer=NAME`` for Inspect).
        dataset: Dataset whose cases the task ids name (``None``: the run stands alone).
        version: Release of ``dataset`` the run was on (default: the latest, or the one whose
            hash the file or ``dataset_hash`` names).
        dataset_hash: Content hash (or a prefix of 8+ hex) of the version the run was on.
        threshold: A trial passes when its reward is at least this (default 1.0).
        run_id: Id of the imported run (default: ``import-<format>-<12 hex of the file>``).
        agent_version: Version label of the agent that was run.
        id_map: A JSON object file mapping the file's task ids to case ids, for ids that are
            neither case ids nor the original ids kept at import.
    """

    format: ResultFormat
    mapping: Sequence[str] = ()
    dataset: str | None = None
    version: int | None = None
    dataset_hash: str | None = None
    threshold: float = 1.0
    run_id: str | None = None
    agent_version: str | None = None
    id_map: Path | None = None


@dataclass(frozen=True)
class RunImportReport:
    """What an import wrote.

    Attributes:
        run_id: The run's id.
        path: The run log written.
        dataset_ref: ``name@N`` the run is pinned to, or ``external@<file>`` standing alone.
        trials: Trials imported.
        passed: Trials that passed.
        cases: Distinct tasks.
        k: Most trials of one task.
    """

    run_id: str
    path: str
    dataset_ref: str
    trials: int
    passed: int
    cases: int
    k: int
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RunPin:
    """What an imported run is pinned to.

    Attributes:
        name: Dataset name (``external`` for a run standing alone).
        ref: ``name@N``, or ``external@<file name>``.
        hash: The release's content hash, or the results file's SHA-256.
        cases: The release's cases by id (empty standing alone).
    """

    name: str
    ref: str
    hash: str
    cases: Mapping[str, Case]


def standalone_pin(data: bytes, file_name: str) -> RunPin:
    """The pin of a run standing alone: dataset ``external``, hashed by the file's bytes."""
    digest = hashlib.sha256(data).hexdigest()
    return RunPin(STANDALONE_DATASET, f"{STANDALONE_DATASET}@{file_name}", digest, {})


def run_log_schema() -> dict[str, Any]:
    """JSON Schema of one line of a run log: a header, a trial or an end record (by ``kind``)."""
    line = Annotated[RunHeader | TrialRecord | RunEnd, Field(discriminator="kind")]
    schema: dict[str, Any] = TypeAdapter(line).json_schema(by_alias=True)
    schema["title"] = "casework run log line"
    schema["description"] = (
        "One line of runs/<run-id>.jsonl: the first is the run header (kind 'run'), then one "
        "trial record per trial (kind 'trial'), then the end record (kind 'end') once finished."
    )
    return schema


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
        fmt: ``generic``, ``tau``, ``tau2`` or ``inspect``.
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
    if fmt in ("tau", "tau2") and mapping:
        raise UsageError(
            "τ-bench results have a fixed shape; `map` is for generic files.", param="map"
        )
    if not path.is_file():
        raise InputError(name, None, None, "results file not found")
    data = path.read_bytes()
    readers: dict[str, Callable[[], ExternalResults]] = {
        "generic": lambda: read_generic_results(
            data, name, paths, [s.partition("=")[0].strip() for s in mapping]
        ),
        "tau": lambda: read_tau_results(data, name),
        "tau2": lambda: read_tau2_results(data, name),
        "inspect": lambda: read_inspect_results(
            data, name, paths["scorer"][0] if paths["scorer"] else None, limits
        ),
    }
    return readers[fmt]()


def _verdict(t: ExternalTrial, fmt: str, threshold: float) -> Verdict:
    if t.passed is not None:
        passed = t.passed
        evidence = f"{fmt} reported {'pass' if passed else 'fail'}"
        if t.reward is not None:
            evidence += f" (reward {t.reward:g})"
    else:
        assert t.reward is not None
        passed = t.reward >= threshold
        evidence = f"{fmt} reported reward {t.reward:g}; threshold {threshold:g}"
    if t.explanation:
        evidence += f": {t.explanation[:300]}"
    check = CheckResult(name=IMPORTED_CHECK, status="pass" if passed else "fail", evidence=evidence)
    return Verdict(passed=passed, checks=[check])


def _trial_record(
    t: ExternalTrial, run_id: str, case: Case | None, fmt: str, threshold: float, at: datetime
) -> TrialRecord:
    trajectory = Trajectory(
        messages=list(t.messages),
        final_reply=t.reply,
        tool_calls=list(t.tool_calls),
        metadata={
            **t.metadata,
            "imported_from": t.where,
            **({"reward": t.reward} if t.reward is not None else {}),
        },
        usage=Usage(
            input_tokens=t.input_tokens or 0,
            output_tokens=t.output_tokens or 0,
            cost_usd=t.cost_usd or 0.0,
        ),
    )
    return TrialRecord(
        run_id=run_id,
        case_id=t.task_id,
        trial=t.trial,
        slice=case.slice if case else "imported",
        split=case.split if case else "dev",
        source=case.source if case else "imported",
        satisfiable=case.satisfiable if case else True,
        frozen=case.frozen if case else False,
        seed=t.seed or 0,
        started_at=t.started_at or at,
        duration_s=t.duration_s or 0.0,
        verdict=_verdict(t, fmt, threshold),
        trajectory=trajectory,
        user_sim=t.user_sim,
    )


def run_records(
    results: ExternalResults,
    *,
    run_id: str,
    pin: RunPin,
    spec: str,
    threshold: float,
    agent_version: str | None = None,
    now: datetime,
) -> tuple[RunHeader, list[TrialRecord], RunEnd]:
    """The run log of imported results (pure): header, trial records, end record."""
    records = [
        _trial_record(t, run_id, pin.cases.get(t.task_id), results.format, threshold, now)
        for t in results.trials
    ]
    ids = list(dict.fromkeys(t.task_id for t in results.trials))
    per: dict[str, int] = {}
    for t in results.trials:
        per[t.task_id] = per.get(t.task_id, 0) + 1
    header = RunHeader(
        run_id=run_id,
        dataset=pin.name,
        dataset_ref=pin.ref,
        dataset_hash=pin.hash,
        agent_spec=spec,
        agent_version=agent_version or results.agent,
        k=max(per.values()),
        seed=0,
        concurrency=1,
        case_ids=ids,
        timeout_s=0.0,
        started_at=now,
        casework_version=__version__,
    )
    passed = sum(1 for r in records if r.verdict.passed)
    end = RunEnd(
        run_id=run_id,
        finished_at=now,
        trials=len(records),
        passed=passed,
        failed=len(records) - passed,
        undetermined=0,
        errors=0,
        cost_usd=sum(r.trajectory.usage.cost_usd for r in records),
        wall_s=0.0,
    )
    return header, records, end


def _standalone(options: RunImportOptions, data: bytes, stem: str) -> RunPin:
    if options.version is not None or options.dataset_hash is not None:
        which = "version" if options.version is not None else "dataset_hash"
        raise UsageError(
            "a run pinned to a version needs `dataset`.", param=which, mentions=("dataset",)
        )
    return standalone_pin(data, stem)


def _releases(versions: Sequence[Any], name: str) -> str:
    shown = [f"{name}@{v.number} {v.hash[:16]}" for v in versions[-10:]]
    more = f" (and {len(versions) - 10} older)" if len(versions) > 10 else ""
    return ", ".join(shown) + more


def _pin(
    project: Project, results: ExternalResults, options: RunImportOptions, data: bytes, stem: str
) -> RunPin:
    """The dataset version the run was on, from `version`, a dataset hash, or the latest."""
    if options.dataset is None:
        return _standalone(options, data, stem)
    name = check_name(options.dataset, "dataset")
    versions = dataset_versions(project, name)
    if not versions:
        raise UsageError(
            f"dataset '{name}' has no release; release it, then import the run on the release.",
            param="dataset",
        )
    wanted = options.dataset_hash or results.dataset_hash
    chosen = versions[-1]
    if options.version is not None:
        found = [v for v in versions if v.number == options.version]
        if not found:
            raise UsageError(
                f"{name} has no release #{options.version}; its releases are: {_releases(versions, name)}.",
                param="version",
            )
        chosen = found[0]
    if wanted is not None:
        key = wanted.strip().lower()
        matches = [v for v in versions if len(key) >= 8 and v.hash.startswith(key)]
        if not matches or (options.version is not None and chosen not in matches):
            what = (
                f"not release #{options.version}" if options.version is not None else "no release"
            )
            raise UsageError(
                f"dataset hash '{wanted}' matches {what} of {name} (give 8 or more hex digits); "
                "the run could have meant one of: "
                f"{_releases(versions, name)}.",
                param="dataset_hash",
            )
        chosen = matches[-1]
    ref = f"{name}@{chosen.number}"
    cases = {c.id: c for c in load_dataset(project, ref).cases}
    return RunPin(name, ref, chosen.hash, cases)


def read_id_map(path: Path, shown: str) -> dict[str, str]:
    """A ``{task id: case id}`` JSON object file.

    Raises:
        InputError: The file is missing, not a JSON object, or maps to a non-string.
    """
    if not path.is_file():
        raise InputError(shown, None, None, "id map file not found")
    value = load_json(path.read_bytes(), shown)
    if not isinstance(value, dict):
        raise InputError(shown, None, "/", "an id map is a JSON object of task id: case id", value)
    InputErrors.raise_if_any(
        Problem(shown, None, f"/{k}", "must be a case id (a string)", v, True)
        for k, v in value.items()
        if not isinstance(v, str)
    )
    return dict(value)


def _pinned_ids(
    results: ExternalResults, pin: RunPin, id_map: Mapping[str, str]
) -> ExternalResults:
    """``results`` with task ids turned into the pinned release's case ids.

    A task id that is a case id stays; else the id map names its case; else the one case
    imported from a task of that id (``provenance.original_id``) is its case. Ids matching
    nothing stay, for :func:`_check_trials` to report.
    """
    if not pin.cases:
        return results
    by_original: dict[str, list[str]] = {}
    for case in pin.cases.values():
        if case.provenance.original_id is not None:
            by_original.setdefault(case.provenance.original_id, []).append(case.id)
    problems: list[Problem] = []
    trials: list[ExternalTrial] = []
    for t in results.trials:
        case_id = t.task_id
        if t.task_id in id_map:
            case_id = id_map[t.task_id]
        elif t.task_id not in pin.cases and len(by_original.get(t.task_id, [])) > 1:
            path, _, number = t.where.rpartition(":")
            file, line = (path, int(number)) if number.isdigit() else (t.where, None)
            many = ", ".join(sorted(by_original[t.task_id])[:5])
            why = f"was imported as several cases of {pin.ref} ({many}); give `id_map`"
            problems.append(Problem(file, line, "task_id", why, t.task_id, True))
        elif t.task_id not in pin.cases and t.task_id in by_original:
            case_id = by_original[t.task_id][0]
        trials.append(dataclasses.replace(t, task_id=case_id))
    InputErrors.raise_if_any(problems)
    return dataclasses.replace(results, trials=trials)


def _check_trials(results: ExternalResults, pin: RunPin) -> None:
    """Every trial names a case of the pinned version, and no (task, trial) pair twice."""
    problems: list[Problem] = []
    seen: set[tuple[str, int]] = set()
    for t in results.trials:
        path, _, number = t.where.rpartition(":")
        file, line = (path, int(number)) if number.isdigit() else (t.where, None)
        bad_name = None if pin.cases else name_problem(t.task_id)
        if pin.cases and t.task_id not in pin.cases:
            problems.append(
                Problem(file, line, "task_id", f"not a case of {pin.ref}", t.task_id, True)
            )
        elif bad_name is not None:
            problems.append(Problem(file, line, "task_id", bad_name, t.task_id, True))
        if (t.task_id, t.trial) in seen:
            why = f"task {t.task_id} has trial {t.trial} twice"
            problems.append(Problem(file, line, "trial", why, t.trial, True))
        seen.add((t.task_id, t.trial))
    InputErrors.raise_if_any(problems)


def import_run(
    project: Project, path: Path, options: RunImportOptions, *, now: datetime | None = None
) -> RunImportReport:
    """Import another tool's per-trial results as a finished run log ``runs/<run-id>.jsonl``.

    The run is pinned to a dataset release when ``options.dataset`` is given (every task id
    must be a case id of it; a dataset hash that matches no release is refused, naming the
    releases), or stands alone (dataset ``external``, its hash the file's SHA-256). The log is
    written atomically and only when the whole file is good; the workbench is not touched, so
    the run is one that exists only as a file (`results list` shows it).

    Raises:
        InputError: The file is bad, or a task is not a case of the pinned version.
        UsageError: Bad options, an unknown release or hash, or the run id already exists.
    """
    shown = project.relative(path)
    if options.threshold != options.threshold:
        raise UsageError("must be a number. Got nan.", param="threshold")
    results = read_results(path, options.format, options.mapping, shown)
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    run_id = options.run_id or f"import-{options.format}-{digest[:12]}"
    check_name(run_id, "run id")
    out = log_path(project, run_id)
    if out.exists():
        raise UsageError(
            f"run {run_id} already exists ({project.relative(out)}); give another `run_id`.",
            param="run_id",
        )
    pin = _pin(project, results, options, data, path.name)
    if options.id_map is not None and options.dataset is None:
        raise UsageError("an id map needs `dataset`.", param="id_map", mentions=("dataset",))
    id_map = (
        read_id_map(options.id_map, project.relative(options.id_map))
        if options.id_map is not None
        else {}
    )
    results = _pinned_ids(results, pin, id_map)
    _check_trials(results, pin)
    header, records, end = run_records(
        results,
        run_id=run_id,
        pin=pin,
        spec=f"{IMPORTED_SPEC}{options.format}:{path.name}",
        threshold=options.threshold,
        agent_version=options.agent_version,
        now=now or datetime.now(UTC),
    )
    lines = [
        header.model_dump_json(),
        *(r.model_dump_json() for r in records),
        end.model_dump_json(),
    ]
    atomic_write_bytes(out, ("\n".join(lines) + "\n").encode("utf-8"))
    return RunImportReport(
        run_id=run_id,
        path=project.relative(out),
        dataset_ref=pin.ref,
        trials=len(records),
        passed=end.passed,
        cases=len(header.case_ids),
        k=header.k,
    )
