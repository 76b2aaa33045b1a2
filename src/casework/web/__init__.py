"""The web app: labelling, adjudication, review and the dashboard in the browser, on the workbench.

Server-rendered pages (Jinja2, autoescaped) with htmx for partial updates, every asset served
from the package, a strict Content-Security-Policy. Each area is a router in its own module
(``_label.py``, ``_adjudicate.py``, ``_review.py``, ``_dashboard.py``) whose
routes are registered with :func:`route`, which declares the roles that may reach them
(:data:`ROUTES` is walked by the role tests). Accounts: :func:`add_user`, :func:`new_link`,
:func:`list_users`, :func:`disable_user`. The app: :func:`create_app` (or :func:`app_from_env`
for an ASGI server's workers). :func:`highlighted` escapes text and marks spans in it (the
review page's shared shingles). See docs/web.md.
"""

from casework.web._accounts import (
    ROLES,
    UserInfo,
    Viewer,
    add_user,
    disable_user,
    list_users,
    new_link,
)
from casework.web._app import (
    HTTPS_ENV,
    KEEP_ALIVE_SECONDS,
    PROJECT_ENV,
    SECURITY_HEADERS,
    app_from_env,
    create_app,
    serve,
    server_options,
)
from casework.web._render import highlighted, render
from casework.web._routes import (
    CSRF_FIELD,
    CSRF_HEADER,
    PUBLIC,
    ROUTES,
    SESSION_COOKIE,
    SIGNED_IN,
    RouteSpec,
    require_role,
    route,
    served_routes,
)

__all__ = [
    "CSRF_FIELD",
    "CSRF_HEADER",
    "HTTPS_ENV",
    "KEEP_ALIVE_SECONDS",
    "PROJECT_ENV",
    "PUBLIC",
    "ROLES",
    "ROUTES",
    "SECURITY_HEADERS",
    "SESSION_COOKIE",
    "SIGNED_IN",
    "RouteSpec",
    "UserInfo",
    "Viewer",
    "add_user",
    "app_from_env",
    "create_app",
    "disable_user",
    "highlighted",
    "list_users",
    "new_link",
    "render",
    "require_role",
    "route",
    "serve",
    "served_routes",
    "server_options",
]
