"""`casework export openinference --endpoint`: verdicts land on a real Phoenix's spans, or are reported.

A real Phoenix (`arize-phoenix` from PyPI, in its own venv: `make phoenix-venv` builds
build/phoenix-venv, `make test` builds it first) runs as `phoenix serve` on loopback ports with a
scratch working directory (SQLite). The spans come from the OpenTelemetry SDK's own OTLP/HTTP
exporter, posted to Phoenix's `/v1/traces`; the annotations are read back from Phoenix's REST
API. Phoenix answers 200 to an annotation of a span it does not hold and stores nothing, so a
verdict whose span is absent must be listed with its reason, never counted as sent.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import Result
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from casework.grading import CheckResult
from casework.interop.openinference import NO_SPAN_REPORTED
from casework.runner.records import LoadedRun
from tests.interop.sample_run import make_trial, ok, sample_run

Run = Callable[..., Result]
ROOT = Path(__file__).resolve().parents[2]
PHOENIX = ROOT / "build" / "phoenix-venv" / "bin" / "phoenix"
PROJECT = "casework-test"
STARTUP_S = 180.0
PROXY_VARS = tuple(f"{p}_PROXY" for p in ("HTTP", "HTTPS", "ALL", "NO", "http", "https", "all"))

if not PHOENIX.exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"{PHOENIX} is missing: CI builds it with `make setup`")
    pytest.skip(
        f"Phoenix venv absent ({PHOENIX}); build it with `make phoenix-venv`",
        allow_module_level=True,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One `phoenix serve` for the module, on free loopback ports, SQLite in a scratch folder."""
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS and "PHOENIX" not in k}
    env |= {
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log_path = work / "phoenix.log"
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [str(PHOENIX), "serve"],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=work,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + STARTUP_S
            while True:
                try:
                    if (
                        httpx.get(f"{base}/healthz", timeout=2.0, trust_env=False).status_code
                        == 200
                    ):
                        break
                except httpx.TransportError:
                    pass
                assert proc.poll() is None, log_path.read_text(encoding="utf-8")
                assert time.monotonic() < deadline, log_path.read_text(encoding="utf-8")
                time.sleep(0.25)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _send_spans(base: str, project: str, names: list[str]) -> dict[str, tuple[str, str]]:
    """Agent spans sent by the OpenTelemetry SDK's OTLP/HTTP exporter: name → (trace, span) hex."""
    provider = TracerProvider(
        resource=Resource.create(
            {"service.name": "refunds-agent", "openinference.project.name": project}
        )
    )
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces", timeout=10))
    )
    tracer = provider.get_tracer("refunds-agent")
    ids: dict[str, tuple[str, str]] = {}
    for name in names:
        with tracer.start_as_current_span(
            name, attributes={"openinference.span.kind": "AGENT", "input.value": name}
        ) as span:
            ctx = span.get_span_context()
            ids[name] = (format(ctx.trace_id, "032x"), format(ctx.span_id, "016x"))
    provider.shutdown()
    # Phoenix stores what it received asynchronously: wait until every span can be read.
    deadline = time.monotonic() + 30
    wanted = {span for _, span in ids.values()}
    while True:
        got = httpx.get(
            f"{base}/v1/projects/{project}/spans",
            params=[("span_id", s) for s in sorted(wanted)],
            trust_env=False,
        )
        if got.status_code == 200:
            held = {s["context"]["span_id"] for s in got.json()["data"]}
            if held == wanted:
                return ids
        assert time.monotonic() < deadline, got.text
        time.sleep(0.2)


def _write_run(project_dir: Path, run: LoadedRun) -> str:
    lines = [run.header.model_dump_json(), *(t.model_dump_json() for t in run.trials)]
    assert run.end is not None
    lines.append(run.end.model_dump_json())
    (project_dir / "runs").mkdir(exist_ok=True)
    path = project_dir / "runs" / f"{run.header.run_id}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run.header.run_id


def _run(ids: dict[str, tuple[str, str]], absent: tuple[str, str]) -> LoadedRun:
    """Five trials: two on spans Phoenix holds, one on another project's, one on a span never
    sent, one whose agent reported no span."""

    def meta(trace_span: tuple[str, str]) -> dict[str, Any]:
        return {"metadata": {"trace_id": trace_span[0].upper(), "span_id": trace_span[1]}}

    base = sample_run()
    judged_fail = CheckResult(name="outcome", status="fail", evidence="asked instead", judged=True)
    trials = [
        make_trial("a", 0, [ok(), ok("outcome")], **meta(ids["a0"])),
        make_trial("a", 1, [ok()], **meta(ids["elsewhere"])),
        make_trial("b", 0, [ok()], **meta(absent)),
        make_trial("c", 0, [ok()]),
        make_trial("d", 0, [ok(), judged_fail], **meta(ids["d0"])),
    ]
    header = base.header.model_copy(update={"run_id": "r-9", "case_ids": ["a", "b", "c", "d"]})
    assert base.end is not None
    end = base.end.model_copy(update={"run_id": "r-9", "trials": 5})
    return LoadedRun(header, trials, end)


def _annotations(base: str, project: str, span_ids: list[str]) -> list[dict[str, Any]]:
    got = httpx.get(
        f"{base}/v1/projects/{project}/span_annotations",
        params={"span_ids": span_ids, "limit": 1000},
        trust_env=False,
    )
    assert got.status_code == 200, got.text
    data: list[dict[str, Any]] = got.json()["data"]
    return data


def test_annotations_land_on_the_spans_phoenix_holds_and_the_rest_are_reported(
    phoenix: str, project_dir: Path, run_cli: Run
) -> None:
    ids = _send_spans(phoenix, PROJECT, ["a0", "d0"])
    ids |= _send_spans(phoenix, "another-project", ["elsewhere"])
    absent = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    run_id = _write_run(project_dir, _run(ids, absent))
    out = run_cli(
        *("export", "openinference", run_id, "-o", "oi.json", "--endpoint", phoenix),
        *("--phoenix-project", PROJECT, "--format", "json"),
    )
    assert out.exit_code == 0, out.stderr
    report = json.loads(out.stdout)
    assert (report["records"], report["sent"], report["status"]) == (12, 6, 200)
    assert report["posted"] == phoenix
    assert [
        (s["case_id"], s["trial"], s["span_id"], s["evaluations"]) for s in report["skipped"]
    ] == [
        ("a", 1, ids["elsewhere"][1], 2),
        ("b", 0, absent[1], 2),
        ("c", 0, report["skipped"][2]["span_id"], 2),
    ]
    reasons = [s["reason"] for s in report["skipped"]]
    assert reasons == [
        f"span {ids['elsewhere'][1]} is not in Phoenix project '{PROJECT}'",
        f"span {absent[1]} is not in Phoenix project '{PROJECT}'",
        NO_SPAN_REPORTED,
    ]
    # What Phoenix stored: exactly the file's annotations of the two spans it holds.
    written = json.loads((project_dir / "oi.json").read_text(encoding="utf-8"))["data"]
    assert len(written) == 12  # the file holds every trial's annotations
    stored = _annotations(phoenix, PROJECT, [ids["a0"][1], ids["d0"][1]])
    got = sorted(
        (a["span_id"], a["name"], a["annotator_kind"], a["identifier"], a["result"], a["metadata"])
        for a in stored
    )
    want = sorted(
        (w["span_id"], w["name"], w["annotator_kind"], w["identifier"], w["result"], w["metadata"])
        for w in written
        if w["span_id"] in (ids["a0"][1], ids["d0"][1])
    )
    assert got == want and len(got) == 6
    assert ("casework.outcome", "LLM") in {(a["name"], a["annotator_kind"]) for a in stored}
    assert {a["metadata"]["trace_id"] for a in stored} == {ids["a0"][0], ids["d0"][0]}
    # Nothing reached the other project's span.
    assert _annotations(phoenix, "another-project", [ids["elsewhere"][1]]) == []
    # The text output says what was sent and what was not, and why.
    again = run_cli(
        *("export", "openinference", run_id, "-o", "oi.json", "--endpoint", phoenix),
        *("--phoenix-project", PROJECT),
    )
    assert again.exit_code == 0, again.stderr
    assert f"sent 6 annotation(s) to Phoenix {phoenix}: HTTP 200" in again.stdout
    assert (
        f"skipped 2 annotation(s) of b trial 0: span {absent[1]} is not in Phoenix project "
        f"'{PROJECT}'" in again.stdout
    )
    assert "skipped 2 annotation(s) of c trial 0: the agent reported no span id" in again.stdout
    # Sending again updates the same annotations (one per name, span and identifier).
    assert len(_annotations(phoenix, PROJECT, [ids["a0"][1], ids["d0"][1]])) == 6


def test_a_run_whose_spans_phoenix_lacks_sends_nothing_and_fails(
    phoenix: str, project_dir: Path, run_cli: Run
) -> None:
    run_id = _write_run(project_dir, sample_run())  # derived ids, one reported span never sent
    _send_spans(phoenix, PROJECT, ["unrelated"])
    out = run_cli(
        *("export", "openinference", run_id, "-o", "oi.json", "--endpoint", phoenix),
        *("--phoenix-project", PROJECT),
    )
    assert out.exit_code == 1
    assert f"sent none of 15 annotation(s) to Phoenix {phoenix}: " in out.stderr
    assert "the agent reported no span id" in out.stderr
    assert f"span eee19b7ec3c1b174 is not in Phoenix project '{PROJECT}'" in out.stderr
    assert (project_dir / "oi.json").is_file()  # the file is written first, as with OTLP
    missing = run_cli(
        *("export", "openinference", run_id, "-o", "oi.json", "--endpoint", phoenix),
        *("--phoenix-project", "no-such-project"),
    )
    assert missing.exit_code == 1
    assert f"Phoenix {phoenix} has no project 'no-such-project'" in missing.stderr
