"""Posting OTLP/JSON to an OTLP/HTTP endpoint, with its credentials kept out of every message.

Credentials come from the endpoint's ``user:password@`` (sent as a Basic ``Authorization``
header) or from the OpenTelemetry exporter variables ``OTEL_EXPORTER_OTLP_LOGS_HEADERS`` /
``OTEL_EXPORTER_OTLP_HEADERS`` (``key=value`` pairs, comma-separated, values percent-encoded).
Entry points: :func:`otlp_target` (parse and check, before anything is written) and
:func:`post_otlp`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit, urlunsplit

from casework.errors import CaseworkError, UsageError

__all__ = ["HEADERS_VARIABLES", "OtlpTarget", "otlp_target", "post_otlp"]

#: Exporter header variables, most specific first (the logs signal's overrides the general one).
HEADERS_VARIABLES = ("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
#: What stands in a shown URL for the credentials it held.
_HIDDEN = "***"


@dataclass(frozen=True)
class OtlpTarget:
    """Where and how to post: the URL without credentials, and the headers that carry them.

    Attributes:
        url: The ``…/v1/logs`` URL posted to (no user information in it).
        shown: The URL as messages show it: ``***@`` where credentials were.
        headers: Headers sent with the request (never shown, nor in ``repr``).
        secrets: Every credential string, to scrub from messages of other libraries.
    """

    url: str
    shown: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)

    def scrub(self, text: str) -> str:
        """``text`` with every credential replaced by ``***`` (a message from a library)."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, _HIDDEN)
        return text


def _env_headers(env: Mapping[str, str]) -> tuple[str | None, dict[str, str]]:
    """The first exporter header variable set, and its headers (values never in messages)."""
    for name in HEADERS_VARIABLES:
        raw = env.get(name, "").strip()
        if not raw:
            continue
        headers: dict[str, str] = {}
        for index, entry in enumerate(raw.split(","), start=1):
            key, sep, value = entry.partition("=")
            key = key.strip()
            if not sep or not key or any(c.isspace() for c in key):
                raise UsageError(
                    f"{name}: entry {index} is not key=value (the value is not shown; headers "
                    "are comma-separated key=value pairs, values percent-encoded)."
                )
            headers[key] = unquote(value.strip())
        return name, headers
    return None, {}


def otlp_target(endpoint: str, env: Mapping[str, str]) -> OtlpTarget:
    """Check an OTLP/HTTP endpoint and gather its credentials; ``/v1/logs`` is appended.

    ``http://user:password@host:4318`` posts to ``http://host:4318/v1/logs`` with a Basic
    ``Authorization`` header (user and password percent-decoded, as in any URL); headers in
    ``OTEL_EXPORTER_OTLP_LOGS_HEADERS`` or else ``OTEL_EXPORTER_OTLP_HEADERS`` are sent too.

    Raises:
        UsageError: Not an http(s) URL with a host, a malformed header variable, or an
            ``Authorization`` header from both the URL and a variable. No message holds a
            credential.
    """
    try:
        parts = urlsplit(endpoint.strip())
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number; its text may hold a password
        parts, host, port = None, None, None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        shown = f"{_HIDDEN}@{endpoint.rpartition('@')[2]}" if "@" in endpoint else endpoint
        raise UsageError(
            f"expected an http:// or https:// URL with a host. Got '{shown}'.", param="endpoint"
        )
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    path = parts.path.rstrip("/")
    if not path.endswith("/v1/logs"):
        path += "/v1/logs"
    url = urlunsplit((parts.scheme, netloc, path, parts.query, ""))
    variable, headers = _env_headers(env)
    has_userinfo = "@" in parts.netloc
    if has_userinfo:
        if any(k.lower() == "authorization" for k in headers):
            raise UsageError(
                f"both the URL's user:password and {variable} set an Authorization header; "
                "keep one.",
                param="endpoint",
            )
        userinfo = parts.netloc.rpartition("@")[0]
        user, _, password = userinfo.partition(":")
        token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    shown = urlunsplit(
        (parts.scheme, f"{_HIDDEN}@{netloc}" if has_userinfo else netloc, path, parts.query, "")
    )
    secrets = {v for v in headers.values() if v} | {
        word for v in headers.values() for word in v.split() if len(word) > 3
    }
    if has_userinfo:
        secrets |= {p for p in (password, unquote(password)) if p}
    return OtlpTarget(url, shown, headers, tuple(secrets))


def post_otlp(target: OtlpTarget, body: bytes, timeout_s: float) -> int:
    """POST an OTLP/JSON body; returns the HTTP status.

    Redirects are not followed, so the credentials go to the named host only.

    Raises:
        CaseworkError: The endpoint is unreachable or answers with an error (or a redirect).
    """
    import httpx  # here: only an export that posts pays for its import

    headers = {"Content-Type": "application/json", **target.headers}
    try:
        response = httpx.post(
            target.url, content=body, headers=headers, timeout=timeout_s, follow_redirects=False
        )
    except httpx.HTTPError as exc:
        reason = target.scrub(str(exc) or type(exc).__name__)
        raise CaseworkError(f"endpoint {target.shown} unreachable: {reason}") from None
    if response.status_code >= 300:
        raise CaseworkError(
            f"endpoint {target.shown} refused the events: HTTP {response.status_code}"
        )
    return response.status_code
