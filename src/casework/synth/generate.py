"""`casework synth`: make variants of a slice's seed cases, within the synthetic cap, and release them.

Entry point: :func:`synthesize` (returns a :class:`SynthResult`; writes a new dataset release
unless ``dry_run``). Reproducible: the same dataset, seed and scripted replies give the same bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from pydantic import ValidationError

from casework.dataset import load_dataset, parse_ref, release
from casework.errors import UsageError
from casework.llm import LLMClient, client_for
from casework.llm.accounting import Ledger
from casework.llm.client import Client
from casework.project import Project
from casework.schema import Case, Generator, Situation, VersionRecord
from casework.synth.cap import synthetic_budget
from casework.synth.registry import get_transform
from casework.synth.transforms import Skip, Transform, TransformContext
from casework.synth.variants import (
    build_variant,
    check_variant,
    siblings_of,
    validation_reason,
    variant_id,
)

__all__ = ["Rejection", "SynthResult", "family_warning", "synthesize"]


@dataclass(frozen=True)
class Rejection:
    """A variant that was not kept, and why (near-duplicate, lost a fact, not applicable…)."""

    variant_id: str
    reason: str


@dataclass
class SynthResult:
    """What one `casework synth` did.

    Attributes:
        dataset: Dataset name.
        created: New variant cases, in id order.
        rejected: Variants not kept, with the reason.
        capped: Per slice, variants not generated because the slice reached the synthetic cap.
        limited: Variants not generated because of ``--limit``.
        warnings: Sentences for the user (family match, cap reached).
        version: The release written, or ``None`` (dry run, or nothing new).
        ledger: Model requests, tokens and cost.
    """

    dataset: str
    created: list[Case] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    capped: dict[str, int] = field(default_factory=dict)
    limited: int = 0
    warnings: list[str] = field(default_factory=list)
    version: VersionRecord | None = None
    ledger: Ledger = field(default_factory=Ledger)

    @property
    def to_labelling(self) -> list[str]:
        """Ids of new variants created without a label: they wait in the labelling queue."""
        return [c.id for c in self.created if c.label is None]


@dataclass
class _Job:
    seed: Case
    transform: Transform
    indices: list[int]


def family_warning(generator_family: str | None, agent_family: str | None) -> str | None:
    """A warning when the generator model is of the agent's own family (its paraphrases are easier)."""
    if generator_family and agent_family and generator_family.lower() == agent_family.lower():
        return (
            f"the generator model's family '{generator_family}' is the agent's own "
            "([agent] family): its rewrites read easier to the agent than real users do; prefer "
            "a generator from another family"
        )
    return None


def _seeds(cases: Sequence[Case], slice_name: str | None, dataset: str) -> list[Case]:
    if slice_name is not None and not any(c.slice == slice_name for c in cases):
        known = ", ".join(sorted({c.slice for c in cases})) or "none"
        raise UsageError(
            f"dataset '{dataset}' has no slice '{slice_name}' (slices: {known}).",
            param="slice",
        )
    return sorted(
        (
            c
            for c in cases
            if c.source != "synthetic"
            and c.split != "smoke"
            and (slice_name is None or c.slice == slice_name)
        ),
        key=lambda c: c.id,
    )


def _generator_for(transform: Transform, client: LLMClient | None) -> Generator:
    spec = transform.spec
    if spec.method == "llm" and client is not None:
        return Generator(model=client.model, prompt_version=spec.version, family=client.family)
    return Generator(model="rules", prompt_version=spec.version)


def synthesize(
    project: Project,
    dataset: str,
    transforms: Sequence[str],
    *,
    slice_name: str | None = None,
    per_case: int | None = None,
    limit: int | None = None,
    client: LLMClient | None = None,
    ledger: Ledger | None = None,
    dry_run: bool = False,
) -> SynthResult:
    """Make variants of the seed cases and release them as a new dataset version.

    Seeds are the non-synthetic cases of the slice (all slices when ``slice_name`` is ``None``),
    except retired `smoke` ones; label-preserving transforms also skip unlabelled seeds. Each
    seed gets up to ``per_case`` variants per transform (ids already present are kept, not
    remade); seeds are taken in id order, each with every requested transform in turn. Generation stops at the per-slice synthetic cap (`thresholds.synthetic_cap`) and at
    ``limit`` new variants.

    Args:
        project: The project.
        dataset: Dataset name (the working tree; a release is written on top of it).
        transforms: Transform names, applied in this order.
        slice_name: Only seeds of this slice.
        per_case: Variants per seed and transform (default `[synth] per_case`).
        limit: At most this many new variants.
        client: Generator model for LLM transforms (default: `[models.generator]`).
        ledger: Where model usage is counted (default: a new one, in the result).
        dry_run: Generate and check, but write nothing.

    Raises:
        UsageError: Unknown transform or slice, bad counts, or a ``@version`` reference.
        LLMError: The generator model failed.
    """
    name, version = parse_ref(dataset)
    if version is not None:
        raise UsageError(
            f"'{dataset}': synth adds a release on top of the working tree; name the dataset "
            "without @version."
        )
    per_case = per_case if per_case is not None else project.config.synth.per_case
    if per_case < 1:
        raise UsageError(f"must be at least 1. Got {per_case}.", param="per_case")
    if limit is not None and limit < 0:
        raise UsageError(f"must be 0 or more. Got {limit}.", param="limit")
    if not transforms:
        raise UsageError("name at least one transform.", param="transform")
    chosen = [get_transform(t) for t in dict.fromkeys(transforms)]
    result = SynthResult(dataset=name, ledger=ledger if ledger is not None else Ledger())
    ds = load_dataset(project, name)
    seeds = _seeds(ds.cases, slice_name, name)

    owned: Client | None = None
    if any(t.spec.method == "llm" for t in chosen):
        if client is None:
            owned = client = client_for(project, "generator", ledger=result.ledger)
        elif ledger is None and isinstance(client, Client):
            result.ledger = client.ledger
        warning = family_warning(client.family, project.config.agent.family)
        if warning:
            result.warnings.append(warning)

    jobs: list[_Job] = []
    existing_ids = {c.id for c in ds.cases}
    for seed in seeds:
        for transform in chosen:
            if transform.spec.preserves_label and seed.label is None:
                result.rejected.append(
                    Rejection(
                        variant_id(seed.id, transform.spec.name, 1),
                        "seed is unlabelled: nothing to preserve (label it first)",
                    )
                )
                continue
            todo = [
                n
                for n in range(1, per_case + 1)
                if variant_id(seed.id, transform.spec.name, n) not in existing_ids
            ]
            if todo:
                jobs.append(_Job(seed, transform, todo))

    try:
        _run_jobs(project, jobs, ds.cases, client, limit, result)
    finally:
        if owned is not None:
            owned.close()
    result.created.sort(key=lambda c: c.id)

    if result.created and not dry_run:
        result.version = release(
            project,
            name,
            [*ds.cases, *result.created],
            _message(chosen, slice_name),
            changes=_changes(result),
            base=ds.hash,  # generation may take long; the lock is held only to release
        )
    return result


def _run_jobs(
    project: Project,
    jobs: list[_Job],
    cases: list[Case],
    client: LLMClient | None,
    limit: int | None,
    result: SynthResult,
) -> None:
    """Generate in waves sized to the remaining budget; accept in job order (deterministic)."""
    cap = project.config.thresholds.synthetic_cap
    totals = Counter(c.slice for c in cases)
    synthetic = Counter(c.slice for c in cases if c.source == "synthetic")
    budget = {s: synthetic_budget(synthetic[s], totals[s], cap) for s in totals}
    remaining_limit = limit
    workers = client.max_concurrency if client is not None else 1
    accepted: list[Case] = []
    pending = list(jobs)
    id_patterns = dict(project.config.privacy.id_patterns)
    while pending:
        wave: list[_Job] = []
        planned: Counter[str] = Counter()
        planned_total = 0
        rest: list[_Job] = []
        for job in pending:
            room = budget[job.seed.slice]
            free = None if room is None else room - planned[job.seed.slice]
            if remaining_limit is not None:
                free_limit = remaining_limit - planned_total
                free = free_limit if free is None else min(free, free_limit)
            take = len(job.indices) if free is None else max(0, min(free, len(job.indices)))
            if take == 0:
                rest.append(job)
                continue
            wave.append(_Job(job.seed, job.transform, job.indices[:take]))
            if take < len(job.indices):
                rest.append(_Job(job.seed, job.transform, job.indices[take:]))
            planned[job.seed.slice] += take
            planned_total += take
        if not wave:
            for job in rest:
                if remaining_limit is not None and remaining_limit <= 0:
                    result.limited += len(job.indices)
                else:
                    result.capped[job.seed.slice] = result.capped.get(job.seed.slice, 0) + len(
                        job.indices
                    )
            break
        contexts = [
            TransformContext(
                seed=project.config.synth.seed,
                client=client,
                id_patterns=id_patterns,
                existing=list(
                    siblings_of(job.seed.id, job.transform.spec.name, [*cases, *accepted]).values()
                ),
            )
            for job in wave
        ]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outputs = list(
                pool.map(
                    lambda jc: jc[0].transform.make(jc[0].seed, jc[0].indices, jc[1]),
                    zip(wave, contexts, strict=True),
                )
            )
        for job, made in zip(wave, outputs, strict=True):
            for n, item in zip(job.indices, made, strict=True):
                if _accept(
                    job, n, item, [*cases, *accepted], id_patterns, client, result, accepted
                ):
                    if budget[job.seed.slice] is not None:
                        budget[job.seed.slice] = (budget[job.seed.slice] or 0) - 1
                    if remaining_limit is not None:
                        remaining_limit -= 1
        pending = rest
    for slice_name, count in sorted(result.capped.items()):
        result.warnings.append(
            f"slice '{slice_name}' reached the synthetic cap of {cap:.0%} "
            f"(thresholds.synthetic_cap): {count} variant(s) not generated"
        )
    result.created.extend(accepted)


def _accept(
    job: _Job,
    n: int,
    item: Situation | Skip,
    known: list[Case],
    id_patterns: dict[str, str],
    client: LLMClient | None,
    result: SynthResult,
    accepted: list[Case],
) -> bool:
    spec = job.transform.spec
    vid = variant_id(job.seed.id, spec.name, n)
    if isinstance(item, Skip):
        result.rejected.append(Rejection(vid, item.reason))
        return False
    siblings = siblings_of(job.seed.id, spec.name, known)
    reason = check_variant(job.seed, item, spec, siblings, id_patterns)
    if reason is not None:
        result.rejected.append(Rejection(vid, reason))
        return False
    try:
        case = build_variant(job.seed, item, spec, n, _generator_for(job.transform, client))
    except ValidationError as exc:
        result.rejected.append(Rejection(vid, validation_reason(exc)))
        return False
    accepted.append(case)
    return True


def _message(transforms: Sequence[Transform], slice_name: str | None) -> str:
    names = ", ".join(t.spec.name for t in transforms)
    where = f"slice {slice_name}" if slice_name else "all slices"
    return f"synth: {names} variants of {where}"


def _changes(result: SynthResult) -> list[str]:
    by_key = Counter(
        (c.provenance.transform or "?", c.slice, c.label is not None) for c in result.created
    )
    lines = []
    for (transform, slice_name, labelled), count in sorted(by_key.items()):
        state = "label kept from the seed" if labelled else "without a label, for labelling"
        lines.append(f"+{count} synthetic {transform} variant(s) in slice {slice_name} ({state})")
    return lines
