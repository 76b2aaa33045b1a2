"""The route registry: every page and endpoint declares who may reach it, in one place.

:func:`route` registers a handler on an area's router *and* in :data:`ROUTES`, with the one
access check, :func:`require_role`: signed out -> 401, signed in without one of the roles -> 403,
a POST/PUT/PATCH/DELETE without the session's CSRF token -> 403. ``tests/web`` walks
:data:`ROUTES` for every role, and fails on any route the app serves that is not in it.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from casework.web._accounts import ROLES, Viewer, viewer_of

F = TypeVar("F", bound=Callable[..., Any])

#: Cookie holding ``<session id>.<secret>``.
SESSION_COOKIE = "cw_session"
#: Header htmx sends the CSRF token in (set on ``<body hx-headers>`` by the base template).
CSRF_HEADER = "X-CSRF-Token"
#: Form field plain forms send the CSRF token in.
CSRF_FIELD = "csrf"
#: Every role: for pages any signed-in person may see.
SIGNED_IN: tuple[str, ...] = ROLES
#: No role needed (sign-in pages, static files).
PUBLIC: tuple[str, ...] = ()
_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class RouteSpec:
    """One registered route.

    Attributes:
        method: HTTP method.
        path: Path template (``/label/{dataset}/{case_id}``).
        roles: Roles that may reach it; empty for public routes.
        nav: Label of its link in the navigation bar (GET pages of an area), if any.
        csrf: Whether unsafe methods need the session's CSRF token (all but sign-in, which
            checks its own double-submit token).
    """

    method: str
    path: str
    roles: tuple[str, ...]
    nav: str | None = None
    csrf: bool = True

    @property
    def public(self) -> bool:
        """Reachable signed out."""
        return not self.roles


#: Every route of the app, in registration order.
ROUTES: list[RouteSpec] = []


def viewer(request: Request) -> Viewer | None:
    """The signed-in person of this request (looked up once per request)."""
    if not hasattr(request.state, "viewer"):
        wb = request.app.state.workbench
        request.state.viewer = viewer_of(wb, request.cookies.get(SESSION_COOKIE))
    found: Viewer | None = request.state.viewer
    return found


async def _look_up(request: Request) -> Viewer | None:
    """:func:`viewer`, with the database (and a first argon2 check) off the event loop."""
    if not hasattr(request.state, "viewer"):
        wb = request.app.state.workbench
        cookie = request.cookies.get(SESSION_COOKIE)
        request.state.viewer = await run_in_threadpool(viewer_of, wb, cookie)
    return viewer(request)


async def check_csrf(request: Request, expected: str) -> None:
    """Refuse (403) an unsafe request whose CSRF token (header or form field) is not ``expected``."""
    given = request.headers.get(CSRF_HEADER)
    if given is None:
        content_type = request.headers.get("content-type", "")
        if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            value = (await request.form()).get(CSRF_FIELD)
            given = value if isinstance(value, str) else None
    if not given or not expected or not hmac.compare_digest(given, expected):
        raise HTTPException(403, "missing or wrong CSRF token; reload the page and try again")


def require_role(*roles: str, csrf: bool = True) -> Callable[..., Any]:
    """The access dependency: signed in, holding one of ``roles``, and the CSRF token on writes."""

    async def dependency(request: Request) -> Viewer | None:
        found = await _look_up(request)
        unsafe = csrf and request.method in _UNSAFE
        if not roles:
            if unsafe:
                await check_csrf(request, found.csrf if found else "")
            return found
        if found is None:
            raise HTTPException(401, "sign in with the link you were given")
        if not found.roles & set(roles):
            raise HTTPException(403, "your roles do not include this page")
        if unsafe:
            await check_csrf(request, found.csrf)
        return found

    return dependency


def route(
    router: APIRouter,
    method: str,
    path: str,
    *,
    roles: Iterable[str],
    nav: str | None = None,
    csrf: bool = True,
) -> Callable[[F], F]:
    """Register a handler on ``router`` and in :data:`ROUTES`, guarded by :func:`require_role`.

    The handler receives the :class:`Viewer` as a parameter named ``who`` when it declares one.
    """
    allowed = tuple(roles)
    unknown = [r for r in allowed if r not in ROLES]
    if unknown:
        raise ValueError(f"route {method} {path}: unknown role {unknown[0]}")
    spec = RouteSpec(method.upper(), path, allowed, nav, csrf)
    if any(s.method == spec.method and s.path == path for s in ROUTES):
        raise ValueError(f"route {method} {path} is registered twice")
    ROUTES.append(spec)

    def decorate(fn: F) -> F:
        router.add_api_route(
            path,
            fn,
            methods=[spec.method],
            dependencies=[Depends(require_role(*allowed, csrf=csrf))],
            include_in_schema=False,
        )
        return fn

    return decorate


def nav_links(who: Viewer | None) -> list[tuple[str, str]]:
    """``(label, path)`` of the navigation links ``who`` may follow."""
    if who is None:
        return []
    return [
        (s.nav, s.path)
        for s in ROUTES
        if s.nav and s.method == "GET" and (not s.roles or who.roles & set(s.roles))
    ]


def served_routes(routes: Iterable[Any]) -> tuple[set[tuple[str, str]], list[str]]:
    """What an app really serves: ``(method, path)`` of its API routes, and its mounts' paths.

    Routers included into the app are walked (FastAPI nests them); the role tests compare the
    result with :data:`ROUTES`, so a route added without :func:`route` fails them.
    """
    methods: set[tuple[str, str]] = set()
    mounts: list[str] = []
    for item in routes:
        inner = getattr(item, "original_router", None)
        if inner is not None:
            more, deeper = served_routes(inner.routes)
            methods |= more
            mounts += deeper
        elif isinstance(item, APIRoute):
            methods |= {(m, item.path) for m in item.methods or ()}
        else:
            mounts.append(str(getattr(item, "path", repr(item))))
    return methods, mounts
