"""Next steps are data: library messages carry a Hint, the CLI shows a command, the web a link."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from casework.cli import cli
from casework.errors import Hint, UsageError, WorkbenchError
from casework.web._hints import hint_text, next_steps

SRC = Path(__file__).resolve().parents[1] / "src" / "casework"
TOPS = (
    "init|schema|dataset|label|agreement|mine|shapes|synth|leakage|run|results|judge|review|gate"
    "|report|import|export|serve|llm|db"
)
COMMAND = re.compile(rf"\bcasework ({TOPS})\b")

#: Strings that name a command but are not advice to run one: a report's title, a GitHub
#: annotation's title, an ADK eval set's description, a run log schema's title, the config
#: template written into the user's casework.toml, the erasure registry naming where copies went.
NOT_ADVICE = {
    "erasure/_everywhere.py": 3,
    "gate/_decision.py": 2,
    "interop/adk/_project.py": 1,
    "interop/run_import.py": 1,
    "report/html.py": 1,
    "scaffold.py": 2,
}
#: Messages (findings, gate reasons, grading evidence) still written with a command line in them:
#: the count per module may only go down.
PENDING: dict[str, int] = {}


def _strings_naming_commands() -> Counter[str]:
    found: Counter[str] = Counter()
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(("cli/", "web/")):
            continue  # the clients spell commands; the library never does
        tree = ast.parse(path.read_text(encoding="utf-8"))
        documentation = {
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in documentation
                and COMMAND.search(node.value)
            ):
                found[rel] += 1
    return found


def test_no_library_message_embeds_a_command_line() -> None:
    found = _strings_naming_commands()
    allowed = Counter(NOT_ADVICE) + Counter(PENDING)
    over = {rel: n for rel, n in found.items() if n > allowed.get(rel, 0)}
    assert not over, f"library messages spelling a command (attach a Hint instead): {over}"
    stale = {rel: n for rel, n in PENDING.items() if found[rel] < n + NOT_ADVICE.get(rel, 0)}
    assert not stale, f"fewer command lines than listed as pending (lower the counts): {stale}"


def test_a_hint_renders_as_a_command_line_after_the_message() -> None:
    hint = Hint("review list", params=(("kind", "leakage-pair"), ("dataset", "refunds")))
    assert hint.command_line() == "casework review list --kind leakage-pair --dataset refunds"
    error = UsageError("no such flag.").suggest(hint)
    assert error.next_steps == [hint]
    assert str(error) == (
        "no such flag. Next: `casework review list --kind leakage-pair --dataset refunds`."
    )
    why = WorkbenchError("old revision.").suggest(Hint("db upgrade", why="to migrate it"))
    assert why.render() == "old revision. Next: `casework db upgrade` to migrate it."


def test_the_cli_shows_the_command_of_a_library_hint(project_dir: Path) -> None:
    result = CliRunner().invoke(cli, ["review", "show", "999"])
    assert result.exit_code == 2
    assert "no review item 999." in result.stderr
    assert "Next: `casework review list` to see the items." in result.stderr


def test_the_web_app_links_a_page_where_it_has_one() -> None:
    error = UsageError("settled outside the queue.").suggest(
        Hint("review sync", why="to withdraw the item")
    )
    (step,) = next_steps(error)
    assert step.href == "/review"
    assert error.render(hint=hint_text) == (
        "settled outside the queue. Next: the review page to withdraw the item."
    )
    upgrade = WorkbenchError("old.").suggest(Hint("db upgrade"))
    assert next_steps(upgrade)[0].href is None
    assert "`casework db upgrade`" in upgrade.render(hint=hint_text)


def test_findings_and_gate_reasons_carry_their_next_step_as_data() -> None:
    from datetime import date

    from casework.dataset.check import expired_cases
    from casework.gate._decision import GateFinding, GateReason
    from casework.schema import Case
    from casework.web._hints import hint_step
    from tests.runner.builders import refund_case

    row = refund_case("old", "ORD-1", 10.0)
    row["provenance"] = {**row.get("provenance", {}), "retain_until": "2020-01-01"}
    case = Case.model_validate(row)
    (finding,) = expired_cases([case], date(2026, 1, 1))
    assert finding.message == "retention date has passed"
    assert finding.hint == Hint("dataset expire", why="to release a version without it")
    assert str(finding) == (
        "old:2020-01-01: retention date has passed. "
        "Next: `casework dataset expire` to release a version without it."
    )
    assert finding.render() == "old:2020-01-01: retention date has passed"
    reason = GateReason("expired", finding.render(), None, finding.hint)
    assert str(reason).endswith("Next: `casework dataset expire` to release a version without it.")
    assert reason.render(hint=None) == "[expired] old:2020-01-01: retention date has passed"
    assert hint_step(reason.hint) == (  # type: ignore[arg-type]
        "the project's maintainer runs `casework dataset expire`",
        None,
    )
    assert GateFinding("leakage", "error", "x").hint is None
