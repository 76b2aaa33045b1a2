"""Signing in with a one-time link, signing out, and the home page."""

from __future__ import annotations

import hmac
import secrets
from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from casework.web._accounts import SESSION_HOURS, end_session, redeem_link
from casework.web._render import render
from casework.web._routes import PUBLIC, SESSION_COOKIE, SIGNED_IN, route, viewer

router = APIRouter()

#: Double-submit cookie guarding the sign-in form (there is no session yet to hold a token).
PRE_COOKIE = "cw_signin"


def secure_cookies(request: Request) -> bool:
    """Whether cookies get ``Secure``: served over HTTPS, or ``--https`` (TLS at a proxy)."""
    return bool(request.app.state.https) or request.url.scheme == "https"


@route(router, "GET", "/", roles=PUBLIC)
def home(request: Request) -> Response:
    """The home page: what the signed-in person can open, or how to sign in."""
    return render(request, "home.html", title="casework")


@route(router, "GET", "/signin/{token}", roles=PUBLIC)
def signin_page(request: Request, token: str) -> Response:
    """A page with one button; following a link never spends it (link previews would)."""
    pre = secrets.token_hex(16)
    response = render(request, "signin.html", title="Sign in", token=token, pre=pre)
    response.set_cookie(
        PRE_COOKIE,
        pre,
        max_age=600,
        httponly=True,
        samesite="strict",
        secure=secure_cookies(request),
        path="/signin",
    )
    return response


@route(router, "POST", "/signin/{token}", roles=PUBLIC, csrf=False)
def signin(request: Request, token: str, csrf: Annotated[str, Form()] = "") -> Response:
    """Spend the link, start a session, go to the first page the person's roles open."""
    expected = request.cookies.get(PRE_COOKIE, "")
    if not csrf or not expected or not hmac.compare_digest(csrf, expected):
        raise HTTPException(403, "missing or wrong CSRF token; open your sign-in link again")
    redeemed = redeem_link(request.app.state.workbench, token)
    if redeemed is None:
        raise HTTPException(403, "this sign-in link is used, expired or wrong; ask for a new one")
    cookie, who = redeemed
    first = "/label" if "labeller" in who.roles else "/"
    response = RedirectResponse(first, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        cookie,
        max_age=SESSION_HOURS * 3600,
        httponly=True,
        samesite="lax",
        secure=secure_cookies(request),
        path="/",
    )
    response.delete_cookie(PRE_COOKIE, path="/signin")
    return response


@route(router, "POST", "/signout", roles=SIGNED_IN)
def signout(request: Request) -> Response:
    """End this session."""
    who = viewer(request)
    if who is not None:
        end_session(request.app.state.workbench, who.session_id)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response
