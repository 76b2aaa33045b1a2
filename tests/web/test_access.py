"""Who may reach what: every registered route for every role and signed out; CSRF; sign-in links."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from fastapi import FastAPI
from starlette.testclient import TestClient

from casework.errors import UsageError
from casework.web import add_user, disable_user, new_link
from casework.web._accounts import ROLES
from casework.web._app import SECURITY_HEADERS
from casework.web._routes import ROUTES, RouteSpec, served_routes
from casework.workbench import Workbench
from tests.web.helpers import Person, form_value, person, sign_in_with
from tests.web.snapshots import TEAM

WHO = ["signed out", *ROLES]
_fresh = itertools.count()


def _url(spec: RouteSpec, wb: Workbench) -> str:
    path = spec.path.replace("{dataset}", "refunds").replace("{case_id}", "d-1")
    path = path.replace("{task_id}", "1")
    if "{token}" in path:  # a fresh, valid link each time: only the access rule may refuse
        path = path.replace("{token}", add_user(wb, f"u-{next(_fresh)}", ["labeller"]))
    return path


def test_every_served_route_is_registered(app: FastAPI) -> None:
    served, mounts = served_routes(app.routes)
    assert served == {(s.method, s.path) for s in ROUTES}
    assert mounts == ["/static"]


def _request(spec: RouteSpec, client: TestClient, url: str, csrf: str) -> int:
    if spec.method == "GET":
        return client.get(url, follow_redirects=False).status_code
    if "{token}" in spec.path:  # the sign-in form's own double-submit token
        page = client.get(url)
        pre = form_value(page.text, "csrf", last=True)
        return client.post(url, data={"csrf": pre}, follow_redirects=False).status_code
    response = client.request(
        spec.method, url, headers={"X-CSRF-Token": csrf}, data={}, follow_redirects=False
    )
    return response.status_code


#: A member of the signed-in team (tests.web.snapshots.TEAM) holding each role, and that role only.
MEMBER_OF = {"admin": "admin", "labeller": "lab-1", "adjudicator": "adj-1", "reviewer": "rev-1"}


def test_the_team_has_one_member_of_each_role_alone() -> None:
    assert set(MEMBER_OF) == set(ROLES)
    assert all(TEAM[member] == (role,) for role, member in MEMBER_OF.items())


@pytest.mark.parametrize("spec", ROUTES, ids=lambda s: f"{s.method} {s.path}")
def test_route_allows_exactly_its_roles(
    spec: RouteSpec, app: FastAPI, wb: Workbench, team: dict[str, Person]
) -> None:
    # Each role's member is signed in already (the team snapshot's sessions), as one role alone.
    people: dict[str, Person | None] = {"signed out": None}
    for role, member in MEMBER_OF.items():
        people[role] = team[member]
    for who in WHO:
        found = people[who]
        client = found.client if found else TestClient(app)
        status = _request(spec, client, _url(spec, wb), found.csrf if found else "")
        allowed = spec.public or (who != "signed out" and who in spec.roles)
        if allowed:
            assert status not in (401, 403), (who, status)
        else:
            assert status == (401 if who == "signed out" else 403), (who, status)


UNSAFE = [s for s in ROUTES if s.method != "GET" and s.csrf]


@pytest.mark.parametrize("spec", UNSAFE, ids=lambda s: f"{s.method} {s.path}")
def test_writes_without_the_csrf_token_are_refused(
    spec: RouteSpec, app: FastAPI, wb: Workbench
) -> None:
    role = spec.roles[0]
    someone = person(app, wb, "lab-1", role)
    url = _url(spec, wb)
    assert someone.client.request(spec.method, url, data={}).status_code == 403
    wrong = {"X-CSRF-Token": "0" * 64}
    assert someone.client.request(spec.method, url, headers=wrong).status_code == 403
    assert someone.client.request(spec.method, url, data={"csrf": "nope"}).status_code == 403
    # Another person's token does not do either.
    other = person(app, wb, "lab-2", role)
    headers = {"X-CSRF-Token": other.csrf}
    assert someone.client.request(spec.method, url, headers=headers).status_code == 403


def test_sign_in_form_needs_its_token(app: FastAPI, wb: Workbench) -> None:
    token = add_user(wb, "lab-1", ["labeller"])
    client = TestClient(app)
    assert client.post(f"/signin/{token}", data={}).status_code == 403
    client.get(f"/signin/{token}")
    assert client.post(f"/signin/{token}", data={"csrf": "forged"}).status_code == 403
    # The link survived the refused attempts.
    assert sign_in_with(client, token).status_code == 303


def test_sign_in_link_works_once(app: FastAPI, wb: Workbench) -> None:
    token = add_user(wb, "lab-1", ["labeller"])
    first = TestClient(app)
    response = sign_in_with(first, token)
    assert response.status_code == 303 and response.headers["location"] == "/label"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" not in cookie
    assert first.get("/label").status_code == 200
    second = TestClient(app)
    assert sign_in_with(second, token).status_code == 403
    assert second.get("/label").status_code == 401


def test_sign_in_link_expires(app: FastAPI, wb: Workbench) -> None:
    old = datetime.now(UTC) - timedelta(hours=73)
    token = add_user(wb, "lab-1", ["labeller"], now=old)
    assert sign_in_with(TestClient(app), token).status_code == 403
    fresh = new_link(wb, "lab-1")
    assert sign_in_with(TestClient(app), fresh).status_code == 303


@pytest.mark.parametrize("token", ["", "nodot", "a.b", "x" * 300 + ".y", "../../etc.passwd"])
def test_malformed_links_are_refused(app: FastAPI, token: str) -> None:
    client = TestClient(app)
    page = client.get(f"/signin/{token}")
    if page.status_code == 200:
        pre = form_value(page.text, "csrf", last=True)
        assert client.post(f"/signin/{token}", data={"csrf": pre}).status_code == 403
    else:
        assert page.status_code == 404


def test_disabled_user_is_signed_out_at_once(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    assert lab.client.get("/label").status_code == 200
    spare = new_link(wb, "lab-1")
    assert disable_user(wb, "lab-1") == 1
    assert lab.client.get("/label").status_code == 401
    assert sign_in_with(TestClient(app), spare).status_code == 403
    with pytest.raises(UsageError, match="disabled"):
        new_link(wb, "lab-1")


def test_sign_out_ends_the_session(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    cookie = lab.client.cookies.get("cw_session")
    assert lab.post("/signout").status_code == 303
    assert lab.client.get("/label").status_code == 401
    replay = TestClient(app, cookies={"cw_session": cookie or ""})
    assert replay.get("/label").status_code == 401


def test_forged_session_cookies_are_refused(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    cookie = lab.client.cookies.get("cw_session") or ""
    sid = cookie.split(".")[0]
    for forged in (f"{sid}.wrong", f"{sid}.", "garbage", f"other.{cookie.split('.')[1]}"):
        assert TestClient(app, cookies={"cw_session": forged}).get("/label").status_code == 401


def test_https_requests_get_secure_cookies(app: FastAPI, wb: Workbench) -> None:
    token = add_user(wb, "lab-1", ["labeller"])
    client = TestClient(app, base_url="https://testserver")
    response = sign_in_with(client, token)
    assert "Secure" in response.headers["set-cookie"]


def test_names_and_roles_are_checked(wb: Workbench) -> None:
    with pytest.raises(UsageError, match="labeller id"):
        add_user(wb, "bad name!", ["labeller"])
    with pytest.raises(UsageError, match="role"):
        add_user(wb, "lab-9", ["owner"])
    add_user(wb, "lab-9", ["labeller"])
    with pytest.raises(UsageError, match="exists"):
        add_user(wb, "lab-9", ["labeller"])


@pytest.mark.parametrize("url", ["/", "/label", "/nowhere", "/static/app.js", "/signin/a.b"])
def test_security_headers_on_every_response(app: FastAPI, url: str) -> None:
    response = TestClient(app).get(url)
    for name, value in SECURITY_HEADERS.items():
        assert response.headers[name] == value
    csp = response.headers["content-security-policy"]
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
