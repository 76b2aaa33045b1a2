"""The registry of review kinds: each declares its decisions and how a decision is applied.

Built in: ``leakage-pair``, ``generated-case``, ``disagreement``, ``judge-verdict`` and
``trajectory``. A new kind implements
:class:`casework.review.ReviewKind` and calls :func:`register_kind` once at import.
"""

from __future__ import annotations

from casework.errors import UsageError
from casework.review._disagreement import DisagreementKind
from casework.review._generated_case import GeneratedCaseKind
from casework.review._judge_verdict import JudgeVerdictKind
from casework.review._leakage_pair import LeakagePairKind
from casework.review._task import ReviewKind
from casework.review._trajectory import TrajectoryKind

_KINDS: dict[str, ReviewKind] = {}


def register_kind(kind: ReviewKind) -> None:
    """Make ``kind`` known to the queue (a second kind of the same name replaces the first)."""
    _KINDS[kind.name] = kind


def review_kind(name: str) -> ReviewKind:
    """The kind named ``name``.

    Raises:
        UsageError: No such kind.
    """
    found = _KINDS.get(name)
    if found is None:
        raise UsageError(
            f"no review kind '{name}' (kinds: {', '.join(sorted(_KINDS))}).", param="kind"
        )
    return found


def review_kinds() -> dict[str, ReviewKind]:
    """Every registered kind, by name."""
    return dict(sorted(_KINDS.items()))


register_kind(LeakagePairKind())
register_kind(GeneratedCaseKind())
register_kind(DisagreementKind())
register_kind(JudgeVerdictKind())
register_kind(TrajectoryKind())
