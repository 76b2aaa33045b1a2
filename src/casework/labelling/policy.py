"""The assignment policy: who labels which row, as pure functions (no I/O, fully deterministic).

Every row of a slice goes to two labellers until the slice's kappa reaches the gate over enough
double-labelled rows (:func:`is_calibrated`); after that a content-independent share of rows, drawn
by a hash of (salt, case id) (:func:`audit_draw`), keeps a second labeller. Disagreements go to a
third person who labelled neither. Entry points: :func:`plan_labelling`, :func:`plan_adjudication`.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from casework.labelling.model import OverlapReason, Role

__all__ = [
    "AssignmentPlan",
    "Contested",
    "PlannedAssignment",
    "QueueRow",
    "Skipped",
    "audit_draw",
    "is_calibrated",
    "keeps_second_label",
    "plan_adjudication",
    "plan_labelling",
]


@dataclass(frozen=True)
class QueueRow:
    """A case waiting for labels.

    Attributes:
        case_id: The case.
        slice: Its slice (calibration is per slice).
    """

    case_id: str
    slice: str


@dataclass(frozen=True)
class Contested:
    """A case whose labellers disagree, waiting for an adjudicator.

    Attributes:
        case_id: The case.
        slice: Its slice.
        labellers: Everyone who labelled it in this round (none of them may adjudicate).
    """

    case_id: str
    slice: str
    labellers: tuple[str, ...]


@dataclass(frozen=True)
class PlannedAssignment:
    """One assignment the policy decided.

    Attributes:
        case_id: The case.
        slice: Its slice.
        labeller: Who gets it.
        role: ``first``, ``second`` or ``adjudicator``.
        overlap_reason: ``calibration`` or ``audit`` for a second label, ``disagreement`` for an
            adjudicator, ``None`` for a first label.
    """

    case_id: str
    slice: str
    labeller: str
    role: Role
    overlap_reason: OverlapReason | None


@dataclass(frozen=True)
class Skipped:
    """A case the policy could not assign, and why.

    Attributes:
        case_id: The case.
        reason: One sentence.
    """

    case_id: str
    reason: str


@dataclass(frozen=True)
class AssignmentPlan:
    """What the policy decided for a batch of rows.

    Attributes:
        assignments: The assignments, in case-id order.
        skipped: Cases left unassigned, with reasons.
    """

    assignments: tuple[PlannedAssignment, ...] = ()
    skipped: tuple[Skipped, ...] = ()

    def load(self) -> Counter[str]:
        """Assignments per labeller in this plan."""
        return Counter(a.labeller for a in self.assignments)


def _unit_hash(*parts: str) -> float:
    digest = hashlib.sha256("\0".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def audit_draw(case_id: str, salt: str) -> float:
    """A number in [0, 1) fixed by (salt, case id) alone: never by the row's content.

    ``sha256(salt + NUL + case_id)``, first 8 bytes as a big-endian integer, divided by 2**64.
    Changing the salt draws a new, independent sample.
    """
    return _unit_hash(salt, case_id)


def keeps_second_label(case_id: str, salt: str, share: float) -> bool:
    """Whether a row of a calibrated slice keeps a second labeller (random audit).

    True for a ``share`` of case ids in expectation: exactly those whose :func:`audit_draw` falls
    below ``share``. The same (salt, id) always gives the same answer.
    """
    return audit_draw(case_id, salt) < share


def is_calibrated(rows: int, kappa: float | None, *, gate: float, min_rows: int) -> bool:
    """Whether a slice has left full double labelling.

    It has when its kappa (under the current guideline version) reaches ``gate`` over at least
    ``min_rows`` double-labelled rows. An undefined kappa (every label in one class) never counts,
    and a slice whose kappa falls back below the gate returns to full double labelling.
    """
    return rows >= min_rows and kappa is not None and kappa >= gate


@dataclass
class _Chooser:
    """Picks labellers for a case: fresh people first, then the least loaded, then a stable hash."""

    labellers: tuple[str, ...]
    salt: str
    load: Counter[str] = field(default_factory=Counter)

    def pick(
        self, case_id: str, count: int, excluded: set[str], previous: frozenset[str]
    ) -> list[str] | None:
        candidates = [lab for lab in self.labellers if lab not in excluded]
        if len(candidates) < count:
            return None
        candidates.sort(
            key=lambda lab: (
                lab in previous,
                self.load[lab],
                _unit_hash(self.salt, case_id, lab),
                lab,
            )
        )
        chosen = candidates[:count]
        for lab in chosen:
            self.load[lab] += 1
        return chosen


def plan_labelling(
    rows: Sequence[QueueRow],
    labellers: Sequence[str],
    calibrated: Mapping[str, bool],
    *,
    share: float,
    salt: str,
    load: Mapping[str, int] | None = None,
    taken: Mapping[str, set[str]] | None = None,
    previous: Mapping[str, frozenset[str]] | None = None,
) -> AssignmentPlan:
    """Assign rows waiting for labels to labellers.

    A row of a slice that is not calibrated goes to two people (``second`` with overlap reason
    ``calibration``); a row of a calibrated slice goes to one, plus a second (``audit``) when
    :func:`keeps_second_label` says so. People are chosen among ``labellers`` minus those who
    already hold the case in this round (``taken``): first those who never labelled it in an earlier
    round (``previous``), then the least loaded, ties broken by a hash of (salt, case id, labeller).
    Rows are taken in case-id order, so the plan depends only on the inputs.

    Args:
        rows: Cases to assign.
        labellers: Who may be assigned.
        calibrated: Per slice, whether it has left full double labelling (missing: not yet).
        share: Share of calibrated rows that keep a second labeller.
        salt: Salt of the audit draw and of tie-breaking.
        load: Open assignments each labeller already has (for balancing).
        taken: Per case, people already holding it in this round (never assigned again).
        previous: Per case, people who labelled it under an earlier guideline version.
    """
    chooser = _Chooser(tuple(labellers), salt, Counter(load or {}))
    taken = taken or {}
    previous = previous or {}
    out: list[PlannedAssignment] = []
    skipped: list[Skipped] = []
    for row in sorted(rows, key=lambda r: r.case_id):
        double = not calibrated.get(row.slice, False)
        reason: OverlapReason | None = "calibration" if double else None
        if not double and keeps_second_label(row.case_id, salt, share):
            double, reason = True, "audit"
        excluded = set(taken.get(row.case_id, set()))
        chosen = chooser.pick(
            row.case_id, 2 if double else 1, excluded, previous.get(row.case_id, frozenset())
        )
        if chosen is None:
            free = len([lab for lab in labellers if lab not in excluded])
            need = "two labellers" if double else "a labeller"
            why = f"({reason} overlap) " if double else ""
            skipped.append(
                Skipped(
                    row.case_id,
                    f"needs {need} {why}but only {free} of the given labellers may take it",
                )
            )
            continue
        out.append(PlannedAssignment(row.case_id, row.slice, chosen[0], "first", None))
        if double:
            out.append(PlannedAssignment(row.case_id, row.slice, chosen[1], "second", reason))
    return AssignmentPlan(tuple(out), tuple(skipped))


def plan_adjudication(
    contested: Sequence[Contested],
    labellers: Sequence[str],
    *,
    salt: str,
    load: Mapping[str, int] | None = None,
    taken: Mapping[str, set[str]] | None = None,
) -> AssignmentPlan:
    """Give each disagreement to a third person who labelled neither side.

    The adjudicator is chosen among ``labellers`` minus the case's labellers and anyone already
    holding it (``taken``): the least loaded first, ties broken by a hash of (salt, case id,
    labeller). A case nobody may adjudicate is skipped with the reason.
    """
    chooser = _Chooser(tuple(labellers), salt, Counter(load or {}))
    taken = taken or {}
    out: list[PlannedAssignment] = []
    skipped: list[Skipped] = []
    for row in sorted(contested, key=lambda r: r.case_id):
        excluded = set(row.labellers) | set(taken.get(row.case_id, set()))
        chosen = chooser.pick(row.case_id, 1, excluded, frozenset())
        if chosen is None:
            skipped.append(
                Skipped(
                    row.case_id,
                    "needs an adjudicator who labelled neither side "
                    f"({', '.join(sorted(row.labellers))}); name a third labeller",
                )
            )
            continue
        out.append(
            PlannedAssignment(row.case_id, row.slice, chosen[0], "adjudicator", "disagreement")
        )
    return AssignmentPlan(tuple(out), tuple(skipped))
