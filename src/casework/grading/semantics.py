"""Label semantics beyond one outcome and judged facts: deterministic facts and NL assertions.

``fact_match`` checks the label's ``matched_facts`` (each `exact`, `normalised` or `regex`)
against the final reply, with no judge and whatever the oracle class (so they sit beside state
assertions); ``nl_assertions`` asks the judge about each natural-language assertion of the label
as an ``answer_fact`` finding, under the same certification as judged facts. Entry points:
:func:`normalise_text`, :func:`fact_matches`.
"""

from __future__ import annotations

import re
import unicodedata

from casework.grading.graders import GradeContext, register_grader
from casework.grading.verdict import CheckResult
from casework.llm import LLMError
from casework.schema import AnswerFact

__all__ = ["fact_matches", "normalise_text"]

_NON_WORD = re.compile(r"[\W_]+")


def normalise_text(text: str) -> str:
    """Text as `normalised` facts compare it.

    NFKC, case-folded, every run of characters that are not letters or digits (punctuation,
    spaces, underscores) made one space, stripped.

    >>> normalise_text("  Refund of $79.00 — ISSUED!")
    'refund of 79 00 issued'
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _NON_WORD.sub(" ", folded).strip()


def fact_matches(fact: AnswerFact, reply: str) -> bool:
    """Whether ``reply`` states ``fact`` under its deterministic ``match``.

    `exact`: the text appears verbatim; `normalised`: the normalised text appears in the
    normalised reply as whole words (``"79"`` is not found in ``"790"``); `regex`: the expression
    matches somewhere in the reply.

    """
    if fact.match == "exact":
        return fact.text in reply
    if fact.match == "normalised":
        wanted = normalise_text(fact.text)
        return f" {wanted} " in f" {normalise_text(reply)} "
    return re.search(fact.text, reply) is not None


@register_grader("fact_match")
def fact_match(ctx: GradeContext) -> CheckResult | None:
    """Each of the label's ``matched_facts`` found in the final reply, as its ``match`` says."""
    label = ctx.case.label
    facts = label.matched_facts if label is not None else []
    if not facts:
        return None
    reply = ctx.trajectory.reply()
    missing = [f"'{f.text}' ({f.match})" for f in facts if not fact_matches(f, reply)]
    if missing:
        return CheckResult(
            name="fact_match", status="fail", evidence="reply lacks " + "; ".join(missing)
        )
    return CheckResult(
        name="fact_match",
        status="pass",
        evidence=f"reply holds all {len(facts)} deterministic fact(s)",
    )


@register_grader("nl_assertions")
def nl_assertions(ctx: GradeContext) -> CheckResult | None:
    """Each natural-language assertion of the label holds, as the judge reads the final reply.

    Each assertion is one `answer_fact` finding (``findings``, in label order), so the judge's
    certification for answer facts decides whether the check may gate, and review sheets offer
    each finding to people (numbered after the judged answer facts).
    """
    label = ctx.case.label
    if label is None or not label.nl_assertions:
        return None
    name = "nl_assertions"
    if ctx.judge is None:
        why = ctx.no_judge or "none configured"
        return CheckResult(name=name, status="undetermined", evidence=f"needs a judge; {why}")
    try:
        answer = ctx.judge.check_facts(
            ctx.trajectory.reply(), label.nl_assertions, ctx.case.oracle.rubric
        )
    except LLMError as exc:
        return CheckResult(
            name=name, status="undetermined", evidence=f"judge failed: {exc}", judged=True
        )
    found = {f.index: f for f in answer.facts}
    findings = [i in found and found[i].present for i in range(len(label.nl_assertions))]
    failed = [f"'{text}'" for text, ok in zip(label.nl_assertions, findings, strict=True) if not ok]
    admissible = ctx.judge_admissible("answer_fact")
    if failed:
        return CheckResult(
            name=name,
            status="fail",
            evidence="assertion(s) do not hold: " + "; ".join(failed),
            judged=True,
            admissible=admissible,
            findings=findings,
        )
    return CheckResult(
        name=name,
        status="pass",
        evidence=f"all {len(findings)} assertion(s) hold",
        judged=True,
        admissible=admissible,
        findings=findings,
    )
