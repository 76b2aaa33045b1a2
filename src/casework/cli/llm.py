"""The `llm` group: check model endpoints (`llm ping`) and manage the response cache."""

from __future__ import annotations

import click

from casework.cli._output import emit
from casework.cli.context import FORMAT, console, example, pass_project
from casework.llm import WorkbenchCache, ping
from casework.project import Project

__all__ = ["COMMANDS"]


@click.group("llm")
def llm_group() -> None:
    """Check model endpoints and manage the response cache.

    See docs/llm.md.
    """


@example("casework llm ping", "casework llm ping --role judge --format json")
@llm_group.command("ping")
@click.option(
    "--role",
    type=click.Choice(["generator", "judge"]),
    default="generator",
    show_default=True,
    help="Which [models.<role>] to call.",
)
@FORMAT
@pass_project
def ping_cmd(project: Project, role: str, fmt: str) -> None:
    """Send one tiny request to a role's model and show what came back."""
    result = ping(project, "judge" if role == "judge" else "generator")
    if fmt == "json":
        from casework.llm.outputs import LlmPing  # here: only JSON output needs it

        emit(
            LlmPing(
                role=result.role,
                model=result.model,
                endpoint=result.endpoint,
                reply=result.reply,
                seconds=round(result.seconds, 3),
                prompt_tokens=result.usage.prompt_tokens if result.usage else None,
                completion_tokens=result.usage.completion_tokens if result.usage else None,
            )
        )
        return
    tokens = (
        f", {result.usage.prompt_tokens}+{result.usage.completion_tokens} tokens"
        if result.usage
        else ""
    )
    console.print(
        f"models.{result.role}: {result.model} at {result.endpoint} answered in "
        f"{result.seconds:.2f} s{tokens}: {result.reply!r}"
    )


@llm_group.group("cache")
def cache_group() -> None:
    """The workbench's response cache (replies keyed by model, prompt and parameters).

    See docs/llm.md.
    """


@example("casework llm cache stats")
@cache_group.command("stats")
@FORMAT
@pass_project
def cache_stats_cmd(project: Project, fmt: str) -> None:
    """Cached replies per model."""
    counts = WorkbenchCache(project).count()
    if fmt == "json":
        from casework.llm.outputs import CacheStats  # here: only JSON output needs it

        emit(CacheStats(counts))
        return
    if not counts:
        console.print("the response cache is empty")
    for model, n in counts.items():
        console.print(f"{model}: {n} cached repl{'ies' if n != 1 else 'y'}")


@example("casework llm cache clear --model openai:gpt-4o-mini")
@cache_group.command("clear")
@click.option("--model", help="Only replies of this model (`openai:gpt-4o-mini`).")
@pass_project
def cache_clear_cmd(project: Project, model: str | None) -> None:
    """Delete cached replies (all, or one model's), so the next run asks again."""
    removed = WorkbenchCache(project).clear(model)
    console.print(f"removed {removed} cached repl{'ies' if removed != 1 else 'y'}")


COMMANDS: list[click.Command] = [llm_group]
