"""`casework review import` (judge-verdict sheets): store people's verdicts (all sheets or none).

It also measures how often two people grading the same reply agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from casework.agreement import cohen_kappa
from casework.agreement.clustered_kappa import clustered_kappa_interval
from casework.errors import InputErrors, Problem
from casework.labelling import sheet_key
from casework.project import Project
from casework.review._names import JUDGE_VERDICT, verdict_subject
from casework.review._sheets import (
    SIGNATURE_FIELD,
    SheetVerdict,
    read_verdict_sheet,
    verdict_signature_matches,
)
from casework.workbench import open_workbench
from casework.workbench.models_judge import ReviewItemRow, ReviewVerdictRow
from casework.workbench.models_review import ReviewTaskRow


@dataclass(frozen=True)
class HumanAgreement:
    """How often two people agree on the pass/fail of the same judge-graded reply.

    Attributes:
        items: Items answered by two people.
        agreeing: Of them, items where both give the same pass/fail.
        kappa: Cohen's kappa of the two people's pass/fail (``None``: undefined or no items).
        low: Lower end of kappa's 95% interval, clustered by case (``None``: undefined).
        high: Upper end.
        method: How the interval was made (``clustered by case (N cases): …``).
    """

    items: int
    agreeing: int
    kappa: float | None
    low: float | None = None
    high: float | None = None
    method: str = ""

    def as_json(self) -> dict[str, object]:
        """JSON form."""
        share = self.agreeing / self.items if self.items else None
        return {
            "items": self.items,
            "agreeing": self.agreeing,
            "share": share,
            "kappa": self.kappa,
            "kappa_low": self.low,
            "kappa_high": self.high,
            "kappa_interval": self.method or None,
        }


@dataclass(frozen=True)
class VerdictImport:
    """What an import stored.

    Attributes:
        stored: Answers stored (new or replacing an earlier answer of the same person).
        replaced: Of them, answers that replaced an earlier one.
        unanswered: Lines left blank (nothing stored for them).
        agreement: Human–human agreement over every stored overlapped item.
    """

    stored: int
    replaced: int
    unanswered: int
    agreement: HumanAgreement

    def as_json(self) -> dict[str, object]:
        """JSON form (``--format json``)."""
        return {
            "stored": self.stored,
            "replaced": self.replaced,
            "unanswered": self.unanswered,
            "human_agreement": self.agreement.as_json(),
        }


@dataclass
class _Checks:
    """What the import has seen so far: answered pairs, each sheet's reviewer, the signing key."""

    key: bytes | None
    seen: dict[tuple[str, str], str]
    owners: dict[str, tuple[str, int]]


def _identity_problems(entry: SheetVerdict, item: ReviewItemRow, checks: _Checks) -> list[Problem]:
    """The line must name its own reviewer: the sheet's one, with the signature made for them."""
    at = (entry.path, entry.line)
    owner, first = checks.owners.setdefault(entry.path, (entry.reviewer, entry.line))
    if entry.reviewer != owner:
        message = (
            f"this sheet is {owner}'s (line {first}); a sheet holds one reviewer's answers, "
            "return each reviewer's own sheet"
        )
        return [Problem(*at, "reviewer", message, entry.reviewer, True)]
    if checks.key is None or not entry.signature:
        message = (
            "missing; `judge sample` signs every line for the reviewer it was written for "
            "(answer on the sheet it wrote, without removing the signature)"
        )
        if checks.key is None and entry.signature:
            message = (
                "this workbench never signed a sheet; import into the workbench `judge sample` "
                "used (the same CASEWORK_DB_URL)"
            )
        return [Problem(*at, SIGNATURE_FIELD, message)]
    if verdict_signature_matches(checks.key, entry.signature, entry.reviewer, entry.item):
        return []
    signed_for = [
        name
        for name in item.reviewers
        if verdict_signature_matches(checks.key, entry.signature, name, entry.item)
    ]
    whose = f"it is on {signed_for[0]}'s sheet" if signed_for else "its signature does not match"
    message = (
        f"this line was not written for {entry.reviewer} ({whose}); everyone returns the "
        "sheet written for them"
    )
    return [Problem(*at, "reviewer", message, entry.reviewer, True)]


def _problems(entry: SheetVerdict, item: ReviewItemRow | None, checks: _Checks) -> list[Problem]:
    at = (entry.path, entry.line)
    if item is None:
        return [Problem(*at, "item", "no sampled item has this id", entry.item, True)]
    out = []
    if entry.reviewer not in item.reviewers:
        given = ", ".join(item.reviewers)
        out.append(
            Problem(*at, "reviewer", f"this item was given to {given}", entry.reviewer, True)
        )
    else:
        out += _identity_problems(entry, item, checks)
    if entry.kind != item.kind:
        out.append(Problem(*at, "kind", f"this item is a(n) {item.kind} item", entry.kind, True))
    pair = (entry.item, entry.reviewer)
    if pair in checks.seen:
        message = f"answered twice by this reviewer in these sheets (first at {checks.seen[pair]})"
        out.append(Problem(*at, "item", message, entry.item, True))
    checks.seen.setdefault(pair, f"{entry.path}:{entry.line}")
    return out


def _human_pass(item: ReviewItemRow, answer: str) -> bool:
    return answer in item.accepted if item.kind == "outcome" else answer == "yes"


def store_answer(
    session: Session, item: ReviewItemRow, reviewer: str, answer: str, *, source: str, at: datetime
) -> bool:
    """Store ``reviewer``'s answer on a sampled item (replacing theirs); True when it replaced one.

    The one way a person's verdict is stored, from a sheet or from `casework review decide`; the
    item's open ``judge-verdict`` review item for that reviewer is marked decided with it.
    """
    row = session.scalars(
        select(ReviewVerdictRow).where(
            ReviewVerdictRow.item_key == item.key, ReviewVerdictRow.reviewer == reviewer
        )
    ).one_or_none()
    replaced = row is not None
    if row is None:
        row = ReviewVerdictRow(item_key=item.key, reviewer=reviewer)
        session.add(row)
    row.answer = answer
    row.human_pass = _human_pass(item, answer)
    row.source = source
    row.imported_at = at
    session.execute(
        update(ReviewTaskRow)
        .where(
            ReviewTaskRow.kind == JUDGE_VERDICT,
            ReviewTaskRow.open_subject == verdict_subject(item.sheet_id, reviewer),
            ReviewTaskRow.status == "open",
        )
        .values(
            status="decided",
            open_subject=None,
            decision=answer,
            reviewer=reviewer,
            reason=f"answered on {source}",
            decided_at=at,
        )
        .execution_options(synchronize_session=False)
    )
    return replaced


def human_agreement(session: Session) -> HumanAgreement:
    """Agreement of the two people on every stored item both answered."""
    by_item: dict[str, list[ReviewVerdictRow]] = {}
    for row in session.scalars(select(ReviewVerdictRow).order_by(ReviewVerdictRow.reviewer)):
        by_item.setdefault(row.item_key, []).append(row)
    pairs = [rows[:2] for rows in by_item.values() if len(rows) >= 2]
    if not pairs:
        return HumanAgreement(0, 0, None)
    first = ["pass" if a.human_pass else "fail" for a, _ in pairs]
    second = ["pass" if b.human_pass else "fail" for _, b in pairs]
    agreeing = sum(x == y for x, y in zip(first, second, strict=True))
    kappa = cohen_kappa(first, second, categories=["pass", "fail"]).kappa
    # Items are trials' findings: several of one case are one case's evidence for the interval.
    keys = [a.item_key for a, _ in pairs]
    # Every item's case in one read (no IN list: a large review set would pass SQLite's limit).
    found = session.execute(select(ReviewItemRow.key, ReviewItemRow.case_id))
    case_of = {key: case_id for key, case_id in found}
    tables: dict[str, list[list[int]]] = {}
    for key, (a, b) in zip(keys, pairs, strict=True):
        cell = tables.setdefault(case_of.get(key, key), [[0, 0], [0, 0]])
        cell[0 if a.human_pass else 1][0 if b.human_pass else 1] += 1
    k = clustered_kappa_interval(list(tables.values()))
    return HumanAgreement(len(pairs), agreeing, kappa, k.low, k.high, k.method)


def import_verdicts(
    project: Project, sheets: Sequence[Path], *, now: datetime | None = None
) -> VerdictImport:
    """Validate every line of every returned sheet, then store all answers in one transaction.

    Raises:
        InputErrors: Any problem in any sheet (nothing is stored): bad syntax or fields, an
            answer outside the kind's choices, an unknown item, an item not given to that
            reviewer, a line whose signature was not made for the reviewer it names (a sheet
            edited to answer as someone else), a sheet mixing reviewers, an item answered twice.
    """
    entries: list[SheetVerdict] = []
    problems: list[Problem] = []
    for path in sheets:
        found, bad = read_verdict_sheet(path, project.relative(path))
        entries += found
        problems += bad
    at = now or datetime.now(UTC)
    with open_workbench(project) as wb, wb.session() as s:
        items = {r.sheet_id: r for r in s.scalars(select(ReviewItemRow)).all()}
        checks = _Checks(sheet_key(s, create=False), {}, {})
        for entry in entries:
            problems += _problems(entry, items.get(entry.item), checks)
        if problems:
            raise InputErrors(problems)
        stored = replaced = unanswered = 0
        for entry in entries:
            if entry.answer is None:
                unanswered += 1
                continue
            replaced += store_answer(
                s, items[entry.item], entry.reviewer, entry.answer, source=entry.path, at=at
            )
            stored += 1
        s.flush()
        agreement = human_agreement(s)
    return VerdictImport(stored, replaced, unanswered, agreement)
