"""`casework judge certify`: the judge's verdicts against people's, per slice and check kind.

Positive = the check passes: ``tp`` human pass and judge pass, ``fn`` human pass and judge fail,
``tn`` human fail and judge fail, ``fp`` human fail and judge pass. TPR = tp / (tp + fn) and
TNR = tn / (tn + fp), each with an interval (Wilson by default) that counts reviewed cases as the
unit when people saw several trials of one case (a judge misreading a case misreads its trials);
admissible only when both lower bounds reach the thresholds of ``[thresholds]``. Every certification is pinned to the judge model,
prompt version and rubric digest the verdicts were given under.

With repeated verdicts (``samples`` ≥ 2, given by a ``resample`` function that asks the judge
again on each reviewed item) the **flip rate** of each pin is the share of items whose repeated
verdicts disagree (an item the judge gave no verdict on in some sample counts as flipped); a pin
whose flip rate exceeds ``[thresholds] judge_max_flip`` is not admissible.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import select

from casework.agreement import kappa_interval
from casework.agreement._rates import (
    Proportion,
    clustered_proportion_interval,
    effective_sample,
    more_needed,
    proportion_interval,
)
from casework.agreement.clustered_kappa import clustered_kappa_interval
from casework.errors import UsageError
from casework.project import Project
from casework.workbench import open_workbench
from casework.workbench.models_judge import JudgeCertificationRow, ReviewItemRow, ReviewVerdictRow

__all__ = [
    "CertificationResult",
    "CertifyReport",
    "Compared",
    "FlipRate",
    "IntervalMethod",
    "Pin",
    "Resampler",
    "Settings",
    "certify_counts",
    "certify_judge",
    "compare",
    "flip_rate",
    "settings_of",
]

IntervalMethod = Literal["wilson", "clopper-pearson"]


@dataclass(frozen=True)
class Settings:
    """Thresholds of a certification (from ``[thresholds]``)."""

    tpr: float = 0.8
    tnr: float = 0.8
    confidence: float = 0.95
    method: IntervalMethod = "wilson"
    max_flip: float = 0.1


@dataclass(frozen=True)
class Pin:
    """What a certification holds for: slice, check kind, judge model, prompt, rubric."""

    slice: str
    kind: str
    judge_model: str
    prompt_version: str
    rubric_digest: str


@dataclass(frozen=True)
class Compared:
    """One reviewed item: the judge's verdict (from the run log) and the people's."""

    pin: Pin
    judge_pass: bool
    human_pass: bool
    case_id: str = ""
    """The reviewed reply's case: items of one case are one cluster of the intervals."""
    key: str = ""
    """The item's key (``run_id/case_id/trial/kind[/fact_index]``)."""


Resampler = Callable[[Sequence[ReviewItemRow]], Mapping[str, Sequence[bool | None]]]
"""Asks the judge again on reviewed items: per item key, the verdict of each sample (``None``:
the judge gave none). :func:`casework.runner.judge_samples.judge_resampler` builds one."""


@dataclass(frozen=True)
class FlipRate:
    """How often the judge's repeated verdicts on one pin's items disagree.

    Attributes:
        items: Items asked again.
        flipped: Items whose repeated verdicts are not all the same (or lack one).
        samples: Verdicts asked per item.
    """

    items: int
    flipped: int
    samples: int

    @property
    def rate(self) -> float:
        """``flipped / items`` (1.0 with no items: nothing measured fails closed)."""
        return self.flipped / self.items if self.items else 1.0

    def as_json(self) -> dict[str, object]:
        """JSON form."""
        return {
            "items": self.items,
            "flipped": self.flipped,
            "samples": self.samples,
            "rate": self.rate,
        }


def flip_rate(verdicts: Iterable[Sequence[bool | None]], samples: int) -> FlipRate:
    """The flip rate of items' repeated verdicts (pure).

    An item flips when its verdicts are not all equal, or one is missing (``None``, or fewer
    than ``samples``): a judge that cannot answer the same question twice is not repeatable.

    Example:
        Three items asked three times, one of them answered pass, fail, pass:

        >>> flip_rate([[True, True, True], [True, False, True], [False, False, False]], 3).rate
        0.3333333333333333
    """
    items = flipped = 0
    for row in verdicts:
        items += 1
        if len(row) < samples or any(v is None for v in row) or len(set(row)) > 1:
            flipped += 1
    return FlipRate(items, flipped, samples)


@dataclass(frozen=True)
class CertificationResult:
    """The certification of one :class:`Pin`.

    Attributes:
        pin: Slice, kind, model, prompt version, rubric digest.
        tp: Human pass, judge pass.
        fn: Human pass, judge fail.
        tn: Human fail, judge fail.
        fp: Human fail, judge pass.
        tpr: True-positive rate with its interval.
        tnr: True-negative rate with its interval.
        kappa: Cohen's kappa of judge against people, with its interval (asymptotic over
            items, or clustered by case when ``cases`` are given).
        settings: Thresholds, confidence and interval method.
        current: Pinned to the judge as configured now (else stale).
        cases: ``(tp, fn, tn, fp)`` per reviewed case (empty: each item its own case). The
            intervals of TPR and TNR are clustered by case, and the corrected rate's bootstrap
            resamples these cases.
        flip: The flip rate of repeated verdicts (``None``: not measured).
    """

    pin: Pin
    tp: int
    fn: int
    tn: int
    fp: int
    tpr: Proportion
    tnr: Proportion
    kappa: tuple[float | None, float | None, float | None]
    settings: Settings
    current: bool
    cases: tuple[tuple[int, int, int, int], ...] = ()
    flip: FlipRate | None = None
    kappa_method: str = "asymptotic (Fleiss, Cohen & Everitt)"

    @property
    def admissible(self) -> bool:
        """Both lower bounds reach their thresholds, and a measured flip rate its maximum."""
        return (
            self.tpr.low is not None
            and self.tnr.low is not None
            and self.tpr.low >= self.settings.tpr
            and self.tnr.low >= self.settings.tnr
            and not self.flips_too_often
        )

    @property
    def flips_too_often(self) -> bool:
        """The flip rate was measured and exceeds ``[thresholds] judge_max_flip``."""
        return self.flip is not None and self.flip.rate > self.settings.max_flip

    def more_needed(self) -> dict[str, int | None]:
        """Further human verdicts of each class (``pass``, ``fail``) the lower bounds need.

        0: enough; ``None``: more verdicts at the current agreement never suffice. When people
        reviewed several trials of one case the interval counts cases, so the rule does too:
        the answer is further reviewed *cases* of the class (at the current rate, one verdict
        each), not further trials.
        """
        st = self.settings
        return {
            "pass": self._more(self.tp, self.fn, [(c[0], c[0] + c[1]) for c in self.cases], st.tpr),
            "fail": self._more(self.tn, self.fp, [(c[2], c[2] + c[3]) for c in self.cases], st.tnr),
        }

    def _more(
        self, agree: int, disagree: int, per_case: list[tuple[int, int]], threshold: float
    ) -> int | None:
        st = self.settings
        n = agree + disagree
        if per_case and n:
            effective = effective_sample([x for x, _ in per_case], [m for _, m in per_case])
            # The evidence the interval counts: ``effective`` items at the observed rate.
            n_eff = max(1, math.floor(effective))
            agree, n = round(agree / n * n_eff), n_eff
        return more_needed(agree, n, threshold, confidence=st.confidence, method=st.method)

    def as_json(self) -> dict[str, object]:
        """JSON form (stored in the workbench, printed with ``--format json``)."""

        def rate(p: Proportion) -> dict[str, object]:
            return {"estimate": p.estimate, "low": p.low, "high": p.high, "n": p.n}

        kappa, low, high = self.kappa
        return {
            "slice": self.pin.slice,
            "kind": self.pin.kind,
            "judge_model": self.pin.judge_model,
            "prompt_version": self.pin.prompt_version,
            "rubric_digest": self.pin.rubric_digest,
            "current": self.current,
            "tp": self.tp,
            "fn": self.fn,
            "tn": self.tn,
            "fp": self.fp,
            "n_pass": self.tp + self.fn,
            "n_fail": self.tn + self.fp,
            "tpr": rate(self.tpr),
            "tnr": rate(self.tnr),
            "interval": self.tpr.method,
            "reviewed_cases": len(self.cases)
            if self.cases
            else self.tp + self.fn + self.tn + self.fp,
            "case_counts": [list(c) for c in self.cases],
            "kappa": {"estimate": kappa, "low": low, "high": high},
            "kappa_interval": self.kappa_method,
            "admissible": self.admissible,
            "more_needed": self.more_needed(),
            "flip": None if self.flip is None else self.flip.as_json(),
            "flips_too_often": self.flips_too_often,
        }


def certify_counts(
    pin: Pin,
    tp: int,
    fn: int,
    tn: int,
    fp: int,
    settings: Settings,
    *,
    current: bool,
    cases: Sequence[tuple[int, int, int, int]] = (),
    flip: FlipRate | None = None,
) -> CertificationResult:
    """Rates, intervals and kappa of one pin's counts (pure).

    With ``cases`` (the counts per reviewed case, summing to the totals), TPR and TNR take
    :func:`casework.agreement._rates.clustered_proportion_interval`: several trials of one case
    count as the evidence of one case. Without, each item is its own case. With ``flip`` (the
    flip rate of repeated verdicts), a rate above ``settings.max_flip`` makes it inadmissible.

    Raises:
        ValueError: ``cases`` that do not sum to the totals.
    """
    conf, method = settings.confidence, settings.method
    k = kappa_interval([[tp, fn], [fp, tn]], confidence=settings.confidence)
    if cases:
        if tuple(map(sum, zip(*cases, strict=True))) != (tp, fn, tn, fp):
            raise ValueError("cases: the per-case counts must sum to tp, fn, tn and fp.")
        # Several trials of one case: kappa's interval counts cases too.
        ck = clustered_kappa_interval([[[a, b], [d, c]] for a, b, c, d in cases], confidence=conf)
        return CertificationResult(
            pin=pin,
            tp=tp,
            fn=fn,
            tn=tn,
            fp=fp,
            tpr=clustered_proportion_interval(
                [c[0] for c in cases], [c[0] + c[1] for c in cases], confidence=conf, method=method
            ),
            tnr=clustered_proportion_interval(
                [c[2] for c in cases], [c[2] + c[3] for c in cases], confidence=conf, method=method
            ),
            kappa=(ck.kappa, ck.low, ck.high),
            settings=settings,
            current=current,
            cases=tuple(cases),
            flip=flip,
            kappa_method=ck.method,
        )
    return CertificationResult(
        pin=pin,
        tp=tp,
        fn=fn,
        tn=tn,
        fp=fp,
        tpr=proportion_interval(tp, tp + fn, confidence=conf, method=method),
        tnr=proportion_interval(tn, tn + fp, confidence=conf, method=method),
        kappa=(k.kappa, k.low, k.high),
        settings=settings,
        current=current,
        flip=flip,
    )


def compare(
    items: Iterable[ReviewItemRow], verdicts: Iterable[ReviewVerdictRow]
) -> tuple[list[Compared], int, int]:
    """Pair each reviewed item's judge verdict with the people's.

    Items whose two people disagree are left out until adjudicated; agreeing people count once.

    Returns:
        ``(compared items, contested items, items from runs without a prompt version)``.
    """
    by_item: dict[str, set[bool]] = {}
    for v in verdicts:
        by_item.setdefault(v.item_key, set()).add(v.human_pass)
    compared: list[Compared] = []
    contested = unpinned = 0
    for item in items:
        answers = by_item.get(item.key)
        if not answers:
            continue
        if len(answers) > 1:
            contested += 1
            continue
        if item.prompt_version is None:
            unpinned += 1
            continue
        pin = Pin(item.slice, item.kind, item.judge_model, item.prompt_version, item.rubric_digest)
        compared.append(Compared(pin, item.judge_pass, answers.pop(), item.case_id, item.key))
    return compared, contested, unpinned


def _tally(compared: Iterable[Compared]) -> dict[Pin, dict[str, list[int]]]:
    """Counts ``[tp, fn, tn, fp]`` per pin and reviewed case."""
    counts: dict[Pin, dict[str, list[int]]] = {}
    for c in compared:
        row = counts.setdefault(c.pin, {}).setdefault(c.case_id, [0, 0, 0, 0])
        index = (0 if c.judge_pass else 1) if c.human_pass else (3 if c.judge_pass else 2)
        row[index] += 1
    return counts


@dataclass(frozen=True)
class CertifyReport:
    """What `casework judge certify` measured.

    Attributes:
        results: One certification per pin found, current ones first.
        contested: Items left out because their two people disagree (adjudicate them first).
        unpinned: Items from runs that recorded no prompt version (never certify a judge).
        settings: Thresholds, confidence and interval method.
        judge: The judge as configured now: ``model`` and ``prompt_version``.
        samples: Verdicts asked per reviewed item for the flip rate (1: not measured).
    """

    results: tuple[CertificationResult, ...]
    contested: int
    unpinned: int
    settings: Settings
    judge: Mapping[str, str | None]
    samples: int = 1

    def as_json(self) -> dict[str, object]:
        """JSON form (``--format json``)."""
        st = self.settings
        return {
            "method": st.method,
            "confidence": st.confidence,
            "thresholds": {"tpr": st.tpr, "tnr": st.tnr, "max_flip": st.max_flip},
            "judge": dict(self.judge),
            "samples": self.samples,
            "excluded": {"contested": self.contested, "unpinned": self.unpinned},
            "certifications": [r.as_json() for r in self.results],
        }


def settings_of(project: Project) -> Settings:
    """The certification thresholds of ``[thresholds]``."""
    t = project.config.thresholds
    return Settings(
        t.judge_tpr, t.judge_tnr, t.judge_confidence, t.judge_interval, t.judge_max_flip
    )


def certify_judge(
    project: Project,
    *,
    judge_model: str | None,
    prompt_version: str,
    rubric_digests: Mapping[str, str],
    slices: Sequence[str] = (),
    now: datetime | None = None,
    save: bool = True,
    resample: Resampler | None = None,
    samples: int = 1,
) -> CertifyReport:
    """Certify the judge on every pin people's verdicts cover, and store the certifications.

    Args:
        project: The project.
        judge_model: The configured judge's model (``None``: none configured; all are stale).
        prompt_version: The current prompt version.
        rubric_digests: The current rubric digest per slice.
        slices: Only these slices (default: every slice reviewed).
        now: Time stamp of the stored certifications (injected by tests).
        save: Store them in the workbench (what makes a judge admissible).
        resample: Asks the judge again on the reviewed items (needed when ``samples`` ≥ 2).
        samples: Verdicts to ask per reviewed item for the flip rate (1: not measured).

    Raises:
        UsageError: ``samples`` below 1, or ≥ 2 without ``resample``.
    """
    if samples < 1:
        raise UsageError(f"must be at least 1. Got {samples}.", param="samples")
    if samples >= 2 and resample is None:
        raise UsageError(
            "repeated verdicts need a judge to ask; configure [models.judge].", param="samples"
        )
    settings = settings_of(project)
    with open_workbench(project) as wb, wb.session() as s:
        items = s.scalars(select(ReviewItemRow)).all()
        verdicts = s.scalars(select(ReviewVerdictRow)).all()
        compared, contested, unpinned = compare(
            [i for i in items if not slices or i.slice in slices], verdicts
        )
        repeated: Mapping[str, Sequence[bool | None]] = {}
        if samples >= 2 and resample is not None:
            keys = {c.key for c in compared}
            repeated = resample([i for i in items if i.key in keys])
        results = []
        for pin, by_case in sorted(_tally(compared).items(), key=lambda kv: _order(kv[0])):
            per_case = [(a, b, c, d) for _, (a, b, c, d) in sorted(by_case.items())]
            tp, fn, tn, fp = (sum(col) for col in zip(*per_case, strict=True))
            current = pin == Pin(
                pin.slice,
                pin.kind,
                judge_model or "",
                prompt_version,
                rubric_digests.get(pin.slice, ""),
            )
            flip = None
            if samples >= 2:
                rows = [repeated.get(c.key, ()) for c in compared if c.pin == pin]
                flip = flip_rate(rows, samples)
            results.append(
                certify_counts(
                    pin, tp, fn, tn, fp, settings, current=current, cases=per_case, flip=flip
                )
            )
        results.sort(key=lambda r: not r.current)
        at = now or datetime.now(UTC)
        if save:
            s.add_all(_row(r, at) for r in results)
    judge = {"model": judge_model, "prompt_version": prompt_version}
    return CertifyReport(tuple(results), contested, unpinned, settings, judge, samples)


def _order(pin: Pin) -> tuple[str, ...]:
    return (pin.slice, pin.kind, pin.judge_model, pin.prompt_version, pin.rubric_digest)


def _row(result: CertificationResult, at: datetime) -> JudgeCertificationRow:
    pin = result.pin
    report = result.as_json() | {
        "method": result.settings.method,
        "confidence": result.settings.confidence,
        "thresholds": {
            "tpr": result.settings.tpr,
            "tnr": result.settings.tnr,
            "max_flip": result.settings.max_flip,
        },
    }
    return JudgeCertificationRow(
        slice=pin.slice,
        kind=pin.kind,
        judge_model=pin.judge_model,
        prompt_version=pin.prompt_version,
        rubric_digest=pin.rubric_digest,
        tp=result.tp,
        fn=result.fn,
        tn=result.tn,
        fp=result.fp,
        admissible=result.admissible,
        created_at=at,
        report=report,
    )
