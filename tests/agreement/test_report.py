"""The agreement report over a dataset's cases and raw labels (casework.agreement.report)."""

from __future__ import annotations

import json

import pytest

from casework.agreement import AgreementReport, SliceAgreement, agreement_report
from casework.agreement.bands import BandEdges
from casework.agreement.report import AgreementSettings, case_features
from casework.errors import InputError, UsageError
from tests.agreement.builders import OLD_ROWS, make_label, refunds_id, seed_dataset

TOOLS = ["escalate_to_human", "get_order", "issue_refund"]
FAST = AgreementSettings(bootstrap=300, seed=1)


def by_key(report: AgreementReport) -> dict[tuple[str, str | None], SliceAgreement]:
    return {(s.slice, s.guideline_version): s for s in report.slices}


def test_seed_example_per_slice_and_guideline() -> None:
    cases, labels = seed_dataset()
    report = agreement_report(cases, labels, dataset="refunds@working", tools=TOOLS, settings=FAST)
    slices = by_key(report)
    assert list(slices) == [
        ("refunds", "refunds-g7"),
        ("refunds", "refunds-g8"),
        ("status", "status-g2"),
    ]
    g7 = slices["refunds", "refunds-g7"]
    assert g7.rows == 60
    assert g7.kappa.p_o == pytest.approx(0.75)
    assert g7.kappa.p_e == pytest.approx(0.48)
    assert g7.kappa.kappa == pytest.approx(0.27 / 0.52, abs=1e-4)
    assert g7.verdict.band == "ambiguous"
    assert not g7.verdict.gate_eligible
    assert not g7.current
    assert g7.bootstrap is not None and g7.bootstrap.n_resamples == 300
    assert g7.disagreeing_case_ids == tuple(refunds_id(i) for i in range(15))
    assert g7.confusion.categories == ("resolve", "clarify", "refuse", "escalate")
    assert g7.confusion.counts[1] == (0, 29, 0, 7)
    assert g7.labellers == 3  # lab-a, lab-b and the auditor lab-f
    # The adjudicator's labels and the row doubled by a disagreement are left out.
    assert g7.exclusions.adjudicator_labels == 15
    assert g7.exclusions.disagreement_labels == 1
    assert g7.exclusions.single_label_rows == 4
    top = g7.clusters[0]
    assert (top.feature, top.in_disagreements, top.disagreements) == ("orders.age_days>30", 11, 15)
    assert (top.in_rows, top.rows) == (20, 60)
    assert top.describe().startswith("11 of 15 disagreements involve orders.age_days>30")
    g8 = slices["refunds", "refunds-g8"]
    assert g8.current and g8.rows == len(OLD_ROWS)
    assert g8.kappa.kappa == pytest.approx(0.9)
    assert g8.verdict.band == "dependable"
    assert g8.verdict.gate_eligible
    status = slices["status", "status-g2"]
    assert status.verdict.status == "undefined_single_category"
    assert status.kappa.p_o == 1.0
    assert status.ac1.coefficient == 1.0  # AC1 stays defined over the 4 outcome classes
    assert report.gate_eligibility() == {"refunds": True, "status": False}
    assert report.grouping.startswith("grouped by slice and guideline version: versions are never")


def test_per_tool_required_and_forbidden_separately() -> None:
    cases, labels = seed_dataset()
    g7 = by_key(agreement_report(cases, labels, tools=TOOLS, settings=FAST))[
        "refunds", "refunds-g7"
    ]
    tools = {(t.tool, t.question): t for t in g7.tools}
    assert len(tools) == 6
    get_order = tools["get_order", "required"]
    assert get_order.disagreeing_case_ids == ("r-030", "r-031", "r-032")
    assert (get_order.agreement.both_yes, get_order.agreement.only_first) == (57, 3)
    assert get_order.agreement.status == "ok"
    assert tools["get_order", "forbidden"].agreement.status == "insufficient_positives"
    assert tools["issue_refund", "required"].agreement.status == "insufficient_positives"
    escalate = tools["escalate_to_human", "required"]
    assert escalate.agreement.disagreements == 15
    assert g7.tool_disagreement_case_ids == tuple(refunds_id(i) for i in [*range(15), 30, 31, 32])


def test_multi_rater_when_a_row_has_three_labels() -> None:
    cases, labels = seed_dataset()
    slices = by_key(agreement_report(cases, labels, settings=FAST))
    multi = slices["refunds", "refunds-g7"].multi_rater
    assert multi is not None and multi.rows_over_two == 3
    assert multi.fleiss.n_ratings == 123
    assert multi.krippendorff.status == "ok"
    assert slices["refunds", "refunds-g8"].multi_rater is None


def test_only_calibration_and_audit_overlap_feeds_kappa() -> None:
    cases, labels = seed_dataset()
    # Turn the g8 second labels into disagreement overlap: g8 has no usable pairs any more.
    changed = [
        rec.model_copy(update={"overlap_reason": "disagreement"})
        if rec.guideline_version == "refunds-g8" and rec.role == "second"
        else rec
        for rec in labels
    ]
    g8 = by_key(agreement_report(cases, changed, settings=FAST))["refunds", "refunds-g8"]
    assert g8.rows == 0
    assert g8.exclusions.disagreement_labels == len(OLD_ROWS)
    assert g8.exclusions.single_label_rows == len(OLD_ROWS)
    assert g8.verdict.status == "insufficient_rows"
    # A second label with no reason at all is not counted either.
    unreasoned = [
        rec.model_copy(update={"overlap_reason": None})
        if rec.guideline_version == "refunds-g8"
        else rec
        for rec in labels
    ]
    g8 = by_key(agreement_report(cases, unreasoned, settings=FAST))["refunds", "refunds-g8"]
    assert (g8.rows, g8.exclusions.no_overlap_reason_rows) == (0, len(OLD_ROWS))


def test_guideline_filter_says_what_it_left_out() -> None:
    cases, labels = seed_dataset()
    report = agreement_report(cases, labels, guideline="refunds-g8", settings=FAST)
    assert [(s.slice, s.guideline_version) for s in report.slices] == [("refunds", "refunds-g8")]
    others = sum(1 for rec in labels if rec.guideline_version != "refunds-g8")
    assert others == 60 + 60 + 15 + 3 + 4 + 1 + 24
    assert report.grouping == (
        "only labels under guideline 'refunds-g8' (167 labels under other versions left out)"
    )


def test_slice_filter_and_min_rows() -> None:
    cases, labels = seed_dataset()
    settings = AgreementSettings(bootstrap=0, min_rows=30, edges=BandEdges(0.5, 0.7))
    report = agreement_report(cases, labels, slice="refunds", settings=settings)
    slices = by_key(report)
    assert set(slices) == {("refunds", "refunds-g7"), ("refunds", "refunds-g8")}
    assert slices["refunds", "refunds-g7"].verdict.band == "review"  # 0.519 with gate edge 0.5
    assert slices["refunds", "refunds-g7"].bootstrap is None
    assert slices["refunds", "refunds-g8"].verdict.status == "insufficient_rows"  # 20 < 30


def test_slice_without_labels_is_listed_as_insufficient() -> None:
    cases, labels = seed_dataset()
    extra = cases[0].model_copy(update={"id": "x-1", "slice": "exchanges"})
    report = agreement_report([*cases, extra], labels, settings=FAST)
    empty = by_key(report)["exchanges", None]
    assert empty.rows == 0 and empty.current
    assert empty.verdict.status == "insufficient_rows"
    assert "slice 'exchanges' has no label records: no agreement to measure." in report.notes
    assert report.gate_eligibility()["exchanges"] is False


def test_unknown_slice_or_guideline_is_a_usage_error() -> None:
    cases, labels = seed_dataset()
    with pytest.raises(UsageError) as exc:
        agreement_report(cases, labels, dataset="refunds@2", slice="nope")
    assert str(exc.value) == (
        "slice: no case of refunds@2 is in slice 'nope' (slices: refunds, status)."
    )
    with pytest.raises(UsageError) as exc:
        agreement_report(cases, labels, dataset="refunds@2", guideline="refunds-g1")
    assert str(exc.value) == (
        "guideline: no label of refunds@2 is under 'refunds-g1' "
        "(versions: refunds-g7, refunds-g8, status-g2)."
    )


def test_a_labeller_labelling_a_case_twice_is_an_input_error() -> None:
    cases, labels = seed_dataset()
    dup = make_label(refunds_id(0), "lab-a", "second", "clarify", "refunds-g7", reason="audit")
    with pytest.raises(InputError) as exc:
        agreement_report(cases, [*labels, dup], labels_path="datasets/refunds/labels.jsonl")
    assert str(exc.value) == (
        f"datasets/refunds/labels.jsonl:{len(labels) + 1}: labeller: labelled case 'r-000' twice "
        "under guideline 'refunds-g7'; agreement needs one label per person. Got 'lab-a'."
    )


def test_case_features() -> None:
    cases, _ = seed_dataset()
    feats = case_features(cases[0])
    assert feats["orders.age_days"] == [31]
    assert feats["orders.status"] == ["delivered"]
    assert feats["case.source"] == ["mined"]
    assert feats["case.turns"] == [1]
    assert "case.injected" not in feats


def test_report_is_json_ready_and_reproducible() -> None:
    cases, labels = seed_dataset()
    one = agreement_report(cases, labels, settings=FAST).as_json()
    two = agreement_report(cases, labels, settings=FAST).as_json()
    assert json.dumps(one) == json.dumps(two)
    assert one["gate_eligibility"] == {"refunds": True, "status": False}
    assert one["slices"][0]["verdict"]["band"] == "ambiguous"


def test_kappa_intervals_stay_inside_minus_one_to_one() -> None:
    cases, labels = seed_dataset()
    g8 = by_key(agreement_report(cases, labels, settings=FAST))["refunds", "refunds-g8"]
    # The asymptotic interval of κ 0.90 on these rows reaches 1.09; a report shows it clipped.
    assert g8.kappa.kappa == pytest.approx(0.9)
    assert g8.kappa.ci_high == 1.0
    assert g8.kappa.ci_low == pytest.approx(0.7099, abs=1e-4)
