"""The FastAPI application: areas' routers, security headers, error pages, static files."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from casework.errors import CaseworkError, Hint, UsageError
from casework.project import Project, load_project
from casework.web import _adjudicate, _dashboard, _label, _review, _signin
from casework.web._hints import hint_step
from casework.web._render import render
from casework.web._served import served_clock
from casework.workbench import open_workbench

STATIC = Path(__file__).parent / "static"

#: Sent on every response. No inline script or style anywhere, so none is allowed.
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
_RAW_HEADERS = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every HTTP response (errors included)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k for k, _ in _RAW_HEADERS}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message["headers"] = kept + _RAW_HEADERS
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, StarletteHTTPException) else 500
    detail = exc.detail if isinstance(exc, StarletteHTTPException) else "server error"
    return render(request, "error.html", status=status, status_code=status, detail=str(detail))


async def _project_error(request: Request, exc: Exception) -> Response:
    # A casework error no page handled: the project's files or workbench cannot be used (a
    # broken cases.jsonl, a missing guideline...). The message goes to the server's log only:
    # it may quote a file's contents ("Got ..."), which a labeller must not see.
    print(f"casework serve: {request.method} {request.url.path}: {exc}", file=sys.stderr)
    return render(
        request,
        "error.html",
        status=503,
        status_code=503,
        detail="the project's files cannot be used right now: the server's log says why",
        next_steps=[hint_step(Hint("dataset check"))],
    )


async def _bad_request(request: Request, exc: Exception) -> Response:
    return render(
        request, "error.html", status=422, status_code=422, detail="the request is malformed"
    )


def create_app(project: Project, *, https: bool = False, db_pool: int | None = None) -> FastAPI:
    """The web app on ``project``'s workbench (opened now, closed when the app stops).

    Args:
        project: The project (its workbench URL is the CLI's: `CASEWORK_DB_URL` or config).
        https: Mark session cookies Secure even on plain HTTP (TLS ends at a proxy).
        db_pool: Database connections this worker keeps open (default
            :data:`casework.workbench.db.SERVER_POOL_SIZE`); a few more open at a peak.

    Raises:
        UsageError: ``db_pool`` below 1.
    """
    if db_pool is not None and db_pool < 1:
        raise UsageError(f"the pool needs at least 1 connection. Got {db_pool}.", param="db_pool")
    workbench = open_workbench(project, server=True, pool_size=db_pool)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        workbench.close()

    app = FastAPI(
        title="casework", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.project = project
    app.state.workbench = workbench
    app.state.served = served_clock(workbench)
    app.state.https = https
    app.include_router(_signin.router)
    app.include_router(_label.router)
    app.include_router(_adjudicate.router)
    app.include_router(_review.router)
    app.include_router(_dashboard.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _bad_request)
    app.add_exception_handler(CaseworkError, _project_error)
    app.add_middleware(SecurityHeaders)
    return app


#: Environment variables :func:`app_from_env` reads (set by `casework serve` for its workers).
PROJECT_ENV = "CASEWORK_WEB_PROJECT"
HTTPS_ENV = "CASEWORK_WEB_HTTPS"
DB_POOL_ENV = "CASEWORK_WEB_DB_POOL"


def app_from_env() -> FastAPI:
    """The app for an ASGI server's worker: ``uvicorn --factory casework.web:app_from_env``.

    The project is :data:`PROJECT_ENV` (default: the nearest `casework.toml` upwards); the
    pool size :data:`DB_POOL_ENV` (default: :func:`create_app`'s).

    Raises:
        UsageError: :data:`DB_POOL_ENV` is not a whole number of at least 1.
    """
    folder = os.environ.get(PROJECT_ENV)
    project = load_project(Path(folder) if folder else None)
    pool = os.environ.get(DB_POOL_ENV, "").strip()
    if pool and not pool.isdigit():
        raise UsageError(f"{DB_POOL_ENV} must be a whole number. Got '{pool}'.", param="db_pool")
    return create_app(
        project, https=os.environ.get(HTTPS_ENV) == "1", db_pool=int(pool) if pool else None
    )


#: Seconds the server keeps an idle keep-alive connection open. Longer than clients keep idle
#: connections in their pools (httpx 5 s by default, the benchmark's 30 s, a load balancer's usual
#: 60 s): the client, not the server, then closes an idle connection. When the server closes first
#: (uvicorn's default is 5 s) a client reusing the connection at that moment gets "connection
#: reset" for a request that may already have been sent.
KEEP_ALIVE_SECONDS = 75


def server_options(host: str, port: int) -> dict[str, Any]:
    """The uvicorn options `casework serve` runs with (host, port, logging, keep-alive)."""
    return {
        "host": host,
        "port": port,
        "log_level": "warning",
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
    }


def serve(
    project: Project,
    *,
    host: str,
    port: int,
    workers: int = 1,
    https: bool = False,
    db_pool: int | None = None,
) -> None:
    """Run the app under uvicorn until interrupted (several workers: one app per process).

    ``db_pool`` is each worker's pool size (:func:`create_app`). Options: :func:`server_options`.

    uvicorn trusts ``X-Forwarded-Proto`` from a proxy on 127.0.0.1 (its default
    ``forwarded_allow_ips``), so cookies are Secure when such a proxy speaks HTTPS.
    """
    import uvicorn  # here: importing casework.web (e.g. for `users add`) needs no server

    options = server_options(host, port)
    if workers == 1:
        app = create_app(project, https=https, db_pool=db_pool)
        uvicorn.run(app, **options)
        return
    os.environ[PROJECT_ENV] = str(project.root)
    os.environ[HTTPS_ENV] = "1" if https else "0"
    if db_pool is not None:
        os.environ[DB_POOL_ENV] = str(db_pool)
    uvicorn.run("casework.web:app_from_env", factory=True, workers=workers, **options)
