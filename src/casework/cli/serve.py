"""The `serve` group: the web app under uvicorn, and `serve users` (accounts and sign-in links)."""

from __future__ import annotations

import click
from rich.table import Table

from casework.cli._moved import moved
from casework.cli._output import emit
from casework.cli.context import FORMAT, console, example, get_state, pass_project
from casework.project import Project

__all__ = ["COMMANDS"]

HOST = click.option("--host", default="127.0.0.1", show_default=True, help="Address to serve on.")
PORT = click.option(
    "--port", default=8700, show_default=True, type=click.IntRange(1, 65535), help="TCP port."
)
HTTPS = click.option(
    "--https",
    is_flag=True,
    help="Served over HTTPS (TLS at a proxy): https links, Secure cookies even on plain HTTP.",
)


@example(
    "casework serve --port 8700",
    "casework serve --host 0.0.0.0 --workers 4 --https",
)
@click.group("serve", invoke_without_command=True)
@HOST
@PORT
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Worker processes."
)
@HTTPS
@click.option(
    "--db-pool",
    type=click.IntRange(1, 500),
    default=None,
    help="Database connections each worker keeps open (default 20; up to 10 more at a peak).",
)
@click.pass_context
def serve_group(
    ctx: click.Context, host: str, port: int, workers: int, https: bool, db_pool: int | None
) -> None:
    """Serve the labelling web app on the project's workbench (uvicorn; Ctrl+C stops it).

    The database is the CLI's (CASEWORK_DB_URL or [workbench] url). People sign in with links
    from `casework serve users add` / `casework serve users link`. Behind a reverse proxy on
    this machine, uvicorn trusts its X-Forwarded-Proto, so cookies are Secure when the proxy
    speaks HTTPS. See docs/web.md.
    """
    if ctx.invoked_subcommand is not None:
        return
    project = get_state().project()
    from casework.web import serve  # here: `casework --help` does not load the web stack

    console.print(f"casework web app on http{'s' if https else ''}://{host}:{port}/ (Ctrl+C stops)")
    serve(project, host=host, port=port, workers=workers, https=https, db_pool=db_pool)


@serve_group.group("users")
def users_group() -> None:
    """People of the web app: add them with roles, list, disable, send a fresh sign-in link.

    See docs/web.md.
    """


def _link(host: str, port: int, https: bool, token: str) -> str:
    return f"http{'s' if https else ''}://{host}:{port}/signin/{token}"


@example("casework serve users add ana --role labeller --port 8700")
@users_group.command("add")
@click.argument("name")
@click.option(
    "--role",
    "roles",
    multiple=True,
    required=True,
    type=click.Choice(["admin", "labeller", "adjudicator", "reviewer"]),
    help="A role (repeatable).",
)
@HOST
@PORT
@HTTPS
@pass_project
def add_cmd(
    project: Project, name: str, roles: tuple[str, ...], host: str, port: int, https: bool
) -> None:
    """Add NAME (the labeller id on their labels) and print their one-time sign-in link."""
    from casework.web import add_user
    from casework.workbench import open_workbench

    with open_workbench(project) as wb:
        token = add_user(wb, name, roles)
    console.print(f"added {name} ({', '.join(roles)}); one-time sign-in link (expires in 72 h):")
    click.echo(_link(host, port, https, token))


@example("casework serve users link ana")
@users_group.command("link")
@click.argument("name")
@HOST
@PORT
@HTTPS
@pass_project
def link_cmd(project: Project, name: str, host: str, port: int, https: bool) -> None:
    """Print a fresh one-time sign-in link for NAME."""
    from casework.web import new_link
    from casework.workbench import open_workbench

    with open_workbench(project) as wb:
        token = new_link(wb, name)
    click.echo(_link(host, port, https, token))


@example("casework serve users list --format json")
@users_group.command("list")
@FORMAT
@pass_project
def list_cmd(project: Project, fmt: str) -> None:
    """List people: name, roles, disabled, last seen."""
    from casework.web import list_users
    from casework.workbench import open_workbench

    with open_workbench(project) as wb:
        users = list_users(wb)
    if fmt == "json":
        from casework.web.outputs import UserList  # here: only JSON output needs it

        emit(
            UserList.model_validate(
                [
                    {
                        "name": u.name,
                        "roles": list(u.roles),
                        "disabled": u.disabled,
                        "last_seen": u.last_seen.isoformat() if u.last_seen else None,
                    }
                    for u in users
                ]
            )
        )
        return
    table = Table("name", "roles", "disabled", "last seen")
    for u in users:
        seen = u.last_seen.strftime("%Y-%m-%d %H:%M UTC") if u.last_seen else "never"
        table.add_row(u.name, ", ".join(u.roles), "yes" if u.disabled else "no", seen)
    console.print(table)


@example("casework serve users disable ana")
@users_group.command("disable")
@click.argument("name")
@pass_project
def disable_cmd(project: Project, name: str) -> None:
    """Disable NAME: their sessions end at once and their links stop working."""
    from casework.web import disable_user
    from casework.workbench import open_workbench

    with open_workbench(project) as wb:
        ended = disable_user(wb, name)
    console.print(f"disabled {name}; ended {ended} session(s)")


COMMANDS: list[click.Command] = [serve_group]

#: The old top-level spelling, hidden for one release.
ALIASES: list[click.Command] = [moved(users_group, "users", "serve users")]
