"""The simulated user, audited: mechanical checks per trial, people's reviews, quarantine.

Each trial of a case with a ``user_scenario`` is checked mechanically (simple heuristics, each
documented in docs/review.md and on :func:`simulator_findings`), and people's settled
``trajectory`` reviews whose fault is ``simulated_user`` count too. A case's simulator error
rate is the share of its trials with either; a slice's rate is pooled over its cases with a
case-level interval (:func:`casework.agreement._rates.clustered_proportion_interval`). A case
whose rate is above ``[thresholds] simulator_max_error`` is quarantined from gating until its
scenario changes (a new release) and a new run clears it.

A review counts only while it is current: made on the same scenario (its digest) and the same
simulator (model and prompt version) as this run's trials of the case. Otherwise it is stale,
as a changed judge invalidates its certification, and is reported as such.

Entry points: :func:`simulator_findings`, :func:`settled_reviews`, :func:`audit_simulator`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import select

from casework.agreement._rates import Proportion, clustered_proportion_interval
from casework.project import Project
from casework.runner.records import LoadedRun, TrialRecord
from casework.schema import Case, UserScenario
from casework.workbench import open_workbench
from casework.workbench.db import workbench_exists
from casework.workbench.models_review import ReviewTaskRow

__all__ = [
    "SimFinding",
    "SimulatorAudit",
    "audit_simulator",
    "reviews_agree",
    "scenario_digest",
    "settled_reviews",
    "simulator_findings",
]

TRAJECTORY = "trajectory"
"""Name of the review kind whose reviews the audit reads."""
REVIEW, ADJUDICATE = "review", "adjudicate"
"""Roles of a trajectory item: one reviewer's review, or the adjudication of two."""
SIMULATED_USER = "simulated_user"
"""The fault a review gives the simulated user."""
_REVIEWED = "reviewed: a reviewer blamed the simulated user"

# An identifier: an ISO date, a code with a dash (FL-202, u-ben), a name with a number
# (anya_garcia_5901, gift_card_6276644: τ²'s user and payment ids), an upper-case code with a
# digit (JMO1MG, HAT078: τ²'s reservations and flights), a number of two digits or more (#1234),
# or an upper-case code of three letters or more (SFO).
_IDENT = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b[A-Za-z]+-[A-Za-z0-9]+\b|\b[A-Za-z]+(?:_[A-Za-z]+)*_\d+\b"
    r"|\b(?=[A-Z0-9]{4,}\b)(?=[A-Z0-9]*\d)[A-Z0-9]*[A-Z][A-Z0-9]*\b|#?\b\d{2,}\b|\b[A-Z]{3,}\b"
)
_ONLY_WHEN_ASKED = re.compile(r"only when (?:they are |it is |you are )?asked", re.IGNORECASE)
# The simulator's control tokens (casework's and τ²'s: ###STOP###, ###TRANSFER###,
# ###OUT-OF-SCOPE###) are not things it says to the agent.
_CONTROL = re.compile(r"###[A-Z-]+###")
# Shapes a person cannot work out for themselves: said unprompted with a digit in them (an
# ordinary hyphenated word is no code), they were leaked or made up.
_GIVEN_ONLY = ("dash", "name", "alnum")


def _shape(token: str) -> str:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", token):
        return "date"
    if re.fullmatch(r"[A-Z]{3,}", token):
        return "code"
    if re.fullmatch(r"#?\d+", token):
        return "number"
    if re.fullmatch(r"[A-Z0-9]+", token):
        return "alnum"
    if "_" in token:  # anya_garcia_5901 and anya_garcia_1234 share a shape, gift_card_1 another
        return token.rstrip("0123456789").lower()
    return token.split("-", 1)[0].lower() + "-"  # FL-202 and FL-101 share a shape, u-ben another


def _kind(shape: str) -> str:
    """``dash``, ``name``, ``alnum`` or the shape itself (``date``, ``code``, ``number``)."""
    if shape.endswith("-"):
        return "dash"
    if shape.endswith("_"):
        return "name"
    return shape


def identifiers(text: str) -> set[str]:
    """The identifiers :func:`simulator_findings` compares (see the module's regular expression)."""
    return set(_IDENT.findall(text))


def scenario_digest(scenario: UserScenario | None) -> str | None:
    """A short digest of a user scenario: a review counts only while the scenario is unchanged."""
    if scenario is None:
        return None
    text = json.dumps(scenario.model_dump(mode="json"), sort_keys=True)
    return "s-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class SimFinding:
    """One thing the simulated user (or its scenario) did wrong in one trial.

    Attributes:
        check: ``known_contradicts_goal``, ``revealed_unknown``, ``contradicted_known``,
            ``invented``, ``ignored_instructions``, ``stopped_early``, ``max_turns`` or
            ``reviewed``.
        message: What was seen, with the words at fault.
    """

    check: str
    message: str


def _user_texts(trial: TrialRecord) -> list[str]:
    return [_CONTROL.sub(" ", m.content) for m in trial.trajectory.messages if m.role == "user"]


def _unsupported(trial: TrialRecord, scenario_ids: set[str]) -> list[str]:
    """Identifiers a user message holds that neither the scenario nor an earlier message gave.

    Only codes with a digit of shapes a person cannot work out (:data:`_GIVEN_ONLY`) count: a
    date or an amount may be the user's own arithmetic.
    """
    given = set(scenario_ids)
    found: set[str] = set()
    for m in trial.trajectory.messages:
        if m.role != "user":
            given |= identifiers(m.content)
            continue
        for token in identifiers(_CONTROL.sub(" ", m.content)) - given:
            if _kind(_shape(token)) in _GIVEN_ONLY and any(c.isdigit() for c in token):
                found.add(token)
    return sorted(found)


def _by_shape(tokens: Iterable[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for token in tokens:
        out.setdefault(_shape(token), set()).add(token)
    return out


def _scenario_findings(scenario: UserScenario) -> list[SimFinding]:
    goal = _by_shape(identifiers(scenario.goal))
    known = _by_shape(identifiers(scenario.known_info))
    said, wanted = set(), set()
    for shape, ids in goal.items():
        missing, extra = ids - known.get(shape, set()), known.get(shape, set()) - ids
        if missing and extra:
            said |= extra
            wanted |= missing
    if not said:
        return []
    return [
        SimFinding(
            "known_contradicts_goal",
            f"known_info says {', '.join(sorted(said))} where the goal says "
            f"{', '.join(sorted(wanted))}",
        )
    ]


def simulator_findings(case: Case, trial: TrialRecord) -> list[SimFinding]:
    """The mechanical checks of one trial of a case with a ``user_scenario`` (none without one).

    Identifiers are ISO dates, codes with a dash (``FL-202``, ``u-ben``), numbers of two digits or
    more and upper-case codes (``SFO``); identifiers of one *shape* are the same kind of thing.

    - ``known_contradicts_goal``: for a shape the goal names, ``known_info`` lacks one of the
      goal's identifiers and names another of that shape instead (the user would give the agent
      the wrong one);
    - ``revealed_unknown``: a user message holds an identifier of ``unknown_info``;
    - ``contradicted_known``: a user message holds an identifier of a shape ``known_info`` names
      that is neither in ``known_info`` nor the goal;
    - ``invented``: a user message holds a code with a dash, a name with a number or an upper-case
      code, with a digit in it, that neither the scenario (goal, persona, known and unknown info,
      instructions) nor an earlier message of the conversation gave the user: the simulator
      leaked it from somewhere it must not see (a database, the agent's tools) or made it up;
      identifiers already reported as ``contradicted_known`` are not repeated;
    - ``ignored_instructions``: the instructions say to give details only when asked, and the
      user's first message already holds an identifier of ``known_info`` (the one instruction
      checked: others are left to people);
    - ``stopped_early``: the user wrote the stop token (or τ²'s transfer and out-of-scope
      tokens, which τ² also counts as the user's stop) right after the agent asked a question
      (its last message holds ``?``), before the goal could be reached;
    - ``max_turns``: the conversation ran to ``max_turns`` user turns.
    """
    scenario = case.situation.user_scenario
    if scenario is None or trial.user_sim is None:
        return []
    out = _scenario_findings(scenario)
    said = _user_texts(trial)
    unknown = identifiers(scenario.unknown_info)
    known = identifiers(scenario.known_info)
    allowed = known | identifiers(scenario.goal)
    shapes = {_shape(t) for t in known}
    revealed = sorted({t for text in said for t in identifiers(text) & unknown})
    if revealed:
        out.append(SimFinding("revealed_unknown", f"the user said {', '.join(revealed)}"))
    other = sorted(
        {t for text in said for t in identifiers(text) if _shape(t) in shapes and t not in allowed}
    )
    if other:
        out.append(
            SimFinding("contradicted_known", f"the user said {', '.join(other)}, not in known_info")
        )
    scenario_ids = allowed | unknown | identifiers(scenario.persona)
    scenario_ids |= identifiers(scenario.instructions)
    invented = [t for t in _unsupported(trial, scenario_ids) if t not in other]
    if invented:
        out.append(
            SimFinding(
                "invented",
                f"the user said {', '.join(invented)}, which neither its scenario nor the "
                "conversation gave it",
            )
        )
    if _ONLY_WHEN_ASKED.search(scenario.instructions) and said and identifiers(said[0]) & known:
        out.append(
            SimFinding(
                "ignored_instructions",
                "the instructions say to give details only when asked; the first message gave "
                + ", ".join(sorted(identifiers(said[0]) & known)),
            )
        )
    stop = trial.user_sim.stop
    if stop == "user_stop":
        agent = [m.content for m in trial.trajectory.messages if m.role == "assistant"]
        if agent and "?" in agent[-1]:
            out.append(SimFinding("stopped_early", "the user stopped after the agent asked"))
    if stop == "max_turns":
        out.append(SimFinding("max_turns", f"ran to max_turns ({scenario.max_turns})"))
    return out


class _ReviewRow(Protocol):
    """What :func:`settled_reviews` reads of a stored item (a row, or a ``ReviewTask``)."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def slice(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def decision(self) -> str | None: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...
    @property
    def data(self) -> Mapping[str, Any] | None: ...


def reviews_agree(a: Mapping[str, Any], b: Mapping[str, Any], tolerance: int) -> bool:
    """Whether two reviews agree.

    They agree when both marked no step, or steps within ``tolerance`` with the same category and
    fault (``a`` and ``b`` are stored decision data; no ``step`` for ``none``).
    """
    if "step" not in a or "step" not in b:
        return "step" not in a and "step" not in b
    return (
        abs(int(a["step"]) - int(b["step"])) <= tolerance
        and a["category"] == b["category"]
        and a["fault"] == b["fault"]
    )


def trial_of(subject: str) -> str:
    """The trial (``run_id/case_id/trial``) a trajectory item's subject is about."""
    return subject.rpartition("#")[0]


@dataclass(frozen=True)
class SettledReview:
    """What a trial's reviews settled on (an adjudication, agreeing reviews, or a single one).

    Attributes:
        trial: ``run_id/case_id/trial``.
        case_id: The case.
        slice: The case's slice.
        decision: ``fail`` or ``none``.
        data: The decision's data (step, category, severity, fault, taxonomy).
        scenario_digest: Digest of the user scenario reviewed (``None``: no simulated user).
        simulator: ``(model, prompt_version)`` of the simulated user, if any.
    """

    trial: str
    case_id: str
    slice: str | None
    decision: str
    data: Mapping[str, Any]
    scenario_digest: str | None
    simulator: tuple[str, str] | None

    @property
    def blames_simulator(self) -> bool:
        """The review found a failing step whose fault is the simulated user."""
        return self.decision == "fail" and self.data.get("fault") == SIMULATED_USER


def _chosen(held: Sequence[_ReviewRow]) -> _ReviewRow | None:
    final = [t for t in held if t.payload.get("role") == ADJUDICATE]
    if final:
        return max(final, key=lambda t: t.id)
    reviews = sorted((t for t in held if t.payload.get("role") == REVIEW), key=lambda t: t.id)
    if len(reviews) == 1 and not reviews[0].payload.get("double"):
        return reviews[0]
    if len(reviews) == 2:
        a, b = (dict(r.data or {}) if r.decision == "fail" else {} for r in reviews)
        if reviews_agree(a, b, int(reviews[0].payload.get("tolerance", 1))):
            return reviews[0]
    return None


def settled_reviews(rows: Iterable[_ReviewRow]) -> list[SettledReview]:
    """Each reviewed trial's settled review.

    An adjudication settles a trial; else agreeing reviews, else a single undoubled review. A
    doubled trial whose reviews are not both in, or disagree with no adjudication yet, is left out.
    """
    by_trial: dict[str, list[_ReviewRow]] = {}
    for t in rows:
        if t.kind == TRAJECTORY and t.status == "decided":
            by_trial.setdefault(trial_of(t.subject), []).append(t)
    out = []
    for trial, held in sorted(by_trial.items()):
        chosen = _chosen(held)
        if chosen is None or chosen.decision is None:
            continue
        sim = chosen.payload.get("simulator")
        out.append(
            SettledReview(
                trial=trial,
                case_id=chosen.payload["case_id"],
                slice=chosen.slice,
                decision=chosen.decision,
                data=dict(chosen.data or {}),
                scenario_digest=chosen.payload.get("scenario_digest"),
                simulator=(sim["model"], sim["prompt_version"]) if sim else None,
            )
        )
    return out


@dataclass(frozen=True)
class CaseAudit:
    """The simulated user's record on one case in one run.

    Attributes:
        case_id: The case.
        slice: Its slice.
        trials: Trials with a simulated user.
        flagged: Trials with a mechanical finding or a current review blaming the simulator.
        reasons: Each finding or review, counted over the trials (``check: message``).
        stale_reviews: Reviews left out: made on another scenario or simulator.
    """

    case_id: str
    slice: str
    trials: int
    flagged: int
    reasons: dict[str, int]
    stale_reviews: int = 0

    @property
    def rate(self) -> float:
        """``flagged / trials``."""
        return self.flagged / self.trials if self.trials else 0.0


@dataclass(frozen=True)
class SimulatorAudit:
    """The simulated user's error rate in one run, per case and per slice, and the quarantine.

    Attributes:
        threshold: ``[thresholds] simulator_max_error``.
        cases: Per case with a simulated user.
        slices: Per slice: the pooled rate with its case-level interval.
        quarantined: Case ids whose rate is above the threshold.
        stale_reviews: Reviews left out as stale, over all cases.
    """

    threshold: float
    cases: dict[str, CaseAudit] = field(default_factory=dict)
    slices: dict[str, Proportion] = field(default_factory=dict)
    quarantined: tuple[str, ...] = ()
    stale_reviews: int = 0

    def why(self, case_id: str) -> str:
        """Why a case is quarantined, in one line."""
        c = self.cases[case_id]
        reasons = "; ".join(f"{k} ({n} of {c.trials})" for k, n in sorted(c.reasons.items()))
        return (
            f"case {case_id}: simulated user erred in {c.flagged} of {c.trials} trials "
            f"({c.rate:.0%} > {self.threshold:.0%}): {reasons}"
        )

    def as_json(self) -> dict[str, Any]:
        """JSON-ready figures."""
        return {
            "threshold": self.threshold,
            "quarantined": list(self.quarantined),
            "stale_reviews": self.stale_reviews,
            "slices": {
                s: {
                    "errors": p.successes,
                    "trials": p.n,
                    "rate": p.estimate,
                    "low": p.low,
                    "high": p.high,
                }
                for s, p in sorted(self.slices.items())
            },
            "cases": {
                cid: {"trials": c.trials, "flagged": c.flagged, "reasons": c.reasons}
                for cid, c in sorted(self.cases.items())
            },
        }


def _reviews_of(project: Project, dataset: str) -> list[SettledReview]:
    if not workbench_exists(project):
        return []
    with open_workbench(project) as wb, wb.session() as s:
        rows = list(
            s.scalars(
                select(ReviewTaskRow).where(
                    ReviewTaskRow.kind == TRAJECTORY,
                    ReviewTaskRow.dataset == dataset,
                    ReviewTaskRow.status == "decided",
                )
            )
        )
        return settled_reviews(rows)


def audit_cases(
    run: LoadedRun,
    cases: Sequence[Case],
    reviews: Sequence[SettledReview],
    threshold: float,
    confidence: float = 0.95,
) -> SimulatorAudit:
    """The audit of ``run`` on ``cases`` with people's settled ``reviews`` (pure: no I/O)."""
    by_id = {c.id: c for c in cases}
    trials: dict[str, list[TrialRecord]] = {}
    for t in run.trials:
        case = by_id.get(t.case_id)
        if case is not None and case.situation.user_scenario is not None and t.user_sim:
            trials.setdefault(t.case_id, []).append(t)
    reviewed: dict[str, list[SettledReview]] = {}
    for r in reviews:
        reviewed.setdefault(r.case_id, []).append(r)
    audits: dict[str, CaseAudit] = {}
    for cid, held in sorted(trials.items()):
        case = by_id[cid]
        digest = scenario_digest(case.situation.user_scenario)
        sims = {(t.user_sim.model, t.user_sim.prompt_version) for t in held if t.user_sim}
        current = [
            r for r in reviewed.get(cid, ()) if r.scenario_digest == digest and r.simulator in sims
        ]
        stale = len(reviewed.get(cid, ())) - len(current)
        blamed_here = {r.trial for r in current if r.blames_simulator}
        reasons: dict[str, int] = {}
        flagged = 0
        for t in held:
            found = simulator_findings(case, t)
            key = f"{run.header.run_id}/{cid}/{t.trial}"
            mine = key in blamed_here
            for f in found:
                name = f"{f.check}: {f.message}"
                reasons[name] = reasons.get(name, 0) + 1
            if mine:
                reasons[_REVIEWED] = reasons.get(_REVIEWED, 0) + 1
            flagged += bool(found) or mine
        # Reviews of the same scenario and simulator in other runs count as trials of their own.
        elsewhere = [r for r in current if not r.trial.startswith(run.header.run_id + "/")]
        n_extra = len(elsewhere)
        bad_extra = sum(r.blames_simulator for r in elsewhere)
        if bad_extra:
            name = "reviewed: a reviewer blamed the simulated user (other runs)"
            reasons[name] = reasons.get(name, 0) + bad_extra
        audits[cid] = CaseAudit(
            cid, case.slice, len(held) + n_extra, flagged + bad_extra, reasons, stale
        )
    slices: dict[str, tuple[list[int], list[int]]] = {}
    for a in audits.values():
        x, n = slices.setdefault(a.slice, ([], []))
        x.append(a.flagged)
        n.append(a.trials)
    return SimulatorAudit(
        threshold=threshold,
        cases=audits,
        slices={
            s: clustered_proportion_interval(x, n, confidence=confidence)
            for s, (x, n) in sorted(slices.items())
        },
        quarantined=tuple(cid for cid, a in sorted(audits.items()) if a.rate > threshold),
        stale_reviews=sum(a.stale_reviews for a in audits.values()),
    )


def audit_simulator(project: Project, run: LoadedRun, cases: Sequence[Case]) -> SimulatorAudit:
    """The simulated user's audit of ``run`` on ``cases``, with the project's trajectory reviews.

    The threshold is ``[thresholds] simulator_max_error``.
    """
    reviews = _reviews_of(project, run.header.dataset)
    return audit_cases(run, cases, reviews, project.config.thresholds.simulator_max_error)
