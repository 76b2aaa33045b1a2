"""Imported τ²-style cases run: shared state + patch, golden replay, a scripted simulated user.

The hand-made domain's tools are implemented by a small environment written here (the import
cannot bring τ²-bench's Python tools); a right agent passes the golden-state check on every
task and an agent that books the wrong flight fails it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from casework.project import load_project
from casework.runner import load_run

Run = Callable[..., Result]
DOMAIN = Path(__file__).parent / "data" / "tau2" / "airline"

ENV = """
from casework.runner import ToolEnvironment, ToolError, tool


class AirlineEnv(ToolEnvironment):
    @tool("Get the details of a reservation.")
    def get_reservation_details(self, reservation_id):
        if reservation_id not in self.data["reservations"]:
            raise ToolError("no such reservation")
        return self.data["reservations"][reservation_id]

    @tool("Search direct flights.")
    def search_direct_flight(self, origin, destination, date):
        return [k for k, f in sorted(self.data["flights"].items())
                if (f["origin"], f["destination"], f["date"]) == (origin, destination, date)]

    @tool("Book a reservation.")
    def book_reservation(self, user_id, flight_id, passengers=1):
        flight = self.data["flights"][flight_id]
        if flight["seats_left"] < passengers:
            raise ToolError("sold out")
        flight["seats_left"] -= passengers
        self.data["users"][user_id]["balance"] -= flight["price"] * passengers
        rid = "R-%d" % (100 + len(self.data["reservations"]))
        self.data["reservations"][rid] = {"user_id": user_id, "flight_id": flight_id,
                                          "cabin": "economy", "status": "booked"}
        return {"reservation_id": rid, "price": flight["price"]}

    @tool("Cancel a reservation.")
    def cancel_reservation(self, reservation_id):
        self.data["reservations"][reservation_id]["status"] = "cancelled"
        return "cancelled"

    @tool("Transfer to a human agent.")
    def transfer_to_human_agents(self, summary):
        return "Transfer successful"
"""

AGENT = """
FLIGHT = {"good": "FL-1", "sloppy": "FL-2"}


def _agent(flavour):
    def run(agent_input, tools):
        text = " ".join(t.content for t in agent_input.turns if t.role == "user")
        if "seat from LIS to OPO" in text:
            tools.call("search_direct_flight", origin="LIS", destination="OPO", date="2026-05-01")
            tools.try_call("book_reservation", user_id="u-rita", flight_id=FLIGHT[flavour])
            return {"final_reply": "Booked, the fare is 80.", "outcome": "resolve"}
        if "compensation" in text:
            tools.call("transfer_to_human_agents", summary="compensation request for a delay")
            return {"final_reply": "I am transferring you to a colleague.", "handoff": True}
        if "get a refund" in text:
            tools.call("get_reservation_details", reservation_id="R-100")
            return {"final_reply": "Basic economy is not refundable, sorry.", "outcome": "refuse"}
        if "cancel reservation R-100" in text:
            tools.call("cancel_reservation", reservation_id="R-100")
            return {"final_reply": "Cancelled.", "outcome": "resolve"}
        return {"final_reply": "Which reservation?", "outcome": "clarify"}
    return run


good = _agent("good")
sloppy = _agent("sloppy")
"""

USER = """
import re
from casework.schema import STOP_TOKEN


def reply(messages):
    system = messages[0].content
    last = messages[-1].content
    if last.startswith("(The conversation starts") or last.endswith("?"):
        goal = re.search(r"^Your goal: (.+)$", system, re.MULTILINE)
        return goal.group(1) if goal else "Hi."
    return "Thanks. " + STOP_TOKEN
"""

CONFIG = """name = "tau2-run"
[agent]
tools = "catalogues/air/airline.tools.json"
[run]
environment = "env_airline:AirlineEnv"
[models.user]
provider = "scripted"
model = "user-stand-in"
script = "python:user_sim:reply"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    (root / "casework.toml").write_text(CONFIG, "utf-8")
    (root / "env_airline.py").write_text(ENV, "utf-8")
    (root / "tau2_agent.py").write_text(AGENT, "utf-8")
    (root / "user_sim.py").write_text(USER, "utf-8")
    shutil.copytree(DOMAIN, root / "airline")
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    return root


def _golden(root: Path, run_id: str) -> dict[str, set[str | None]]:
    out: dict[str, set[str | None]] = {}
    for trial in load_run(load_project(root), run_id).trials:
        checks = {c.name: c.status for c in trial.verdict.checks}
        # Imported τ² cases are scored as τ² scores by default: its database check.
        out.setdefault(trial.case_id, set()).add(checks.get("tau2_db"))
    return out


def test_imported_tasks_run_with_golden_replay_and_a_simulated_user(
    project: Path, run_cli: Run
) -> None:
    out = run_cli("import", "tau2", "airline", "--dataset", "air")
    assert out.exit_code == 0, out.output
    check = run_cli("dataset", "check", "air")
    assert check.exit_code == 0, check.output
    results = {}
    for flavour in ("good", "sloppy"):
        run = run_cli(
            *("run", "air", "--agent", f"python:tau2_agent:{flavour}", "-k", "2"),
            *("--no-judge", "--format", "json"),
        )
        assert run.exit_code == 0, run.output
        run_id = json.loads(run.stdout)["run_id"]
        results[flavour] = _golden(project, run_id)
        trials = load_run(load_project(project), run_id).trials
        assert all(t.user_sim is not None and t.user_sim.user_turns >= 1 for t in trials)
    # airline-2 has only the transfer (no state change): its replay equals the initial state
    cases = ("airline-0", "airline-1", "airline-2", "airline-3")
    assert results["good"] == {c: {"pass"} for c in cases}
    assert results["sloppy"]["airline-0"] == {"fail"}  # booked the sold-out FL-2: no write
    assert results["sloppy"]["airline-3"] == {"pass"}
