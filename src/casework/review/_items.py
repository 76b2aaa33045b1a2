"""Review items: the judge's verdicts on replies, one per outcome reading and per expected fact.

An item is keyed ``run_id/case_id/trial/kind[/fact_index]`` (``kind`` is ``outcome`` or
``answer_fact``; only fact items have an index). The blind sheet shows an opaque id instead.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from casework.grading import CheckResult, rubric_digests
from casework.grading.judge import CheckKind
from casework.runner import TrialRecord
from casework.runner.records import LoadedRun
from casework.schema import OUTCOMES, Case


@dataclass(frozen=True)
class ReviewItem:
    """One judge verdict on one reply, with what a person needs to give their own.

    Attributes:
        key: ``run_id/case_id/trial/kind[/fact_index]``.
        run_id: Run the verdict was given in.
        case_id: Case of the trial.
        trial: Trial number.
        kind: ``outcome`` or ``answer_fact``.
        fact_index: Index of the fact in the label (fact items only).
        slice: The case's slice.
        judge_model: Model of the judge that gave the verdict (from the run header).
        prompt_version: Prompt version of that judge (``None``: a run from before versions).
        rubric_digest: Digest of the slice's rubrics in the run's dataset.
        judge_pass: The judge's verdict on the check, as recorded in the run log.
        accepted: Outcome items: the outcomes that pass the check (from the label).
        turns: The conversation the agent started from (role, content, tool calls).
        tool_calls: The calls the agent made (name, arguments, result or error).
        reply: The agent's final reply.
        rubric: The case's rubric, when it has one.
        fact: The expected fact (fact items only).
    """

    key: str
    run_id: str
    case_id: str
    trial: int
    kind: CheckKind
    fact_index: int | None
    slice: str
    judge_model: str
    prompt_version: str | None
    rubric_digest: str
    judge_pass: bool
    accepted: tuple[str, ...] = ()
    turns: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)
    tool_calls: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)
    reply: str = field(default="", repr=False)
    rubric: str | None = field(default=None, repr=False)
    fact: str | None = field(default=None, repr=False)

    @property
    def sheet_id(self) -> str:
        """The opaque id a sheet shows (the key names the case, whose id may carry provenance)."""
        return sheet_id(self.key)

    @property
    def stratum(self) -> tuple[str, str, bool]:
        """``(slice, kind, judge_pass)``: what sampling stratifies by."""
        return (self.slice, self.kind, self.judge_pass)


def sheet_id(key: str) -> str:
    """The opaque sheet id of an item key: ``v-`` and 12 hex digits of its SHA-256."""
    return "v-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def item_key(
    run_id: str, case_id: str, trial: int, kind: str, fact_index: int | None = None
) -> str:
    """``run_id/case_id/trial/kind[/fact_index]``."""
    key = f"{run_id}/{case_id}/{trial}/{kind}"
    return key if fact_index is None else f"{key}/{fact_index}"


def excluded_by(key: str, excluded: Iterable[str]) -> bool:
    """True when ``key`` is, or lies under, one of ``excluded`` (``run/case/0`` covers its checks)."""
    return any(key == e or key.startswith(e + "/") for e in excluded)


def _accepted(check: CheckResult, case: Case) -> tuple[str, ...]:
    label = case.label
    if check.name == "outcome":
        return label.accepted_outcomes() if label is not None else ()
    if check.evidence.startswith("reported refuse"):
        return ("refuse",)  # the judge was asked whether a reported refusal really refuses
    if label is not None:
        return label.accepted_outcomes()
    return tuple(o for o in OUTCOMES if o != "resolve")


def _turns(case: Case) -> tuple[Mapping[str, Any], ...]:
    # What the judge is shown of the conversation: roles, text, calls by name and arguments.
    return tuple(
        {
            "role": t.role,
            "content": t.content,
            "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in t.tool_calls],
        }
        for t in case.situation.turns
    )


def _calls(trial: TrialRecord) -> tuple[Mapping[str, Any], ...]:
    return tuple(
        {"name": c.name, "arguments": c.arguments}
        | ({"error": c.error} if c.error else {"result": c.result})
        for c in trial.trajectory.tool_calls
    )


def _trial_items(
    run: LoadedRun, trial: TrialRecord, case: Case, digest: str
) -> Iterator[ReviewItem]:
    judge = run.header.judge
    assert judge is not None
    common: dict[str, Any] = {
        "run_id": run.header.run_id,
        "case_id": case.id,
        "trial": trial.trial,
        "slice": case.slice,
        "judge_model": judge.model,
        "prompt_version": judge.prompt_version,
        "rubric_digest": digest,
        "turns": _turns(case),
        "tool_calls": _calls(trial),
        "reply": trial.trajectory.reply(),
        "rubric": case.oracle.rubric,
    }
    for check in trial.verdict.checks:
        if not check.judged or check.status == "undetermined":
            continue
        if check.name in ("outcome", "unsatisfiable"):
            key = item_key(run.header.run_id, case.id, trial.trial, "outcome")
            yield ReviewItem(
                key=key,
                kind="outcome",
                fact_index=None,
                judge_pass=check.status == "pass",
                accepted=_accepted(check, case),
                **common,
            )
        elif check.name == "rubric" and case.oracle.rubric:
            # The rubric applied as one finding (a label with no facts to read it by): reviewed
            # as a fact, so the certification that admits it has sampled it.
            yield ReviewItem(
                key=item_key(run.header.run_id, case.id, trial.trial, "answer_fact", 0),
                kind="answer_fact",
                fact_index=0,
                judge_pass=check.status == "pass",
                fact=case.oracle.rubric,
                **common,
            )
        elif check.name in ("answer_facts", "nl_assertions") and case.label is not None:
            # NL assertions are answer_fact findings numbered after the judged facts.
            facts = case.label.answer_facts
            texts, start = (
                (facts, 0)
                if check.name == "answer_facts"
                else (case.label.nl_assertions, len(facts))
            )
            for j, present in enumerate(check.findings[: len(texts)]):
                i = start + j
                key = item_key(run.header.run_id, case.id, trial.trial, "answer_fact", i)
                yield ReviewItem(
                    key=key,
                    kind="answer_fact",
                    fact_index=i,
                    judge_pass=present,
                    fact=texts[j],
                    **common,
                )


def run_items(run: LoadedRun, cases: Sequence[Case], *, private: bool) -> list[ReviewItem]:
    """Every judge-decided finding of a run, as review items.

    Args:
        run: The run, read back.
        cases: The cases of the run's dataset version.
        private: The judge keeps data local; otherwise frozen cases are left out (their content
            never leaves the project's people and a private judge).
    """
    if run.header.judge is None:
        return []
    by_id = {c.id: c for c in cases}
    digests = rubric_digests(cases)
    items: list[ReviewItem] = []
    for trial in run.trials:
        case = by_id.get(trial.case_id)
        if case is None or ((trial.frozen or case.frozen) and not private):
            continue
        items.extend(_trial_items(run, trial, case, digests[case.slice]))
    return items


def draw(items: Sequence[ReviewItem], n: int, seed: int) -> list[ReviewItem]:
    """Up to ``n`` items, stratified by slice, check kind and the judge's verdict.

    Each stratum is shuffled by ``seed``; then one item is taken from each stratum in turn
    (strata in sorted order) until ``n`` are drawn or all are used: rare strata (the judge's
    failures) are represented as fully as they can be. The same items and seed give the same draw.
    """
    rng = random.Random(seed)
    strata: dict[tuple[str, str, bool], list[ReviewItem]] = {}
    for item in sorted(items, key=lambda i: i.key):
        strata.setdefault(item.stratum, []).append(item)
    queues = []
    for name in sorted(strata):
        queue = strata[name]
        rng.shuffle(queue)
        queues.append(queue)
    drawn: list[ReviewItem] = []
    while len(drawn) < n and any(queues):
        for queue in queues:
            if queue and len(drawn) < n:
                drawn.append(queue.pop())
    return drawn


def assign_reviewers(
    count: int, reviewers: Sequence[str], overlap: float, seed: int
) -> list[tuple[str, ...]]:
    """Reviewers per drawn item: ``round(overlap * count)`` items (chosen by ``seed``) get two.

    People take items in turn, so the load is even and the two of a doubled item differ.
    """
    doubled = set(random.Random(seed).sample(range(count), round(overlap * count)))
    out: list[tuple[str, ...]] = []
    turn = 0
    for i in range(count):
        width = 2 if i in doubled else 1
        out.append(tuple(reviewers[(turn + j) % len(reviewers)] for j in range(width)))
        turn += width
    return out
