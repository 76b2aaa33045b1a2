"""Labelling one case at a time (the web queue): what a labeller holds, the blind view, answers.

The same rules as the sheets: a labeller sees only cases assigned to them under the slice's
current guideline, only the blind view :func:`casework.labelling.sheets.sheet_line` builds, and
their answer is stored by :func:`casework.labelling.store.add_label` as a sheet import stores it.
Callers own the session (one transaction each). Entry points: :func:`labeller_queue`,
:func:`blind_case`, :func:`submit_label`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from casework.dataset import ToolDecl, declared_tools
from casework.errors import CaseworkError, UsageError
from casework.labelling.dataset_state import DatasetState, load_state
from casework.labelling.guidelines import read_guideline
from casework.labelling.model import LabelKey, label_key
from casework.labelling.sheets import sheet_line
from casework.labelling.store import StoredAssignment, add_label
from casework.project import Project
from casework.schema import OUTCOMES, LabelRecord, Outcome
from casework.workbench import AssignmentRow, RawLabelRow

__all__ = [
    "BlindCase",
    "CaseNotHeld",
    "HeldCase",
    "LabellerQueue",
    "WebAnswer",
    "blind_case",
    "labeller_queue",
    "submit_label",
]

_BLIND_ROLES = ("first", "second")


class CaseNotHeld(CaseworkError, LookupError):
    """The labeller holds no current blind assignment of this case (or it does not exist)."""


@dataclass(frozen=True)
class HeldCase:
    """One case a labeller holds under its slice's current guideline.

    Attributes:
        dataset: Dataset name.
        case_id: The case.
        slice: Its slice.
        guideline_version: The round.
        done: The labeller's label is stored.
        revisable: Done, not released and not adjudicated (nor held by an adjudicator).
    """

    dataset: str
    case_id: str
    slice: str
    guideline_version: str
    done: bool
    revisable: bool


@dataclass(frozen=True)
class LabellerQueue:
    """Everything one labeller holds (blind roles only), open cases first.

    Attributes:
        labeller: Whose queue.
        items: Held cases: open ones by dataset and case id, then done ones.
    """

    labeller: str
    items: tuple[HeldCase, ...]

    @property
    def done(self) -> int:
        """Cases labelled."""
        return sum(1 for i in self.items if i.done)

    @property
    def assigned(self) -> int:
        """Cases held (done or not)."""
        return len(self.items)

    def open_items(self) -> list[HeldCase]:
        """Cases still waiting for this labeller's label."""
        return [i for i in self.items if not i.done]


@dataclass(frozen=True)
class BlindCase:
    """What a labeller may see of one held case: the sheet's blind view and the guideline.

    Attributes:
        held: The assignment as the queue lists it.
        line: The blind sheet line (:func:`casework.labelling.sheets.sheet_line`).
        tools: Declared tools, by name.
        guideline_text: The slice's guideline at its current version.
        own: The labeller's own stored label, when done (never anyone else's).
        fields_shown: The parts of the case the page shows (recorded with the label).
    """

    held: HeldCase
    line: dict[str, Any]
    tools: dict[str, ToolDecl]
    guideline_text: str
    own: LabelRecord | None
    fields_shown: tuple[str, ...]


@dataclass(frozen=True)
class WebAnswer:
    """A label as a form gives it.

    Attributes:
        outcome: ``resolve``, ``clarify``, ``refuse`` or ``escalate``.
        required: Tools the agent must call.
        forbidden: Tools the agent must not call.
        answer_facts: Facts a correct reply contains (blank lines are dropped).
    """

    outcome: str
    required: Collection[str] = ()
    forbidden: Collection[str] = ()
    answer_facts: Sequence[str] = ()

    def facts(self) -> list[str]:
        """Answer facts without blanks, stripped."""
        return [f.strip() for f in self.answer_facts if f.strip()]


def _datasets_of(session: Session, labeller: str) -> list[str]:
    rows = session.scalars(
        select(AssignmentRow.dataset).where(AssignmentRow.labeller == labeller).distinct()
    ).all()
    return sorted(rows)


def _revisable(state: DatasetState, stored: StoredAssignment, released: set[LabelKey]) -> bool:
    a = stored.assignment
    if not a.done:
        return False
    progress = state.snapshot.by_id.get(a.case_id)
    found = progress.round if progress else None
    if found is None or found.guideline_version != a.guideline_version:
        return False
    if found.adjudicated or any(x.role == "adjudicator" for x in found.assignments):
        return False
    mine = [r for r in found.labels if r.labeller == a.labeller]
    return bool(mine) and all(label_key(r) not in released for r in mine)


def _held(state: DatasetState, labeller: str) -> list[tuple[HeldCase, StoredAssignment]]:
    versions = state.snapshot.versions
    released = {label_key(r) for r in state.dataset.labels}
    out = []
    for stored in state.work.assignments:
        a = stored.assignment
        if a.labeller != labeller or a.role not in _BLIND_ROLES:
            continue
        if a.guideline_version != versions.get(stored.slice):
            continue
        if a.case_id not in state.snapshot.by_id:  # the case left the dataset
            continue
        held = HeldCase(
            state.dataset.name,
            a.case_id,
            stored.slice,
            a.guideline_version,
            a.done,
            _revisable(state, stored, released),
        )
        out.append((held, stored))
    return out


def _state(
    project: Project, session: Session, name: str, states: dict[str, DatasetState] | None
) -> DatasetState:
    if states is None:
        return load_state(project, name, session)
    if name not in states:
        states[name] = load_state(project, name, session)
    return states[name]


def labeller_queue(
    project: Project,
    session: Session,
    labeller: str,
    *,
    states: dict[str, DatasetState] | None = None,
) -> LabellerQueue:
    """Every case ``labeller`` holds as first or second labeller under a current guideline.

    ``states``, when given, caches each dataset's :class:`DatasetState` for this session (read
    from it, filled in), so one request loads a dataset once.

    Raises:
        InputErrors: Bad dataset files or guidelines.
    """
    items: list[HeldCase] = []
    for name in _datasets_of(session, labeller):
        if name not in project.dataset_names():
            continue
        items += [h for h, _ in _held(_state(project, session, name, states), labeller)]
    items.sort(key=lambda i: (i.done, i.dataset, i.case_id))
    return LabellerQueue(labeller, tuple(items))


def _find(
    project: Project,
    session: Session,
    labeller: str,
    dataset: str,
    case_id: str,
    states: dict[str, DatasetState] | None,
) -> tuple[DatasetState, HeldCase, StoredAssignment]:
    if dataset not in project.dataset_names():
        raise CaseNotHeld(f"{labeller} holds no case '{case_id}' of dataset '{dataset}'.")
    state = _state(project, session, dataset, states)
    for held, stored in _held(state, labeller):
        if held.case_id == case_id:
            return state, held, stored
    raise CaseNotHeld(f"{labeller} holds no case '{case_id}' of dataset '{dataset}'.")


def blind_case(
    project: Project,
    session: Session,
    labeller: str,
    dataset: str,
    case_id: str,
    *,
    states: dict[str, DatasetState] | None = None,
) -> BlindCase:
    """The blind view of a case ``labeller`` holds, with the slice's current guideline.

    ``states`` as for :func:`labeller_queue`.

    Raises:
        CaseNotHeld: No such dataset or case, or the labeller holds no current blind assignment.
    """
    state, held, _ = _find(project, session, labeller, dataset, case_id, states)
    progress = state.snapshot.by_id[case_id]
    tools = declared_tools(project)
    line = sheet_line("label", dataset, labeller, progress.case, held.guideline_version, tools)
    own = None
    if held.done and progress.round is not None:
        own = next((r for r in progress.round.labels if r.labeller == labeller), None)
    guideline = read_guideline(project, held.slice)
    shown = (*line["situation"], "tools", "guideline")
    return BlindCase(held, line, tools, guideline.text, own, tuple(shown))


def _check_answer(answer: WebAnswer, tools: Collection[str]) -> Outcome:
    if answer.outcome not in OUTCOMES:
        raise UsageError(
            f"choose one of {', '.join(OUTCOMES)}. Got '{answer.outcome}'.", param="outcome"
        )
    declared = ", ".join(tools) or "none"
    for param, names in (("required", answer.required), ("forbidden", answer.forbidden)):
        unknown = sorted(set(names) - set(tools))
        if unknown:
            raise UsageError(
                f"not a declared tool (declared: {declared}). Got '{unknown[0]}'.", param=param
            )
    both = sorted(set(answer.required) & set(answer.forbidden))
    if both:
        raise UsageError(
            f"a tool cannot be both required and forbidden. Got '{both[0]}'.", param="forbidden"
        )
    return answer.outcome


def submit_label(
    project: Project,
    session: Session,
    labeller: str,
    dataset: str,
    case_id: str,
    answer: WebAnswer,
    *,
    guideline_version: str,
    seconds_on_screen: float | None,
    now: datetime,
    source: str = "web",
    states: dict[str, DatasetState] | None = None,
) -> bool:
    """Store ``labeller``'s label of a held case, or revise it while that is allowed.

    Stored through :func:`casework.labelling.store.add_label`, so status, agreement,
    adjudication and release see it as a sheet label. A revision keeps the label's identity and
    adds the new seconds on screen to the old. Returns True when an existing label was revised.
    ``states`` as for :func:`labeller_queue` (stale once this returns: the label is new).

    Raises:
        CaseNotHeld: The labeller holds no current blind assignment of the case.
        UsageError: A bad answer (``param`` names the field), the guideline changed since the page
            was served, or the label can no longer be revised (released or adjudicated).
    """
    _, held, stored = _find(project, session, labeller, dataset, case_id, states)
    tools = declared_tools(project)
    outcome = _check_answer(answer, tools)
    if guideline_version != held.guideline_version:
        raise UsageError(
            f"the guideline of slice '{held.slice}' is now {held.guideline_version}, not "
            f"{guideline_version}; reload the case and label it under the new guideline.",
            param="guideline_version",
        )
    required = {t: t in set(answer.required) for t in tools}
    forbidden = {t: t in set(answer.forbidden) for t in tools}
    if not held.done:
        add_label(
            session,
            dataset,
            held.slice,
            stored,
            outcome=outcome,
            required=required,
            forbidden=forbidden,
            answer_facts=answer.facts(),
            labelled_at=now,
            source=source,
            seconds_on_screen=seconds_on_screen,
        )
        return False
    if not held.revisable:
        raise UsageError(
            f"the label of case '{case_id}' can no longer be revised: it is released or an "
            "adjudicator holds the case."
        )
    row = session.scalars(
        select(RawLabelRow).where(
            RawLabelRow.dataset == dataset,
            RawLabelRow.case_id == case_id,
            RawLabelRow.labeller == labeller,
            RawLabelRow.guideline_version == held.guideline_version,
        )
    ).one()
    row.outcome, row.required, row.forbidden = outcome, required, forbidden
    row.answer_facts, row.labelled_at = answer.facts(), now
    if seconds_on_screen is not None:
        row.seconds_on_screen = (row.seconds_on_screen or 0.0) + seconds_on_screen
    return True
