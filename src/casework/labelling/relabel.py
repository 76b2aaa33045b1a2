"""Relabel by rule, reading the project: previews of a selector and why a row went back.

Entry points: :func:`preview_relabel` (what a bump's selector would send back, per dataset,
before anything is written or sent) and :func:`sent_back_rules` (the rules that sent a case back,
read from its guideline file).
"""

from __future__ import annotations

from casework.dataset import load_dataset
from casework.labelling import _cache
from casework.labelling.guidelines import read_guideline
from casework.labelling.relabel_rule import (
    RelabelRule,
    RulePreview,
    compile_selector,
    preview_rule,
    rules_since,
    touched_by,
)
from casework.project import Project
from casework.schema import Case

__all__ = ["preview_relabel", "sent_back_rules"]


def preview_relabel(project: Project, slice_name: str, selector: str) -> list[RulePreview]:
    """What ``selector`` selects among the rows labelled under ``slice_name``'s current guideline.

    One preview per dataset holding rows of the slice labelled under that version (the rows a
    bump makes stale), by dataset name.

    Raises:
        UsageError: The selector is not JMESPath.
        ConfigError, InputError: No guideline for the slice, or a bad one.
        InputErrors: A dataset's files are bad.
    """
    compile_selector(selector)
    current = read_guideline(project, slice_name).version
    out = []
    for name in project.dataset_names():
        cases = load_dataset(project, name).cases
        preview = preview_rule(name, cases, slice_name, current, selector)
        if preview.labelled:
            out.append(preview)
    return out


def sent_back_rules(project: Project, case: Case, current: str) -> tuple[RelabelRule, ...]:
    """The rules that sent ``case`` back to labelling under ``current``, if rules did.

    Empty when the case has no label, is labelled under ``current``, or a version since its label
    came without a selector (then the whole guideline change sent it back, not a rule).
    """
    labelled_under = case.label.guideline_version if case.label else None
    if labelled_under is None or labelled_under == current:
        return ()
    guideline = _cache.guideline(project, case.slice)  # one read per file change, not per row
    rules = rules_since(guideline.text, case.slice, labelled_under, current)
    if not rules:
        return ()
    return touched_by(case, rules)
