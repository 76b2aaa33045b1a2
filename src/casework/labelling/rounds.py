"""Where each case stands in labelling, and its final label: pure functions over raw labels.

A *round* is the work on one case under one guideline version: its assignments and raw labels.
The newest round decides: pending while someone still holds the case, final when the labels agree
(or one label stands alone, or an adjudicator decided), contested otherwise.
Entry points: :func:`decide_round`, :func:`latest_round`, :func:`final_label`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from casework.labelling.model import Assignment, labels_in_role_order, version_sort_key
from casework.schema import Label, LabelRecord, Outcome, ToolRequirement

__all__ = [
    "Round",
    "RoundState",
    "decide_round",
    "differing_fields",
    "final_label",
    "latest_round",
]

RoundState = Literal["labelling", "contested", "adjudicating", "final"]
"""``labelling``: someone still holds the case; ``contested``: labels differ and no adjudicator
holds it; ``adjudicating``: an adjudicator holds it; ``final``: the label is decided."""


def _view(record: LabelRecord) -> dict[str, object]:
    return {
        "outcome": record.outcome,
        "required_tools": frozenset(t.name for t in record.required_tools),
        "forbidden_tools": frozenset(t.name for t in record.forbidden_tools),
    }


def differing_fields(labels: Sequence[LabelRecord]) -> tuple[str, ...]:
    """The label fields on which these raw labels differ: outcome, required or forbidden tools.

    Tools are compared as sets of names (order ignored). Answer facts are free text and never
    make a disagreement: what agreement measures (outcome, per-tool yes/no) is what must agree;
    the deciding label's facts are kept and every labeller's facts stay in `labels.jsonl`.
    """
    if len(labels) < 2:
        return ()
    views = [_view(r) for r in labels]
    return tuple(
        name
        for name in ("outcome", "required_tools", "forbidden_tools")
        if any(v[name] != views[0][name] for v in views[1:])
    )


@dataclass(frozen=True)
class Round:
    """One case's work under one guideline version.

    Attributes:
        case_id: The case.
        guideline_version: The version (the round).
        state: ``labelling``, ``contested``, ``adjudicating`` or ``final``.
        assignments: Its assignments (from the workbench).
        labels: Its raw labels, first, second, then adjudicator.
        differs: Fields on which the non-adjudicator labels differ.
        decided_by: The label that decides the round when final (the adjudicator's, else the first).
    """

    case_id: str
    guideline_version: str
    state: RoundState
    assignments: tuple[Assignment, ...]
    labels: tuple[LabelRecord, ...]
    differs: tuple[str, ...]
    decided_by: LabelRecord | None

    @property
    def labellers(self) -> tuple[str, ...]:
        """Everyone whose label is in the round, first, second, then adjudicator."""
        out: list[str] = []
        for record in self.labels:
            if record.labeller not in out:
                out.append(record.labeller)
        return tuple(out)

    @property
    def holders(self) -> set[str]:
        """Everyone assigned or labelled in the round (nobody may get the case again in it)."""
        return {a.labeller for a in self.assignments} | {r.labeller for r in self.labels}

    @property
    def adjudicated(self) -> bool:
        """True when an adjudicator's label decides the round."""
        return self.decided_by is not None and self.decided_by.role == "adjudicator"

    @property
    def pending(self) -> tuple[Assignment, ...]:
        """Assignments not done yet."""
        return tuple(a for a in self.assignments if not a.done)


def decide_round(
    case_id: str,
    version: str,
    assignments: Sequence[Assignment],
    labels: Sequence[LabelRecord],
) -> Round:
    """The state of one round from its assignments and raw labels (both of this case and version)."""
    ordered = tuple(labels_in_role_order(labels))
    adjudicator = [r for r in ordered if r.role == "adjudicator"]
    blind = [r for r in ordered if r.role != "adjudicator"]
    differs = differing_fields(blind)
    pending = [a for a in assignments if not a.done]
    state: RoundState
    decided: LabelRecord | None = None
    if adjudicator:
        state, decided = "final", adjudicator[-1]
    elif any(a.role != "adjudicator" for a in pending) or not blind:
        state = "labelling"
    elif not differs:
        state, decided = "final", blind[0]
    elif pending:
        state = "adjudicating"
    else:
        state = "contested"
    return Round(case_id, version, state, tuple(assignments), ordered, differs, decided)


def latest_round(
    case_id: str, assignments: Sequence[Assignment], labels: Sequence[LabelRecord]
) -> Round | None:
    """The round under the newest guideline version holding work on this case, if any."""
    versions = {a.guideline_version for a in assignments} | {r.guideline_version for r in labels}
    if not versions:
        return None
    newest = max(versions, key=version_sort_key)
    return decide_round(
        case_id,
        newest,
        [a for a in assignments if a.guideline_version == newest],
        [r for r in labels if r.guideline_version == newest],
    )


def _keep_matchers(
    names: Sequence[str], before: Sequence[ToolRequirement]
) -> list[ToolRequirement]:
    """Tool requirements by name, keeping argument matchers an earlier label put on the same tool."""
    earlier = {t.name: t for t in before}
    return [earlier.get(name, ToolRequirement(name=name)) for name in names]


def final_label(decided: Round, previous: Label | None) -> Label:
    """The label a final round puts on its case.

    Tools keep the argument matchers the previous label had for them (sheets answer yes/no per
    tool; matchers are authored on the case). ``labellers`` lists everyone in the round.

    Raises:
        ValueError: The round is not final.
    """
    if decided.state != "final" or decided.decided_by is None:
        raise ValueError(f"round of {decided.case_id} is {decided.state}, not final")
    record = decided.decided_by
    before_req = previous.required_tools if previous else []
    before_forb = previous.forbidden_tools if previous else []
    return Label(
        outcome=record.outcome,
        required_tools=_keep_matchers(sorted(t.name for t in record.required_tools), before_req),
        forbidden_tools=_keep_matchers(sorted(t.name for t in record.forbidden_tools), before_forb),
        answer_facts=list(record.answer_facts),
        guideline_version=decided.guideline_version,
        labellers=list(decided.labellers),
        adjudicated=decided.adjudicated,
        acceptable_outcomes=_keep_acceptable(record.outcome, previous),
        matched_facts=list(previous.matched_facts) if previous else [],
        nl_assertions=list(previous.nl_assertions) if previous else [],
    )


def _keep_acceptable(outcome: Outcome, previous: Label | None) -> list[Outcome]:
    """The authored other acceptable outcomes, kept only while people's outcome is among them.

    Labellers choose one outcome (agreement is over that choice). The further outcomes a case
    accepts are authored on it, like argument matchers; a round whose decided outcome the
    previous label did not accept at all overrules that set, so it is cleared.
    """
    if previous is None or outcome not in previous.accepted_outcomes():
        return []
    return [o for o in previous.accepted_outcomes() if o != outcome]
