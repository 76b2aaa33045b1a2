"""Values the labelling stage passes around: assignments, and helpers over raw label records.

Raw labels themselves are :class:`casework.schema.LabelRecord` everywhere (the released format);
the workbench converts its rows to and from it. Entry points: :class:`Assignment`,
:func:`label_key`, :func:`parse_labeller`, :func:`guideline_number`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from casework.agreement.report import version_sort_key
from casework.errors import UsageError
from casework.names import name_problem
from casework.schema import LabelRecord

__all__ = [
    "ROLE_ORDER",
    "Assignment",
    "LabelKey",
    "OverlapReason",
    "Role",
    "as_utc",
    "guideline_number",
    "label_key",
    "parse_labellers",
    "version_sort_key",
    "yes_tools",
]

Role = Literal["first", "second", "adjudicator"]
"""Why a person holds a case: first label, second (overlap) label, or adjudication."""
OverlapReason = Literal["calibration", "audit", "disagreement"]
"""Why a second (or third) person holds a case: new-slice calibration, random audit, disagreement."""

ROLE_ORDER: dict[str, int] = {"first": 0, "second": 1, "adjudicator": 2}

#: Longest labeller id.
LABELLER_MAX = 64


@dataclass(frozen=True)
class Assignment:
    """One person holding one case in one labelling round (a guideline version).

    Attributes:
        case_id: The case.
        labeller: Pseudonymous labeller id.
        role: ``first``, ``second`` or ``adjudicator``.
        overlap_reason: Why a second or third person holds it (``None`` for the first).
        guideline_version: The guideline the work is done under (the round).
        assigned_at: When the assignment was made (UTC).
        done: True once the label was imported.
    """

    case_id: str
    labeller: str
    role: Role
    overlap_reason: OverlapReason | None
    guideline_version: str
    assigned_at: datetime
    done: bool = False


@dataclass(frozen=True, order=True)
class LabelKey:
    """Identity of a raw label: one per case, labeller and guideline version."""

    case_id: str
    labeller: str
    guideline_version: str


def label_key(record: LabelRecord) -> LabelKey:
    """The identity of a raw label record."""
    return LabelKey(record.case_id, record.labeller, record.guideline_version)


def guideline_number(version: str) -> int | None:
    """The ``N`` of a ``<slice>-gN`` guideline version, or ``None`` for another shape."""
    number = version_sort_key(version)[1]
    return number if number >= 0 else None


def parse_labellers(values: Iterable[str], param: str = "labellers") -> tuple[str, ...]:
    """Labeller ids from a comma-separated option (repeatable), validated and de-duplicated.

    Raises:
        UsageError: An id is malformed or given twice, or none is given.
    """
    ids: list[str] = []
    for value in values:
        for part in value.split(","):
            labeller = part.strip()
            if not labeller:
                continue
            if name_problem(labeller, max_length=LABELLER_MAX) is not None:
                raise UsageError(
                    f"a labeller id holds letters, digits and ._- (at most 64). Got '{labeller}'.",
                    param=param,
                )
            if labeller in ids:
                raise UsageError(f"labeller '{labeller}' is given twice.", param=param)
            ids.append(labeller)
    if not ids:
        raise UsageError(
            f"name at least one labeller (e.g. `{param}` lab-14,lab-22).",
            param=param,
            mentions=(param,),
        )
    return tuple(ids)


def yes_tools(answers: dict[str, bool]) -> list[str]:
    """Names of the tools answered "yes", sorted."""
    return sorted(name for name, yes in answers.items() if yes)


def as_utc(value: datetime) -> datetime:
    """A timestamp read back from the database, as an aware UTC datetime (SQLite drops the zone)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def labels_in_role_order(labels: Sequence[LabelRecord]) -> list[LabelRecord]:
    """Labels ordered first, second, adjudicator; then by time and labeller."""
    return sorted(labels, key=lambda r: (ROLE_ORDER[r.role], r.labelled_at.isoformat(), r.labeller))
