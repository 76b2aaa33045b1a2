"""A run's verdicts out: JUnit XML parsed back, OTLP/JSON checked against the protobuf JSON
mapping (and posted to a loopback OTLP/HTTP server), OpenInference span annotations."""

from __future__ import annotations

import json
import re
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import Result

from casework.grading import CheckResult, Verdict
from casework.interop import (
    EVALUATION_EVENT,
    junit_xml,
    openinference_annotations,
    otlp_logs,
    trace_ids,
)
from casework.runner import LoadedRun, RunEnd, RunHeader, TrialRecord, read_log
from casework.schema import Trajectory

Run = Callable[..., Result]
AT = datetime(2026, 11, 30, 12, 0, 0, 250000, tzinfo=UTC)


def _trial(case_id: str, trial: int, checks: list[CheckResult], **extra: Any) -> TrialRecord:
    failed = any(c.status == "fail" for c in checks)
    open_ = any(c.status == "undetermined" for c in checks)
    passed = False if failed else (None if open_ else True)
    judged = any(c.judged for c in checks)
    return TrialRecord(
        run_id="r-7",
        case_id=case_id,
        trial=trial,
        slice="refunds",
        split="dev",
        source="hand",
        seed=trial,
        started_at=AT,
        duration_s=1.5,
        verdict=Verdict(
            passed=passed,
            checks=checks,
            oracle_class="rubric_judge" if judged else "state_assertion",
        ),
        trajectory=Trajectory(**extra),
    )


def _ok(name: str = "required_tools") -> CheckResult:
    return CheckResult(name=name, status="pass", evidence=f"{name} held")


def _run() -> LoadedRun:
    trials = [
        _trial("a", 0, [_ok(), _ok("outcome")]),
        _trial("a", 1, [_ok(), _ok("outcome")]),
        _trial("b", 0, [_ok()]),
        _trial(
            "b",
            1,
            [
                CheckResult(name="required_tools", status="fail", evidence="issue_refund not called"),
                CheckResult(name="outcome", status="fail", evidence="asked instead", judged=True),
            ],
            metadata={"trace_id": "5B8EFFF798038103D269B633813FC60C", "span_id": "eee19b7ec3c1b174"},
        ),
        _trial("c", 0, [CheckResult(name="answer_facts", status="undetermined", evidence="no judge")]),
        _trial("d", 0, [CheckResult(name="state", status="fail", evidence="secret order ORD-1")])
        .model_copy(update={"frozen": True}),
    ]  # fmt: skip
    header = RunHeader(
        run_id="r-7",
        dataset="refunds",
        dataset_ref="refunds@2",
        dataset_hash="a" * 64,
        agent_spec="python:agent:run",
        agent_version="v3",
        k=2,
        seed=0,
        concurrency=1,
        case_ids=["a", "b", "c", "d"],
        timeout_s=5.0,
        started_at=AT,
        casework_version="0.1.0",
    )
    end = RunEnd(
        run_id="r-7", finished_at=AT, trials=6, passed=3, failed=2, undetermined=1, errors=0,
        cost_usd=0.0, wall_s=1.0,
    )  # fmt: skip
    return LoadedRun(header, trials, end)


def test_junit_one_testcase_per_case_parsed_back() -> None:
    root = ET.fromstring(junit_xml(_run()))
    assert root.tag == "testsuites"
    [suite] = root.findall("testsuite")
    assert {k: suite.get(k) for k in ("name", "tests", "failures", "errors", "skipped")} == {
        "name": "r-7", "tests": "4", "failures": "2", "errors": "0", "skipped": "1",
    }  # fmt: skip
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["dataset"] == "refunds@2" and props["agent_version"] == "v3" and props["k"] == "2"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["a", "b", "c", "d"]
    assert cases["a"].get("classname") == "refunds.refunds" and cases["a"].get("time") == "3.000"
    assert cases["a"].find("failure") is None and cases["a"].find("skipped") is None
    b_props = {p.get("name"): p.get("value") for p in cases["b"].findall("properties/property")}
    assert b_props == {
        "slice": "refunds", "split": "dev", "source": "hand",
        "trial.0": "pass", "trial.1": "fail", "pass_rate": "0.500",
    }  # fmt: skip
    failure = cases["b"].find("failure")
    assert failure is not None
    assert failure.get("message") == "1 of 2 trial(s) failed: outcome, required_tools"
    assert (failure.text or "").splitlines() == [
        "trial 1: required_tools: issue_refund not called",
        "trial 1: outcome: asked instead",
    ]
    skipped = cases["c"].find("skipped")
    assert skipped is not None and "answer_facts: no judge" in (skipped.get("message") or "")
    frozen = cases["d"].find("failure")
    assert frozen is not None and "ORD-1" not in ET.tostring(cases["d"], encoding="unicode")
    assert (frozen.text or "") == "trial 0: state: frozen case: evidence withheld"


_CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")
#: Fields of the OTLP logs messages (opentelemetry-proto logs.proto, common.proto, resource.proto),
#: in their JSON (lowerCamelCase) names.
_FIELDS = {
    "request": {"resourceLogs"},
    "resourceLogs": {"resource", "scopeLogs", "schemaUrl"},
    "resource": {"attributes", "droppedAttributesCount"},
    "scopeLogs": {"scope", "logRecords", "schemaUrl"},
    "scope": {"name", "version", "attributes", "droppedAttributesCount"},
    "logRecord": {
        "timeUnixNano", "observedTimeUnixNano", "severityNumber", "severityText", "body",
        "attributes", "droppedAttributesCount", "flags", "traceId", "spanId", "eventName",
    },
}  # fmt: skip
_ANY = {"stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue"}


def _check_attributes(attrs: Any) -> dict[str, Any]:
    assert isinstance(attrs, list)
    out: dict[str, Any] = {}
    for kv in attrs:
        assert set(kv) == {"key", "value"} and isinstance(kv["key"], str)
        [(kind, value)] = kv["value"].items()
        assert kind in _ANY
        if kind == "intValue":  # int64: a decimal string in the JSON mapping
            assert isinstance(value, str) and re.fullmatch(r"-?\d+", value)
        out[kv["key"]] = value
    return out


def _walk_keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            if k != "value" or not isinstance(v, dict):
                yield from _walk_keys(v)
            else:
                yield from _walk_keys(list(v.values()))
    elif isinstance(value, list):
        for v in value:
            yield from _walk_keys(v)


def validate_otlp_logs(request: Any) -> list[dict[str, Any]]:
    """Check an ExportLogsServiceRequest in OTLP/JSON; return each record's attributes."""
    assert set(request) <= _FIELDS["request"]
    assert all(_CAMEL.match(k) for k in _walk_keys(request) if not k.startswith("gen_ai"))
    records = []
    for rl in request["resourceLogs"]:
        assert set(rl) <= _FIELDS["resourceLogs"] and set(rl["resource"]) <= _FIELDS["resource"]
        _check_attributes(rl["resource"]["attributes"])
        for sl in rl["scopeLogs"]:
            assert set(sl) <= _FIELDS["scopeLogs"] and set(sl["scope"]) <= _FIELDS["scope"]
            for rec in sl["logRecords"]:
                assert set(rec) <= _FIELDS["logRecord"]
                assert re.fullmatch(r"[0-9a-f]{32}", rec["traceId"]) and rec["traceId"] != "0" * 32
                assert re.fullmatch(r"[0-9a-f]{16}", rec["spanId"]) and rec["spanId"] != "0" * 16
                for key in ("timeUnixNano", "observedTimeUnixNano"):  # fixed64: a string
                    assert isinstance(rec[key], str) and rec[key].isdigit()
                assert isinstance(rec["severityNumber"], int) and 1 <= rec["severityNumber"] <= 24
                records.append({"_rec": rec, **_check_attributes(rec["attributes"])})
    return records


def test_otlp_events_follow_the_json_mapping_and_the_semantic_convention() -> None:
    records = validate_otlp_logs(json.loads(json.dumps(otlp_logs(_run()))))
    assert len(records) == 6 + 9  # a verdict per trial, an evaluation per check
    assert {r["_rec"]["eventName"] for r in records} == {EVALUATION_EVENT}
    assert records[0]["_rec"]["timeUnixNano"] == "1796040000250000000"  # 2026-11-30T12:00:00.25Z
    b1 = [r for r in records if r["casework.case_id"] == "b" and r["casework.trial"] == "1"]
    assert [r["gen_ai.evaluation.name"] for r in b1] == [
        "casework.verdict", "casework.required_tools", "casework.outcome",
    ]  # fmt: skip
    assert [r["gen_ai.evaluation.score.label"] for r in b1] == ["fail", "fail", "fail"]
    assert b1[0]["gen_ai.evaluation.score.value"] == 0.0
    assert b1[2]["gen_ai.evaluation.explanation"] == "asked instead"
    assert b1[2]["casework.judged"] is True
    # The trial's own trace ids (from the agent) are kept, lower-cased.
    assert b1[0]["_rec"]["traceId"] == "5b8efff798038103d269b633813fc60c"
    assert b1[0]["_rec"]["spanId"] == "eee19b7ec3c1b174"
    c0 = next(r for r in records if r["casework.case_id"] == "c")
    assert "gen_ai.evaluation.score.value" not in c0  # undetermined: no score, a label
    assert c0["gen_ai.evaluation.score.label"] == "undetermined"
    d0 = next(r for r in records if r["casework.case_id"] == "d")
    assert d0["gen_ai.evaluation.explanation"] == "frozen case: evidence withheld"
    a = _run().trials[0]
    assert trace_ids("r-7", a) == trace_ids("r-7", a) != trace_ids("r-8", a)


def test_openinference_annotations() -> None:
    data = openinference_annotations(_run())["data"]
    assert len(data) == 15
    b1 = [d for d in data if d["metadata"]["case_id"] == "b" and d["metadata"]["trial"] == 1]
    assert b1[2] == {
        "span_id": "eee19b7ec3c1b174",
        "name": "casework.outcome",
        "annotator_kind": "LLM",
        "result": {"label": "fail", "score": 0.0, "explanation": "asked instead"},
        "metadata": {
            "trace_id": "5b8efff798038103d269b633813fc60c",
            "run_id": "r-7",
            "case_id": "b",
            "trial": 1,
            "dataset": "refunds@2",
        },
        "identifier": "casework:r-7:b:1",
    }
    assert b1[1]["annotator_kind"] == "CODE"
    assert all(set(d["result"]) == {"label", "score", "explanation"} for d in data)


class _Collector(BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Collector.received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def collector() -> Iterator[str]:
    _Collector.received = []
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _write_run(project_dir: Path) -> str:
    run = _run()
    lines = [run.header.model_dump_json(), *(t.model_dump_json() for t in run.trials)]
    assert run.end is not None
    lines.append(run.end.model_dump_json())
    (project_dir / "runs").mkdir(exist_ok=True)
    (project_dir / "runs" / "r-7.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert len(read_log(project_dir / "runs" / "r-7.jsonl").trials) == 6
    return "r-7"


def test_cli_exports_and_posts_to_an_otlp_endpoint(
    project_dir: Path, run_cli: Run, collector: str
) -> None:
    run = _write_run(project_dir)
    out = run_cli("export", "junit", run, "-o", "ci/junit.xml")
    assert out.exit_code == 0, out.stderr
    assert out.stdout.strip() == "r-7: wrote 4 test case(s) to ci/junit.xml"
    assert ET.parse(project_dir / "ci" / "junit.xml").getroot().tag == "testsuites"
    out = run_cli("export", "otel", run, "-o", "otel.json", "--endpoint", collector)
    assert out.exit_code == 0, out.stderr
    assert f"posted to {collector}/v1/logs: HTTP 200" in out.stdout
    [(path, kind, body)] = _Collector.received
    assert path == "/v1/logs" and kind == "application/json"
    assert json.loads(body) == json.loads((project_dir / "otel.json").read_text())
    validate_otlp_logs(json.loads(body))
    out = run_cli("export", "openinference", run, "-o", "oi.json", "--format", "json")
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout)["records"] == 15
    bad = run_cli("export", "junit", run, "--endpoint", collector)
    assert bad.exit_code == 2  # the option exists only for otel
    down = run_cli("export", "otel", run, "-o", "o2.json", "--endpoint", "http://127.0.0.1:9")
    assert down.exit_code == 1 and "unreachable" in down.stderr
    missing = run_cli("export", "junit", "nope", "-o", "x.xml")
    assert missing.exit_code == 2 and not (project_dir / "x.xml").exists()
