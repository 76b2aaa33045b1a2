"""The staff pages: adjudication, review and dashboard, through the test client."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from fastapi import FastAPI
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from sqlalchemy import select

from casework.labelling import dashboard, list_gaps
from casework.leakage.flagfile import read_flags
from casework.project import Project
from casework.review import add_items, generated_case_item, list_tasks
from casework.schema import Case
from casework.web._render import highlighted
from casework.web._routes import ROUTES
from casework.workbench import Workbench
from casework.workbench.models_labelling import RawLabelRow
from tests.web.helpers import HOSTILE, MARKERS, Person, form_value, person
from tests.web.pages import ANSWERS, plant_leak


def _decide(adj: Person, case_id: str, **form: str | list[str]) -> Any:
    page = adj.client.get(f"/adjudicate/refunds/{case_id}")
    assert page.status_code == 200, page.text
    return adj.post(
        f"/adjudicate/refunds/{case_id}", {"served": form_value(page.text, "served"), **form}
    )


def _adjudicated(wb: Workbench) -> dict[str, RawLabelRow]:
    with wb.session() as session:
        rows = session.scalars(select(RawLabelRow).where(RawLabelRow.role == "adjudicator"))
        return {r.case_id: r for r in rows}


def test_the_queue_shows_both_labels_names_hidden(team: dict[str, Person]) -> None:
    adj = team["adj-1"]
    page = adj.client.get("/adjudicate")
    assert page.status_code == 200
    text = page.text
    assert "2</strong> open disagreements" in text
    assert "lab-1" not in text and "lab-2" not in text  # names hidden by default
    # Both labels side by side: d-1 is first (case order inside the one contested slice).
    assert "<h1>d-1 " in text
    # A is the first labeller of d-1 (lab-2), B the second (lab-1).
    assert '<td class="side-A">escalate</td>' in text and '<td class="side-B">resolve</td>' in text
    shown = adj.client.get("/adjudicate?names=1").text
    assert 'A <span class="who">(lab-2)</span>' in shown and "(lab-1)" in shown


def test_lowest_agreement_slice_first(app: FastAPI, wb: Workbench) -> None:
    # status disagrees on s-1 (kappa undefined/low), refunds agrees on most: status first.
    lab1, lab2 = person(app, wb, "lab-1", "labeller"), person(app, wb, "lab-2", "labeller")
    from tests.web.pages import label

    for case_id, (one, two) in {
        "d-1": ("resolve", "resolve"),
        "d-3": ("resolve", "resolve"),
        "d-4": ("refuse", "refuse"),
        "u-1": ("refuse", "clarify"),
        "s-1": ("resolve", "clarify"),
    }.items():
        label(lab1, case_id, one)
        label(lab2, case_id, two)
    adj = person(app, wb, "adj-1", "adjudicator")
    text = adj.client.get("/adjudicate").text
    order = re.findall(r'<a href="/adjudicate/refunds/([^"?]+)"', text)
    assert order == ["s-1", "u-1"]


def test_pick_merge_write_and_gap(team: dict[str, Person], wb: Workbench, project: Project) -> None:
    adj = team["adj-1"]
    assert (
        _decide(adj, "d-1", choice="B", gap="1", gap_note="damaged vs broken?").status_code == 303
    )
    response = _decide(
        adj,
        "u-1",
        choice="write",
        outcome="escalate",
        required=["get_order"],
        facts="refund window is 30 days\n\n",
    )
    assert response.status_code == 303
    rows = _adjudicated(wb)
    assert rows["d-1"].outcome == "resolve"  # B: lab-1's
    assert (rows["u-1"].outcome, rows["u-1"].answer_facts) == (
        "escalate",
        ["refund window is 30 days"],
    )
    assert rows["u-1"].required["get_order"] is True
    assert all(r.seconds_on_screen is not None and r.seconds_on_screen >= 0 for r in rows.values())
    [gap] = list_gaps(project)
    assert (gap.slice, gap.note, gap.case_id, gap.author) == (
        "refunds",
        "damaged vs broken?",
        "d-1",
        "adj-1",
    )
    after = adj.client.get("/adjudicate?decided=u-1").text
    assert "Decided u-1." in after and "No disagreement waits for you." in after
    assert "damaged vs broken?" in after  # gap notes listed by slice


def test_merge_needs_a_side_per_differing_field(team: dict[str, Person], wb: Workbench) -> None:
    adj = team["adj-1"]
    refused = _decide(adj, "d-1", choice="merge", merge_outcome="C")
    assert refused.status_code == 422 and "from A or B" in refused.text
    assert _decide(adj, "d-1", choice="merge", merge_outcome="B").status_code == 303
    assert _adjudicated(wb)["d-1"].outcome == "resolve"


def test_a_forged_served_time_is_refused(team: dict[str, Person], wb: Workbench) -> None:
    adj = team["adj-1"]
    assert (
        adj.post("/adjudicate/refunds/d-1", {"choice": "A", "served": "1.abc"}).status_code == 400
    )
    assert _adjudicated(wb) == {}


def test_an_adjudication_form_is_bound_to_its_case_and_spent_once(
    team: dict[str, Person], wb: Workbench
) -> None:
    adj = team["adj-1"]
    page = adj.client.get("/adjudicate/refunds/d-1").text
    served = form_value(page, "served")
    # The token of d-1's page does not time u-1, and someone else's page does not time theirs.
    moved = adj.post("/adjudicate/refunds/u-1", {"choice": "A", "served": served})
    assert moved.status_code == 400
    other = team["adj-2"].post("/adjudicate/refunds/d-1", {"choice": "A", "served": served})
    assert other.status_code == 400
    refused = adj.post(
        "/adjudicate/refunds/d-1", {"choice": "merge", "merge_outcome": "C", "served": served}
    )
    assert refused.status_code == 422 and form_value(refused.text, "served") == served
    assert adj.post("/adjudicate/refunds/d-1", {"choice": "A", "served": served}).status_code == 303
    again = adj.post("/adjudicate/refunds/d-1", {"choice": "B", "served": served})
    assert again.status_code == 409 and "submitted already" in again.text
    assert set(_adjudicated(wb)) == {"d-1"}


def test_the_second_adjudicator_sees_a_conflict(team: dict[str, Person], wb: Workbench) -> None:
    first, second = team["adj-1"], team["adj-2"]
    page = second.client.get("/adjudicate/refunds/d-1")
    assert _decide(first, "d-1", choice="A").status_code == 303
    late = second.post(
        "/adjudicate/refunds/d-1", {"choice": "B", "served": form_value(page.text, "served")}
    )
    assert late.status_code == 409
    assert "Not stored: d-1 is no longer open for you (another adjudicator decided" in late.text
    assert _adjudicated(wb)["d-1"].labeller == "adj-1"


@pytest.fixture
def leaky(team: dict[str, Person], project: Project) -> dict[str, Person]:
    plant_leak(project)
    return team


def _review_page(rev: Person, task_id: int) -> str:
    page = rev.client.get(f"/review/{task_id}")
    assert page.status_code == 200, page.text
    return str(page.text)


def test_a_leakage_pair_is_synced_highlighted_and_decided(
    leaky: dict[str, Person], project: Project
) -> None:
    rev = leaky["rev-1"]
    synced = rev.post("/review/sync")
    assert synced.status_code == 303 and synced.headers["location"] == "/review?synced=1.0"
    assert "1 new leakage pair(s)" in rev.client.get(synced.headers["location"]).text
    [task] = list_tasks(project, kind="leakage-pair")
    text = _review_page(rev, task.id)
    # The shared span is marked, and the hostile text inside it is escaped.
    assert "<mark>My mug from order ORD-d-1 arrived broken. &lt;script&gt;" in text
    assert "<script>alert" not in text and "<img src=x" not in text
    assert "</mark>)&gt; please" in text  # the right side's unshared tail stays outside the mark
    for decision in ("move-left", "move-right", "keep", "template"):
        assert f'value="{decision}"' in text
    decided = rev.post(
        f"/review/{task.id}", {"decision": "keep", "served": form_value(text, "served")}
    )
    assert decided.status_code == 303
    [flag] = read_flags(project, "refunds")
    assert (flag.status, flag.decision, flag.reviewer) == ("decided", "keep", "rev-1")
    [done] = list_tasks(project, kind="leakage-pair")
    assert done.seconds_on_screen is not None and done.seconds_on_screen >= 0


def test_two_reviewers_one_item_the_loser_sees_why(
    leaky: dict[str, Person], project: Project
) -> None:
    one, two = leaky["rev-1"], leaky["rev-2"]
    one.post("/review/sync")
    [task] = list_tasks(project, kind="leakage-pair")
    first, second = _review_page(one, task.id), _review_page(two, task.id)
    assert (
        one.post(
            f"/review/{task.id}", {"decision": "keep", "served": form_value(first, "served")}
        ).status_code
        == 303
    )
    late = two.post(
        f"/review/{task.id}", {"decision": "template", "served": form_value(second, "served")}
    )
    assert late.status_code == 409
    assert "Someone else got there first" in late.text and "keep by rev-1" in late.text
    assert read_flags(project, "refunds")[0].decision == "keep"


def test_a_review_form_times_only_its_own_item(team: dict[str, Person], project: Project) -> None:
    rev = team["rev-1"]
    ids = [_generated(project, f"g-{i}") for i in range(2)]
    served = form_value(_review_page(rev, ids[0]), "served")
    moved = rev.post(f"/review/{ids[1]}", {"decision": "accept", "served": served})
    assert moved.status_code == 400
    assert (
        rev.post(f"/review/{ids[0]}", {"decision": "accept", "served": served}).status_code == 303
    )
    again = rev.post(f"/review/{ids[0]}", {"decision": "reject", "reason": "x", "served": served})
    assert again.status_code == 409 and "submitted already" in again.text
    assert [(t.status, t.decision) for t in list_tasks(project)] == [
        ("decided", "accept"),
        ("open", None),
    ]


def _generated(project: Project, case_id: str = "g-1") -> int:
    case = Case.model_validate(
        {
            "id": case_id,
            "slice": "refunds",
            "split": "dev",
            "source": "synthetic",
            "situation": {"goal": "refund", "turns": [{"role": "user", "content": HOSTILE}]},
        }
    )
    report = add_items(
        project, [generated_case_item("refunds", case, source="gen-v1", note=HOSTILE)]
    )
    return report.created[0]


def test_generated_cases_accept_edit_reject(team: dict[str, Person], project: Project) -> None:
    rev = team["rev-1"]
    synced = rev.post("/review/sync")  # no leakage scan yet: nothing to build, no error
    assert (synced.status_code, synced.headers["location"]) == (303, "/review?synced=0.0")
    ids = [_generated(project, f"g-{i}") for i in range(3)]
    text = _review_page(rev, ids[0])
    assert "gen-v1" in text and "<script>alert" not in text and "&lt;script&gt;" in text
    served = form_value(text, "served")
    assert (
        rev.post(f"/review/{ids[0]}", {"decision": "accept", "served": served}).status_code == 303
    )
    # Reject needs a reason; edit needs JSON the case schema accepts.
    text = _review_page(rev, ids[1])
    refused = rev.post(
        f"/review/{ids[1]}", {"decision": "reject", "served": form_value(text, "served")}
    )
    assert refused.status_code == 422 and "needs a reason" in refused.text
    ok = rev.post(
        f"/review/{ids[1]}",
        {"decision": "reject", "reason": "off-topic", "served": form_value(text, "served")},
    )
    assert ok.status_code == 303
    text = _review_page(rev, ids[2])
    bad = rev.post(
        f"/review/{ids[2]}",
        {"decision": "edit", "case_json": "{not json", "served": form_value(text, "served")},
    )
    assert bad.status_code == 422 and "not JSON" in bad.text and "{not json" in bad.text
    wrong = rev.post(
        f"/review/{ids[2]}",
        {"decision": "edit", "case_json": '{"id": "g-2"}', "served": form_value(text, "served")},
    )
    assert wrong.status_code == 422
    edited = (
        '{"id": "g-2", "slice": "refunds", "split": "dev", "source": "synthetic",'
        ' "situation": {"goal": "edited goal", "turns": [{"role": "user", "content": "hi"}]}}'
    )
    assert (
        rev.post(
            f"/review/{ids[2]}",
            {"decision": "edit", "case_json": edited, "served": form_value(text, "served")},
        ).status_code
        == 303
    )
    from casework.dataset import load_dataset

    cases = {c.id: c for c in load_dataset(project, "refunds").cases}
    assert "g-0" in cases and "g-1" not in cases and cases["g-2"].situation.goal == "edited goal"


def test_dashboard_figures_match_the_library_and_sklearn(
    team: dict[str, Person], project: Project
) -> None:
    admin = team["admin"]
    page = admin.client.get("/dashboard")
    assert page.status_code == 200
    text = page.text
    board = dashboard(project, "refunds")
    [refunds] = [s for s in board.slices if s.slice == "refunds"]
    cases = ["d-1", "d-3", "d-4", "u-1"]
    oracle = cohen_kappa_score(
        [ANSWERS["lab-1"][c] for c in cases], [ANSWERS["lab-2"][c] for c in cases]
    )
    assert refunds.kappa == pytest.approx(oracle)
    row = re.search(r'<tr data-slice="refunds">(.*?)</tr>', text, re.S)
    assert row
    assert f'<td class="kappa">{oracle:.2f}</td>' in row.group(1)
    assert '<td class="disagreements">2</td>' in row.group(1)
    # The band as the library gives it (4 rows: too few for a band that may gate).
    assert (f">{refunds.band}" if refunds.band else ">—") in row.group(1)
    assert ("provisional" in row.group(1)) == refunds.provisional
    assert re.search(
        r'<tr data-labeller="lab-1"><td>lab-1</td><td class="done">5</td><td class="assigned">5</td>',
        text,
    )
    defined = [s for s in board.slices if s.kappa is not None]
    assert len(defined) == 1 and "<svg" in text  # status has one double-labelled row
    assert text.count('class="kappa-dot"') == 1 and text.count('class="undefined"') == 1


def test_staff_reach_the_dashboard(team: dict[str, Person]) -> None:
    for who in ("admin", "adj-1", "rev-1"):
        assert team[who].client.get("/dashboard").status_code == 200
    assert team["lab-1"].client.get("/dashboard").status_code == 403


STAFF = [s for s in ROUTES if s.path.startswith(("/adjudicate", "/review", "/dashboard"))]


def test_no_staff_page_reaches_a_labeller(leaky: dict[str, Person], project: Project) -> None:
    leaky["rev-1"].post("/review/sync")
    lab = leaky["lab-1"]
    task_id = list_tasks(project)[0].id
    assert len(STAFF) >= 7
    targets = [("d-1", task_id), ("u-1", task_id), ("nope", 999), ("..%2F..%2Fetc", 0)]
    for spec in STAFF:
        for case_id, task in targets:
            url = spec.path.format(dataset="refunds", case_id=case_id, task_id=task)
            response = lab.client.request(spec.method, url, headers={"X-CSRF-Token": lab.csrf})
            assert response.status_code in (403, 404), (spec, url, response.status_code)
            # Nothing of the staff pages in the bytes: no kappa, no other label, no names.
            for hidden in (b"kappa", b"escalate", b"lab-2", b"Jaccard", b"t-1"):
                assert hidden not in response.content, (url, hidden)
            for place, marker in MARKERS.items():
                assert marker.encode() not in response.content, (place, url)
    # Nothing was decided by the refused writes.
    assert [t.status for t in list_tasks(project)] == ["open"]
    assert "No disagreement" not in leaky["adj-1"].client.get("/adjudicate").text


def test_hostile_text_is_inert_on_every_staff_page(
    leaky: dict[str, Person], project: Project
) -> None:
    leaky["rev-1"].post("/review/sync")
    task_id = list_tasks(project)[0].id
    pages = [
        (leaky["adj-1"], "/adjudicate/refunds/d-1"),
        (leaky["rev-1"], f"/review/{task_id}"),
        (leaky["admin"], "/dashboard"),
    ]
    for who, url in pages:
        response = who.client.get(url)
        assert response.status_code == 200
        assert b"<script>alert" not in response.content and b"<img src=x" not in response.content
        assert b"<script" not in response.content.replace(b'<script src="/static/', b"")
    adjudicate_page = leaky["adj-1"].client.get("/adjudicate/refunds/d-1").text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in adjudicate_page


def test_staff_routes_never_answer_500(leaky: dict[str, Person], project: Project) -> None:
    leaky["rev-1"].post("/review/sync")
    task_id = list_tasks(project)[0].id
    holder = {"adjudicator": "adj-1", "reviewer": "rev-1", "admin": "admin"}
    for spec in STAFF:
        who = leaky[holder[spec.roles[0]]]
        for case_id, task in (("d-1", task_id), ("nope", 999)):
            url = spec.path.format(dataset="refunds", case_id=case_id, task_id=task)
            response = who.client.request(
                spec.method, url, headers={"X-CSRF-Token": who.csrf}, data={}
            )
            assert response.status_code < 500, (spec, url, response.status_code)
        assert who.client.get("/review/abc").status_code in (403, 404, 422)


@given(
    st.text(alphabet="ab <>&\"'", max_size=30),
    st.lists(st.tuples(st.integers(-3, 35), st.integers(-3, 35)), max_size=5),
)
def test_highlighting_escapes_everything_and_keeps_the_text(
    text: str, spans: list[tuple[int, int]]
) -> None:
    out = str(highlighted(text, [list(s) for s in spans]))
    plain = out.replace("<mark>", "").replace("</mark>", "")
    assert "<" not in plain and ">" not in plain  # every angle bracket of the text is escaped
    assert html.unescape(plain) == text
    marked = "".join(re.findall(r"<mark>(.*?)</mark>", out))
    covered = {i for s, e in spans for i in range(max(0, s), min(len(text), e))}
    assert len(html.unescape(marked)) == len(covered)


def test_broken_project_files_answer_503_without_their_contents(
    team: dict[str, Person], project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = project.root / "datasets" / "refunds" / "cases.jsonl"
    cases.write_text(cases.read_text() + '{"id": "broken", "secret-marker-7": \n', "utf-8")
    for who, url in (("admin", "/dashboard"), ("adj-1", "/adjudicate"), ("lab-1", "/label")):
        response = team[who].client.get(url)
        assert response.status_code == 503, (url, response.status_code, response.text[:300])
        assert "secret-marker-7" not in response.text
        # the next step is data, shown as words (no page of the app checks a dataset)
        assert (
            '<p class="next-step">Next: the project&#39;s maintainer runs `casework dataset check`'
            "</p>" in response.text
        )
    assert "secret-marker-7" in capsys.readouterr().err  # the server's log says why
