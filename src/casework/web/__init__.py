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

from casework.web._accounts import add_user, disable_user, list_users, new_link
from casework.web._app import app_from_env, create_app, serve

__all__ = [
    "add_user",
    "app_from_env",
    "create_app",
    "disable_user",
    "list_users",
    "new_link",
    "serve",
]
