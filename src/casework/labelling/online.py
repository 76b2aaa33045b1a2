"""Labelling one case at a time (the web queue): what a labeller holds, the blind view, answers.

The same rules as the sheets: a labeller sees only cases assigned to them under the slice's
current guideline, only the blind view :func:`casework.labelling.sheets.sheet_line` builds, and
their answer is stored by :func:`casework.labelling.store.add_label` as a sheet import stores it.
Callers own the session (one transaction each). Entry points: :func:`labeller_queue`,
:func:`blind_case`, :func:`submit_label`.

Work per call is proportional to the labeller's own cases, not to the dataset: the dataset's
files, guidelines and declared tools are parsed once per process and kept while their files are
unchanged (:mod:`casework.labelling._cache`), and the workbench is asked only for the rows of the
cases the labeller holds (:func:`casework.labelling.store.load_held_work`). A case's round and
status depend only on its own rows, so they come out exactly as the whole dataset's load gives.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from casework.dataset.tools import ToolDecl
from casework.errors import CaseworkError, UsageError
from casework.labelling import _cache
from casework.labelling.dataset_state import DatasetState
from casework.labelling.model import LabelKey, label_key
from casework.labelling.relabel import sent_back_rules
from casework.labelling.sheets import sheet_line
from casework.labelling.snapshot import snapshot
from casework.labelling.store import StoredAssignment, add_label, load_held_work
from casework.project import Project
from casework.schema import OUTCOMES, LabelRecord, Outcome
from casework.workbench.models_labelling import AssignmentRow, RawLabelRow

__all__ = [
    "BlindCase",
    "CaseNotHeld",
    "HeldCase",
    "LabelConflict",
    "LabellerQueue",
    "States",
    "WebAnswer",
    "blind_case",
    "labeller_queue",
    "submit_label",
]

_BLIND_ROLES = ("first", "second")


@dataclass(frozen=True)
class _HeldState:
    state: DatasetState  # the dataset with the rows of the cases one labeller holds
    released: frozenset[LabelKey]  # identities of the released raw labels of those cases


States = dict[tuple[str, str, str], _HeldState]
"""What one session loaded, by (labeller, dataset, case id or ``""`` for every held case): pass
the same (initially empty) dict to several calls of one request so each loads once."""


class CaseNotHeld(CaseworkError, LookupError):
    """The labeller holds no current blind assignment of this case (or it does not exist)."""


class LabelConflict(CaseworkError):
    """Another submit stored this label meanwhile (a second tab, a double click): nothing written."""


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


_DATASETS_OF = (
    select(AssignmentRow.dataset).where(AssignmentRow.labeller == bindparam("labeller")).distinct()
)


def _datasets_of(session: Session, labeller: str) -> list[str]:
    return sorted(session.scalars(_DATASETS_OF, {"labeller": labeller}).all())


def _revisable(
    state: DatasetState, stored: StoredAssignment, released: frozenset[LabelKey]
) -> bool:
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


def _held(loaded: _HeldState, labeller: str) -> list[tuple[HeldCase, StoredAssignment]]:
    state, released = loaded.state, loaded.released
    versions = state.snapshot.versions
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


def _held_state(
    project: Project, session: Session, labeller: str, name: str, case_id: str | None
) -> _HeldState:
    """The dataset (cached) with the rows of the cases ``labeller`` holds (or of one of them)."""
    files = _cache.dataset_files(project, name)
    versions = _cache.versions(project, files.slices)
    work = load_held_work(session, name, labeller, _BLIND_ROLES, case_id=case_id)
    ids = sorted({s.assignment.case_id for s in work.assignments} & files.by_id.keys())
    released = [item for i in ids for item in files.released.get(i, ())]
    labels_path = project.relative(files.dataset.path / "labels.jsonl")
    snap = snapshot(
        [files.by_id[i] for i in ids],
        [r for _, r in released],
        work.labels,
        [s.assignment for s in work.assignments],
        versions,
        labels_path=labels_path,
        released_lines=[n for n, _ in released],
    )
    keys = frozenset(label_key(r) for _, r in released)
    return _HeldState(DatasetState(files.dataset, work, snap, labels_path), keys)


def _state(
    project: Project,
    session: Session,
    labeller: str,
    name: str,
    case_id: str | None,
    states: States | None,
) -> _HeldState:
    if states is None:
        return _held_state(project, session, labeller, name, case_id)
    whole = states.get((labeller, name, ""))
    if whole is not None:
        return whole
    key = (labeller, name, case_id or "")
    if key not in states:
        states[key] = _held_state(project, session, labeller, name, case_id)
    return states[key]


def labeller_queue(
    project: Project,
    session: Session,
    labeller: str,
    *,
    states: States | None = None,
) -> LabellerQueue:
    """Every case ``labeller`` holds as first or second labeller under a current guideline.

    ``states``, when given, keeps what this call loads for later calls in the same session
    (:data:`States`), so one request reads each dataset's rows once.

    Raises:
        InputErrors: Bad dataset files or guidelines.
    """
    items: list[HeldCase] = []
    for name in _datasets_of(session, labeller):
        if not _cache.has_dataset(project, name):
            continue
        loaded = _state(project, session, labeller, name, None, states)
        items += [h for h, _ in _held(loaded, labeller)]
    items.sort(key=lambda i: (i.done, i.dataset, i.case_id))
    return LabellerQueue(labeller, tuple(items))


def _find(
    project: Project,
    session: Session,
    labeller: str,
    dataset: str,
    case_id: str,
    states: States | None,
) -> tuple[DatasetState, HeldCase, StoredAssignment]:
    if not _cache.has_dataset(project, dataset):
        raise CaseNotHeld(f"{labeller} holds no case '{case_id}' of dataset '{dataset}'.")
    loaded = _state(project, session, labeller, dataset, case_id, states)
    for held, stored in _held(loaded, labeller):
        if held.case_id == case_id:
            return loaded.state, held, stored
    raise CaseNotHeld(f"{labeller} holds no case '{case_id}' of dataset '{dataset}'.")


def blind_case(
    project: Project,
    session: Session,
    labeller: str,
    dataset: str,
    case_id: str,
    *,
    states: States | None = None,
) -> BlindCase:
    """The blind view of a case ``labeller`` holds, with the slice's current guideline.

    ``states`` as for :func:`labeller_queue`.

    Raises:
        CaseNotHeld: No such dataset or case, or the labeller holds no current blind assignment.
    """
    state, held, _ = _find(project, session, labeller, dataset, case_id, states)
    progress = state.snapshot.by_id[case_id]
    tools = _cache.tools(project)
    line = sheet_line(
        "label",
        dataset,
        labeller,
        progress.case,
        held.guideline_version,
        tools,
        sent_back_by=sent_back_rules(project, progress.case, held.guideline_version),
    )
    own = None
    if held.done and progress.round is not None:
        own = next((r for r in progress.round.labels if r.labeller == labeller), None)
    guideline = _cache.guideline(project, held.slice)
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
    states: States | None = None,
) -> bool:
    """Store ``labeller``'s label of a held case, or revise it while that is allowed.

    Stored through :func:`casework.labelling.store.add_label`, so status, agreement,
    adjudication and release see it as a sheet label. A revision keeps the label's identity and
    adds the new seconds on screen to the old. Returns True when an existing label was revised.
    ``states`` as for :func:`labeller_queue` (stale once this returns: the label is new).

    No label is lost, doubled or beyond the case's quota under concurrent submits: the label is
    stored only by the one writer whose conditional update marks the assignment done (the
    others get :class:`LabelConflict`), behind the unique key (case, labeller, version).

    Raises:
        CaseNotHeld: The labeller holds no current blind assignment of the case.
        LabelConflict: A concurrent submit stored this label first (nothing written).
        UsageError: A bad answer (``param`` names the field), the guideline changed since the page
            was served, or the label can no longer be revised (released or adjudicated).
    """
    _, held, stored = _find(project, session, labeller, dataset, case_id, states)
    tools = _cache.tools(project)
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
        claimed = add_label(
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
        if not claimed:
            raise LabelConflict(f"the label of case '{case_id}' was stored meanwhile.")
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
