"""Every reader of a user file, fed random and hostile bytes (issue 11 item 6).

Each reader must either succeed or raise a :class:`CaseworkError` (a located ``InputError`` for a
bad file), never another exception, and must write nothing into the project. Inputs are the
reader's real sample file mutated by structured hostile strategies (JSON nested hundreds of levels
deep, integers of thousands of digits, every field replaced by every JSON type, NaN and Infinity,
lone surrogates, invalid UTF-8, byte-order marks, over-long CSV cells), plus plain random bytes.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import gzip
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import struct
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casework.dataset import declared_tools, find_case, load_dataset, read_versions, release
from casework.dataset._journal import read_journal
from casework.dataset._objects import read_stored
from casework.dataset.jsonl import canonical_bytes, parse_records
from casework.dataset.migrate import load_renames
from casework.dataset.stream import scan_dataset
from casework.dataset.versions import content_hash, files_hash
from casework.errors import CaseworkError
from casework.interop.adk import ImportOptions
from casework.interop.adk._convert import cases_from_adk
from casework.interop.adk._format import read_adk_file
from casework.interop.fncall import FncallOptions, cases_from_fncall, parse_fncall_map
from casework.interop.fncall._rows import FncallStyle
from casework.interop.generic import CaseDefaults, read_rows
from casework.interop.generic._cases import cases_from_rows, parse_case_map
from casework.interop.inspect._samples import inspect_samples
from casework.interop.results import ResultFormat
from casework.interop.run_import import read_id_map, read_results, run_records, standalone_pin
from casework.interop.tau2 import Tau2Options, cases_from_tau2, read_tau2_domain
from casework.interop.tau2._layout import installed_domain
from casework.interop.tau2._tools import tools_from_package
from casework.labelling import (
    assign_labels,
    export_sheets,
    import_sheets,
    list_guidelines,
    read_guideline,
    sheet_key,
)
from casework.labelling.sheets import SheetKind, read_sheet
from casework.leakage import check_prompts
from casework.leakage.reading import iter_documents
from casework.leakage.review import unresolved_flags
from casework.llm.scripted import load_script
from casework.mining import draft_case, failure_signals, read_conversations
from casework.mining.drafts import DraftOptions
from casework.mining.mine import TraceFormat
from casework.privacy import load_key, scrubber_for
from casework.privacy.retention import expire, forget
from casework.project import load_project
from casework.review import import_verdicts
from casework.review._decisions import read_decisions
from casework.review._items import ReviewItem
from casework.review._sheets import read_verdict_sheet, render_sheet, verdict_signature
from casework.review._sheets import sheet_line as review_sheet_line
from casework.review._taxonomy import load_taxonomy
from casework.runner.records import read_log
from casework.schema import Case, LabelRecord
from casework.workbench import open_workbench, status
from casework.workbench.models_judge import ReviewItemRow
from tests.factories import TOOLS, case_dict, write_lines
from tests.mining.otlp_examples import envelope, simple_chat, span

KEY = "fuzz-readers-key-not-secret-0123456789abcdef"
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "refunds"
INTEROP_DATA = Path(__file__).resolve().parent / "interop" / "data"
#: τ²-bench as published (the `conformance` extra): its telecom domain's `db.toml` and tasks.
HAS_TAU2 = importlib.util.find_spec("tau2") is not None

CONFIG = """name = "fuzz"

[agent]
tools = "agent/tools.json"
prompt_files = ["agent/prompt.md"]

[paths]
renames = "renames.toml"

[labelling]
calibration_min_rows = 4
salt = "fuzz-salt"

[privacy]
retention_days = 30

[privacy.id_patterns]
order = '\\bORD-\\d{6}\\b'
"""

#: A project's trajectory review taxonomy (casework's own preset, shortened).
TAXONOMY = """version = "ours-1"

[[category]]
id = "no-verification"
group = "task verification"
description = "Did not check a step's result."

[[category]]
id = "task-derailment"
group = "inter-agent misalignment"
description = "Drifted from the user's goal."
"""

RENAMES = """[tools]
lookup_order = "get_order"

[arguments.issue_refund]
value = "amount"
"""

GUIDELINE = """---
version: refunds-g7
owner: support-ops
---
# Refunds

Refund a damaged item when the order is within 30 days.

## Changelog

- refunds-g7: first version
"""

OPENINFERENCE = envelope(
    [
        span(
            "5b8efff798038103d269b633813fc60c",
            "eee19b7ec3c1b174",
            "llm",
            0,
            {
                "openinference.span.kind": "LLM",
                "session.id": "sess-1",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "Where is ORD-123456? mail me at a@b.example",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_order",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"order_id": "ORD-123456"}',
            },
        ),
        span(
            "5b8efff798038103d269b633813fc60c",
            "aaa19b7ec3c1b174",
            "tool",
            10,
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "get_order",
                "input.value": '{"order_id": "ORD-123456"}',
                "output.value": '{"status": "shipped"}',
            },
            parent="eee19b7ec3c1b174",
            events=[{"name": "feedback", "timeUnixNano": "1", "attributes": []}],
        ),
    ]
)

RUN_LOG = [
    {
        "kind": "run",
        "run_id": "r-1",
        "dataset": "refunds",
        "dataset_ref": "refunds@1",
        "dataset_hash": "0" * 64,
        "agent_spec": "python:a:b",
        "k": 1,
        "seed": 1,
        "concurrency": 1,
        "case_ids": ["r-1"],
        "timeout_s": 5.0,
        "started_at": "2026-11-30T12:00:00Z",
        "casework_version": "0.1.0",
    },
    {
        "kind": "end",
        "run_id": "r-1",
        "finished_at": "2026-11-30T12:01:00Z",
        "trials": 0,
        "passed": 0,
        "failed": 0,
        "undetermined": 0,
        "errors": 0,
        "cost_usd": 0.0,
        "wall_s": 1.0,
    },
]

ADK_EVAL_SET = {
    "eval_set_id": "home",
    "name": "home",
    "eval_cases": [
        {
            "eval_id": "case-1",
            "conversation": [
                {
                    "invocation_id": "i-1",
                    "user_content": {"role": "user", "parts": [{"text": "Turn on the lamp"}]},
                    "final_response": {"role": "model", "parts": [{"text": "Done."}]},
                    "intermediate_data": {
                        "tool_uses": [{"name": "set_device", "args": {"id": "lamp", "on": True}}]
                    },
                }
            ],
            "session_input": {"app_name": "home", "user_id": "u-1", "state": {"rooms": 2}},
        }
    ],
}

# ---------------------------------------------------------------------------------------------
# The project every reader runs in.


_WEATHER = {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}  # fmt: skip
W2C_ROWS = [
    {"uuid": "w-1", "question": "Weather in Porto?", "tools": [json.dumps(_WEATHER)], "correct_answer": "tool_call",
     "target_tool": json.dumps(_WEATHER),
     "answers": {"tool_call": json.dumps({"name": "get_weather", "arguments": {"city": "Porto"}})}},
    {"uuid": "w-2", "question": "Weather?", "tools": [json.dumps(_WEATHER)], "correct_answer": "request_for_info"},
]  # fmt: skip
BFCL_ROWS = [
    {"id": "simple_0", "question": [[{"role": "user", "content": "Weather in Lisbon?"}]],
     "function": [{"name": "get_weather", "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}}}],
     "ground_truth": [{"get_weather": {"city": ["Lisbon", "Lisboa"]}}]},
    {"id": "irrelevance_0", "question": [[{"role": "user", "content": "Sing."}]], "function": [_WEATHER]},
    {"id": "multi_turn_base_0", "question": [[{"role": "user", "content": "Add 2 and 3."}], [{"role": "user", "content": "Then halve it."}]],
     "involved_classes": ["MathAPI"], "initial_config": {}, "ground_truth": [["add(a=2, b=3)"], ["divide(a=5, b=2)"]]},
]  # fmt: skip
#: BFCL's declarations of its MathAPI class, as `multi_turn_func_doc/math_api.json` holds them.
BFCL_DOCS = [
    {"name": "add", "description": "Add.", "parameters": {"type": "dict", "properties": {"a": {"type": "float"}, "b": {"type": "float"}}, "required": ["a", "b"]}},
    {"name": "divide", "description": "Divide.", "parameters": {"type": "dict", "properties": {"a": {"type": "float"}, "b": {"type": "float"}}, "required": ["a", "b"]}},
]  # fmt: skip


#: A GenAI event record as an instrumentation in `event_only` mode exports it (OTLP log export).
OTLP_LOGS = {
    "resourceLogs": [
        {
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "s"}}]},
            "scopeLogs": [
                {
                    "logRecords": [
                        {
                            "timeUnixNano": "1764590400000000000",
                            "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
                            "spanId": "00f067aa0ba902b7",
                            "eventName": "gen_ai.client.inference.operation.details",
                            "attributes": [
                                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                                {
                                    "key": "gen_ai.input.messages",
                                    "value": {
                                        "stringValue": json.dumps(
                                            [{"role": "user", "parts": [{"type": "text", "content": "Refund ORD-000001"}]}]
                                        )
                                    },
                                },
                            ],
                            "body": {},
                        }
                    ]
                }
            ],
        }
    ]
}  # fmt: skip


def _proto_field_names(otlp_json: str) -> str:
    """An OTLP JSON trace export as protobuf's JSON printer writes it with the proto field names."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    def ids_as_base64(value: Any) -> Any:  # OTLP/JSON's hex ids, as protobuf reads bytes
        if isinstance(value, dict):
            return {
                k: base64.b64encode(bytes.fromhex(v)).decode()
                if k in ("traceId", "spanId", "parentSpanId") and v
                else ids_as_base64(v)
                for k, v in value.items()
            }
        return [ids_as_base64(v) for v in value] if isinstance(value, list) else value

    request = json_format.Parse(
        json.dumps(ids_as_base64(json.loads(otlp_json))), ExportTraceServiceRequest()
    )
    return json_format.MessageToJson(request, preserving_proto_field_name=True)


def _jsonl(items: list[Any]) -> bytes:
    return "".join(json.dumps(i) + "\n" for i in items).encode("utf-8")


JOURNALLED = "interrupted"
JOURNAL = json.dumps(
    {
        "schema_version": 1,
        "dataset": JOURNALLED,
        "hash": "xxh3-128",
        "entries": [
            {
                "path": f"datasets/{JOURNALLED}/cases.jsonl",
                "before": None,
                "after": "0" * 32,
                "staged": f".casework/journal/{JOURNALLED}/0-cases.jsonl",
            }
        ],
    },
    indent=1,
)


def _build(root: Path) -> None:
    (root / "agent").mkdir(parents=True)
    (root / "guidelines").mkdir()
    (root / "casework.toml").write_text(CONFIG, encoding="utf-8")
    (root / "agent" / "tools.json").write_text(json.dumps(TOOLS, indent=2), encoding="utf-8")
    (root / "agent" / "prompt.md").write_text("You are a refunds agent.\n", encoding="utf-8")
    (root / "renames.toml").write_text(RENAMES, encoding="utf-8")
    (root / "taxonomy").mkdir()
    (root / "taxonomy" / "trajectory.toml").write_text(TAXONOMY, encoding="utf-8")
    (root / "guidelines" / "refunds.md").write_text(GUIDELINE, encoding="utf-8")
    # An interrupted release's journal, for a dataset no other reader opens (a journal of
    # `refunds` would be completed by every read of it).
    (root / ".casework" / "journal").mkdir(parents=True)
    (root / ".casework" / "journal" / f"{JOURNALLED}.json").write_text(JOURNAL, encoding="utf-8")
    drafts = []
    for i in range(3):
        d = case_dict(f"d-{i}")
        d.pop("label")
        d["situation"]["state"] = {"orders": {f"ORD-00000{i}": {"age_days": 12, "total": 9.5}}}
        drafts.append(d)
    write_lines(root / "datasets" / "refunds" / "cases.jsonl", [case_dict("r-1"), *drafts])
    write_lines(
        root / "review" / "decisions.jsonl",
        [
            {"item": 3, "decision": "accept", "reviewer": "rev-1", "seconds": 12.5},
            {"item": "r-1", "decision": "merge", "reviewer": "rev-2", "fields": {"outcome": "A"}},
        ],
    )
    project = load_project(root)
    cases = load_dataset(project, "refunds").cases
    label = LabelRecord.model_validate(
        {
            "case_id": "r-1",
            "labeller": "lab-1",
            "role": "first",
            "outcome": "resolve",
            "required_tools": ["get_order"],
            "guideline_version": "refunds-g7",
            "labelled_at": "2026-11-01T10:00:00Z",
        }
    )
    release(project, "refunds", cases, "first", labels=[label], now=NOW)
    assign_labels(project, "refunds", ("lab-14", "lab-22"), now=NOW)
    export_sheets(project, "refunds", root / "sheets")
    _verdict_sheets(root)
    traces = root / "traces"
    traces.mkdir()
    (traces / "generic.jsonl").write_bytes(
        b"".join((EXAMPLE / "traces" / "conversations.jsonl").read_bytes().splitlines(True)[:2])
    )
    (traces / "generic.json").write_text(
        json.dumps(
            {
                "conversations": [
                    json.loads(line) for line in (traces / "generic.jsonl").read_text().splitlines()
                ]
            }
        ),
        encoding="utf-8",
    )
    (traces / "otel.jsonl").write_bytes(
        (EXAMPLE / "traces" / "otel-genai.jsonl").read_bytes().splitlines(True)[0]
        + _jsonl([simple_chat()])
    )
    (traces / "oi.json").write_text(json.dumps(OPENINFERENCE), encoding="utf-8")
    (traces / "otel-logs.json").write_text(json.dumps(OTLP_LOGS), encoding="utf-8")
    (traces / "otel-proto.json").write_text(
        _proto_field_names((EXAMPLE / "traces" / "otel-genai.jsonl").read_text().splitlines()[0]),
        encoding="utf-8",
    )
    (root / "adk").mkdir()
    (root / "adk" / "home.test.json").write_text(json.dumps(ADK_EVAL_SET), encoding="utf-8")
    _results_files(root / "results")
    (root / "llm").mkdir()
    (root / "llm" / "responses.jsonl").write_bytes(
        b"".join((EXAMPLE / "llm" / "responses.jsonl").read_bytes().splitlines(True)[:3])
    )
    (root / "runs").mkdir()
    (root / "runs" / "r-1.jsonl").write_bytes(_jsonl(RUN_LOG))
    flag = {
        "id": 1, "left_id": "d-0", "right_id": "r-1", "left_split": "dev",
        "right_split": "holdout", "left_hash": "a" * 64, "right_hash": "b" * 64, "jaccard": 0.9,
        "shared_count": 1, "shared": ["where is my"], "status": "open",
        "first_seen": "2026-11-01T10:00:00Z",
    }  # fmt: skip
    (root / "datasets" / "refunds" / "leakage.jsonl").write_bytes(_jsonl([flag]))
    (root / "corpus").mkdir()
    (root / "corpus" / "ft.jsonl").write_bytes(
        _jsonl([{"messages": [{"role": "user", "content": "hi"}]}, {"text": "a document"}])
    )
    (root / "corpus" / "notes.txt").write_text("one document\nanother one\n", encoding="utf-8")
    (root / "corpus" / "notes.txt.gz").write_bytes(gzip.compress(b"one document\nanother\n"))
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"text": ["one document", "another"]}), root / "corpus" / "docs.parquet"
    )
    shutil.copytree(INTEROP_DATA / "tau2" / "airline", root / "tau2" / "airline")
    if HAS_TAU2:
        _tau2_published(root / "tau2")
    (root / "fncall").mkdir()
    (root / "fncall" / "w2c.jsonl").write_bytes(_jsonl(W2C_ROWS))
    (root / "fncall" / "bfcl.jsonl").write_bytes(_jsonl(BFCL_ROWS))


def _tau2_published(folder: Path) -> None:
    """τ²'s telecom database and two of its tasks, τ²'s airline tools as a `--tools` file."""
    telecom = installed_domain("telecom")
    (folder / "telecom").mkdir()
    shutil.copy(telecom / "db.toml", folder / "telecom" / "db.toml")
    tasks = json.loads((telecom / "tasks_small.json").read_bytes())
    (folder / "telecom" / "tasks.json").write_text(json.dumps(tasks[:2]), encoding="utf-8")
    tools = tools_from_package("tau2.domains.airline.tools", "airline/tools.py")
    decls = [{**t.declaration, "tool_type": t.kind} for t in tools.values()]
    (folder / "tools.json").write_text(json.dumps(decls), encoding="utf-8")
    _tau2_results(folder / "results.json", tasks[0])


def _tau2_results(path: Path, task: dict[str, Any]) -> None:
    """A τ² results file as τ² saves it (its `Results` model): one simulation, a tool call."""
    # τ²-bench ships no type information.
    from tau2.data_model import message as m  # type: ignore[import-untyped]
    from tau2.data_model.simulation import (  # type: ignore[import-untyped]
        AgentInfo,
        Info,
        Results,
        RewardInfo,
        SimulationRun,
        TerminationReason,
        UserInfo,
    )
    from tau2.data_model.tasks import Task  # type: ignore[import-untyped]
    from tau2.environment.environment import EnvironmentInfo  # type: ignore[import-untyped]

    call = m.ToolCall(id="c1", name="get_customer_by_phone", arguments={"phone_number": "5"})
    messages = [
        m.UserMessage(role="user", content="My phone has no signal."),
        m.AssistantMessage(role="assistant", tool_calls=[call], usage={"prompt_tokens": 9}),
        m.ToolMessage(id="c1", role="tool", content='{"customer_id": "C1"}', requestor="assistant"),
        m.AssistantMessage(role="assistant", content="Fixed."),
    ]
    info = Info(
        git_commit="", num_trials=1, max_steps=10, max_errors=10, seed=3,
        user_info=UserInfo(implementation="user_simulator", llm="gpt-4.1", llm_args={}),
        agent_info=AgentInfo(implementation="llm_agent", llm="gpt-4.1"),
        environment_info=EnvironmentInfo(domain_name="telecom", policy=""),
    )  # fmt: skip
    sim = SimulationRun(
        id="s", task_id=task["id"], start_time="2026-12-01T10:00:00", end_time="", duration=1.0,
        termination_reason=TerminationReason.USER_STOP, reward_info=RewardInfo(reward=1.0),
        messages=messages, trial=0, seed=3, agent_cost=0.5,
    )  # fmt: skip
    Results(info=info, tasks=[Task.model_validate(task)], simulations=[sim]).save(path)


def _results_files(folder: Path) -> None:
    """Per-trial results of other tools (`import-run`): τ-bench, generic JSONL, Inspect logs."""
    folder.mkdir()
    tau = json.loads((INTEROP_DATA / "tau" / "results.json").read_text(encoding="utf-8"))
    (folder / "tau.json").write_text(json.dumps(tau[:2]), encoding="utf-8")
    generic = [
        {"task_id": "t-1", "trial": 0, "passed": True, "messages": tau[0]["traj"]},
        {"task_id": "t-1", "trial": 1, "reward": 0.5, "reply": "done"},
    ]
    (folder / "generic.jsonl").write_bytes(_jsonl(generic))
    log = json.loads((INTEROP_DATA / "inspect" / "refunds.json").read_text(encoding="utf-8"))
    samples = [
        {k: s[k] for k in ("id", "epoch", "input", "target", "messages", "output", "scores")}
        for s in log["samples"][:2]
    ]
    small = {"version": log["version"], "eval": {"model": log["eval"]["model"]}, "samples": samples}
    (folder / "inspect.json").write_text(json.dumps(small), encoding="utf-8")
    rows = [
        {
            "id": "w-1",
            "input": "Refund ORD-1",
            "outcome": "resolve",
            "required_tools": ["get_order"],
        },
        {"id": "w-2", "input": [{"role": "user", "content": "hi"}], "outcome": "clarify"},
    ]
    (folder / "cases.jsonl").write_bytes(_jsonl(rows))
    # `casework import run --id-map`: τ-bench's task ids to the imported τ² case ids.
    (folder / "ids.json").write_text(json.dumps({"0": "airline-0", "1": "t-1"}), "utf-8")
    (folder / "samples.csv").write_text(
        'id,input,target,metadata\ns-1,"Refund it",refunded,"{""slice"": ""refunds""}"\n',
        encoding="utf-8",
    )
    (folder / "inspect.eval").write_bytes(
        (INTEROP_DATA / "inspect" / "refunds-deflate.eval").read_bytes()
    )
    # `export inspect-samples` output read back: Inspect tool messages and the whole case kept.
    called = case_dict("s-2")
    called["situation"]["turns"] = [
        {"role": "user", "content": "Where is ORD-000001?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"name": "get_order", "arguments": {"order_id": "ORD-000001"}, "result": {"s": 1}},
                {"name": "get_order", "arguments": {"order_id": "x"}, "id": "c-9", "error": "no"},
            ],
        },
        {"role": "user", "content": "And the refund?"},
    ]
    samples = inspect_samples([Case.model_validate(case_dict("s-1")), Case.model_validate(called)])
    (folder / "samples.jsonl").write_bytes(_jsonl(samples))


def _verdict_sheets(root: Path) -> None:
    """Two sampled judge verdicts (an outcome reading, a fact) on answered JSONL and CSV sheets."""
    common: dict[str, Any] = {
        "run_id": "r-1",
        "case_id": "r-1",
        "trial": 0,
        "slice": "refunds",
        "judge_model": "m",
        "prompt_version": "p",
        "rubric_digest": "r",
        "judge_pass": True,
        "turns": ({"role": "user", "content": "=refund ORD-000001", "tool_calls": []},),
        "tool_calls": (
            {"name": "get_order", "arguments": {"order_id": "o1"}, "result": {"ok": 1}},
        ),
        "reply": "Refunded 9.50; it takes 5 days.",
        "rubric": "Pass if the refund is confirmed.",
    }
    items = [
        ReviewItem(
            key="r-1/r-1/0/outcome",
            kind="outcome",
            fact_index=None,
            accepted=("resolve",),
            **common,
        ),
        ReviewItem(
            key="r-1/r-1/0/answer_fact/0", kind="answer_fact", fact_index=0, fact="9.50", **common
        ),
    ]
    with open_workbench(load_project(root)) as wb, wb.session() as s:
        for item in items:
            s.add(
                ReviewItemRow(
                    key=item.key, sheet_id=item.sheet_id, run_id="r-1", case_id="r-1", trial=0,
                    kind=item.kind, fact_index=item.fact_index, slice="refunds", judge_model="m",
                    prompt_version="p", rubric_digest="r", judge_pass=True,
                    accepted=list(item.accepted), reviewers=["ann"], sampled_at=NOW,
                )
            )  # fmt: skip
        key = sheet_key(s)
        assert key is not None
    # Signed as `judge sample` signs them, so a mutation reaches the checks past the signature.
    lines = [
        review_sheet_line(item, "ann", signature=verdict_signature(key, "ann", item.sheet_id))
        for item in items
    ]
    lines[0]["answer"], lines[1]["answer"] = "resolve", "yes"
    (root / "verdicts").mkdir()
    (root / "verdicts" / "verdicts-ann.jsonl").write_bytes(render_sheet(lines, "jsonl"))
    (root / "verdicts" / "verdicts-ann.csv").write_bytes(render_sheet([lines[1]], "csv"))


def _verdicts(name: str) -> Callable[[Path], None]:
    def read(root: Path) -> None:
        path = root / "verdicts" / name
        read_verdict_sheet(path, name)
        import_verdicts(load_project(root), [path], now=NOW)

    return read


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as patch:
        # The workbench lives outside the project, so "nothing written" covers every project file.
        patch.setenv("CASEWORK_DB_URL", f"sqlite:///{base / 'workbench.db'}")
        patch.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
        folder = base / "proj"
        folder.mkdir()
        _build(folder)
        yield folder


# ---------------------------------------------------------------------------------------------
# Readers: what each one reads and how casework calls it.


def _dataset(root: Path) -> None:
    project = load_project(root)
    loaded = load_dataset(project, "refunds")
    # What a release would write (the fast canonical writer) and the scan `cases` and `show` make
    # (labels checked as they stream past), on the same hostile bytes.
    canonical_bytes(loaded.cases)
    canonical_bytes(loaded.labels)
    scan_dataset(project, "refunds", lambda case: None, keep_labels=False)
    load_dataset(project, "refunds@1")
    # A large release is streamed from its files on disk (the tree when it is the release, else
    # a checked copy): the same hostile tree read as the release, here at any size.
    with mock.patch("casework.dataset.stream.ON_DISK_MIN_CASES", 0):
        scan_dataset(project, "refunds@1", lambda case: None, keep_labels=False)
    read_versions(project.dataset_dir("refunds"), "versions.jsonl")


def _indexed(root: Path) -> None:
    """`show` (through the latest release's index) and `expire`/`forget` dry runs (streamed)."""
    project = load_project(root)
    for ref in ("refunds", "refunds@1"):
        with contextlib.suppress(CaseworkError):  # one refusal must not hide the next reader
            find_case(project, ref, "r-1")
    with contextlib.suppress(CaseworkError):
        expire(project, today=date(2026, 12, 1), now=NOW, dry_run=True)
    forget(project, emails=["ada.fakename@example.com"], now=NOW, dry_run=True)


def _traces(name: str, fmt: TraceFormat | None) -> Callable[[Path], None]:
    def read(root: Path) -> None:
        project = load_project(root)
        conversations, _ = read_conversations(project, [root / "traces" / name], fmt, ())
        scrubber = scrubber_for(project, load_key(project))
        options = DraftOptions("refunds", "dev", NOW, 30)
        for conv in conversations:
            case = draft_case(conv, scrubber, options, failure_signals(conv))
            if case is not None:  # what the release would write must be writable, and read back
                parse_records(canonical_bytes([case]), Case, shown="cases.jsonl")

    return read


def _sheet(name: str, kind: SheetKind) -> Callable[[Path], None]:
    def read(root: Path) -> None:
        path = root / "sheets" / name
        read_sheet(path, name)
        import_sheets(load_project(root), [path], kind=kind, now=NOW)

    return read


def _renames(root: Path) -> None:
    project = load_project(root)
    load_renames(root / "renames.toml", "renames.toml", declared_tools(project))


def _guidelines(root: Path) -> None:
    project = load_project(root)
    read_guideline(project, "refunds")
    list_guidelines(project)


def _adk(root: Path) -> None:
    adk = read_adk_file(root / "adk" / "home.test.json", "home.test.json")
    cases_from_adk([adk], ImportOptions(slice="adk"))


def _results(name: str, fmt: ResultFormat) -> Callable[[Path], None]:
    def read(root: Path) -> None:
        path = root / "results" / name
        results = read_results(path, fmt, shown=name)
        pin = standalone_pin(path.read_bytes(), name)
        run_records(results, run_id="imp", pin=pin, spec="import:x", threshold=1.0, now=NOW)

    return read


def _rows(name: str, defaults: CaseDefaults) -> Callable[[Path], None]:
    def read(root: Path) -> None:
        rows = read_rows((root / "results" / name).read_bytes(), name)
        paths = parse_case_map(())
        for case in cases_from_rows(rows, name, paths, defaults):
            parse_records(canonical_bytes([case]), Case, shown="cases.jsonl")

    return read


def _corpus(name: str) -> Callable[[Path], None]:
    def read(root: Path) -> None:
        for _ in iter_documents(str(root / "corpus" / name)):
            pass

    return read


def _tau2(root: Path) -> None:
    folder = root / "tau2" / "airline"
    domain = read_tau2_domain(folder, "tau2/airline")
    ref = {"path": "states/x.json", "sha256": "0" * 64}
    cases, _ = cases_from_tau2(
        domain, Tau2Options(), json.loads((folder / "db.json").read_bytes()), ref
    )
    parse_records(canonical_bytes(cases), Case, shown="cases.jsonl")


def _tau2_telecom(root: Path) -> None:
    """Telecom as `import tau2 --domain telecom` reads it: `db.toml` the shared state."""
    folder = root / "tau2" / "telecom"
    domain = read_tau2_domain(folder, "tau2/telecom")
    ref = {"path": "states/x.json", "sha256": "0" * 64}
    db = domain.db[0] if domain.db is not None else None
    cases, _ = cases_from_tau2(domain, Tau2Options(), db, ref if db is not None else None)
    parse_records(canonical_bytes(cases), Case, shown="cases.jsonl")


def _tau2_tools(root: Path) -> None:
    """The `--tools` file of `import tau2` (a tools.json of any layout), then the conversion."""
    folder = root / "tau2" / "airline"
    tools = root / "tau2" / "tools.json"
    domain = read_tau2_domain(folder, "tau2/airline", tools_file=tools, tools_shown="tools.json")
    ref = {"path": "states/x.json", "sha256": "0" * 64}
    cases, _ = cases_from_tau2(
        domain, Tau2Options(), json.loads((folder / "db.json").read_bytes()), ref
    )
    parse_records(canonical_bytes(cases), Case, shown="cases.jsonl")


def _fncall(name: str, style: FncallStyle) -> Callable[[Path], None]:
    def read(root: Path) -> None:
        rows = read_rows((root / "fncall" / name).read_bytes(), name)
        paths = parse_fncall_map(style, ())
        docs = {"MathAPI": BFCL_DOCS}
        cases, _ = cases_from_fncall(rows, name, paths, FncallOptions(style), "d", docs)
        parse_records(canonical_bytes(cases), Case, shown="cases.jsonl")

    return read


@dataclass(frozen=True)
class Reader:
    """One reader: the project file it reads, how to mutate it, and the call that reads it."""

    name: str
    target: str
    kind: str  # json, jsonl, toml, csv or text
    read: Callable[[Path], object]


READERS = [
    Reader("cases", "datasets/refunds/cases.jsonl", "jsonl", _dataset),
    Reader("labels", "datasets/refunds/labels.jsonl", "jsonl", _dataset),
    Reader("versions", "datasets/refunds/versions.jsonl", "jsonl", _dataset),
    Reader("cases-indexed", "datasets/refunds/cases.jsonl", "jsonl", _indexed),
    Reader(
        "release-journal",
        f".casework/journal/{JOURNALLED}.json",
        "json",
        lambda r: read_journal(load_project(r), JOURNALLED),
    ),
    Reader("labels-indexed", "datasets/refunds/labels.jsonl", "jsonl", _indexed),
    Reader("versions-indexed", "datasets/refunds/versions.jsonl", "jsonl", _indexed),
    Reader("config", "casework.toml", "toml", load_project),
    Reader("tools", "agent/tools.json", "json", lambda r: declared_tools(load_project(r))),
    Reader("renames", "renames.toml", "toml", _renames),
    Reader(
        "trajectory-taxonomy",
        "taxonomy/trajectory.toml",
        "toml",
        lambda r: load_taxonomy(load_project(r)),
    ),
    Reader("guideline", "guidelines/refunds.md", "text", _guidelines),
    Reader("generic-jsonl", "traces/generic.jsonl", "jsonl", _traces("generic.jsonl", "jsonl")),
    Reader("generic-json", "traces/generic.json", "json", _traces("generic.json", None)),
    Reader("otel", "traces/otel.jsonl", "jsonl", _traces("otel.jsonl", "otel")),
    Reader("otel-detected", "traces/otel.jsonl", "jsonl", _traces("otel.jsonl", None)),
    Reader("otel-logs", "traces/otel-logs.json", "json", _traces("otel-logs.json", "otel")),
    Reader("otel-logs-detected", "traces/otel-logs.json", "json", _traces("otel-logs.json", None)),
    Reader("openinference", "traces/oi.json", "json", _traces("oi.json", "openinference")),
    Reader(
        "otel-proto-names", "traces/otel-proto.json", "json", _traces("otel-proto.json", "otel")
    ),
    Reader(
        "label-sheet-jsonl",
        "sheets/refunds.lab-14.labels.jsonl",
        "jsonl",
        _sheet("refunds.lab-14.labels.jsonl", "label"),
    ),
    Reader(
        "label-sheet-csv",
        "sheets/refunds.lab-22.labels.csv",
        "csv",
        _sheet("refunds.lab-22.labels.csv", "label"),
    ),
    Reader(
        "adjudication-sheet-jsonl",
        "sheets/refunds.lab-22.labels.jsonl",
        "jsonl",
        _sheet("refunds.lab-22.labels.jsonl", "adjudication"),
    ),
    Reader(
        "adjudication-sheet-csv",
        "sheets/refunds.lab-14.labels.csv",
        "csv",
        _sheet("refunds.lab-14.labels.csv", "adjudication"),
    ),
    Reader("adk", "adk/home.test.json", "json", _adk),
    Reader(
        "verdict-sheet-jsonl",
        "verdicts/verdicts-ann.jsonl",
        "jsonl",
        _verdicts("verdicts-ann.jsonl"),
    ),
    Reader("verdict-sheet-csv", "verdicts/verdicts-ann.csv", "csv", _verdicts("verdicts-ann.csv")),
    Reader(
        "scripted-llm",
        "llm/responses.jsonl",
        "jsonl",
        lambda r: load_script(r / "llm" / "responses.jsonl"),
    ),
    Reader("run-log", "runs/r-1.jsonl", "jsonl", lambda r: read_log(r / "runs" / "r-1.jsonl")),
    Reader(
        "cases-jsonl",
        "results/cases.jsonl",
        "jsonl",
        _rows("cases.jsonl", CaseDefaults("jsonl", "m")),
    ),
    Reader(
        "inspect-samples-csv",
        "results/samples.csv",
        "csv",
        _rows("samples.csv", CaseDefaults("inspect", "m")),
    ),
    Reader(
        "inspect-samples-jsonl",
        "results/samples.jsonl",
        "jsonl",
        _rows("samples.jsonl", CaseDefaults("inspect", "m")),
    ),
    Reader("results-tau", "results/tau.json", "json", _results("tau.json", "tau")),
    Reader(
        "results-generic", "results/generic.jsonl", "jsonl", _results("generic.jsonl", "generic")
    ),
    Reader(
        "results-inspect-json", "results/inspect.json", "json", _results("inspect.json", "inspect")
    ),
    Reader(
        "results-inspect-eval",
        "results/inspect.eval",
        "binary",
        _results("inspect.eval", "inspect"),
    ),
    Reader(
        "leakage-flags",
        "datasets/refunds/leakage.jsonl",
        "jsonl",
        lambda r: unresolved_flags(load_project(r), "refunds"),
    ),
    Reader("corpus-jsonl", "corpus/ft.jsonl", "jsonl", _corpus("ft.jsonl")),
    Reader("corpus-text", "corpus/notes.txt", "text", _corpus("notes.txt")),
    Reader("corpus-gzip", "corpus/notes.txt.gz", "binary", _corpus("notes.txt.gz")),
    Reader("corpus-parquet", "corpus/docs.parquet", "binary", _corpus("docs.parquet")),
    Reader("prompt-file", "agent/prompt.md", "text", lambda r: check_prompts(load_project(r))),
    # The SQLite workbench file (outside the project: CASEWORK_DB_URL of the fixture), as every
    # command that opens it reads it first.
    Reader(
        "workbench-db",
        "../workbench.db",
        "binary",
        lambda r: status(load_project(r).workbench_url()),
    ),
    Reader("tau2-tasks", "tau2/airline/tasks.json", "json", _tau2),
    Reader("tau2-split", "tau2/airline/split_tasks.json", "json", _tau2),
    Reader("tau2-tools-py", "tau2/airline/tools.py", "text", _tau2),
    Reader(
        "run-id-map",
        "results/ids.json",
        "json",
        lambda r: read_id_map(r / "results" / "ids.json", "ids.json"),
    ),
    Reader(
        "review-decisions",
        "review/decisions.jsonl",
        "jsonl",
        lambda r: read_decisions(r / "review" / "decisions.jsonl", "decisions.jsonl"),
    ),
    Reader("fncall-when2call", "fncall/w2c.jsonl", "jsonl", _fncall("w2c.jsonl", "when2call")),
    Reader("fncall-bfcl", "fncall/bfcl.jsonl", "jsonl", _fncall("bfcl.jsonl", "bfcl")),
]
if HAS_TAU2:  # read from the installed wheel, as published
    READERS += [
        Reader("tau2-telecom-db", "tau2/telecom/db.toml", "toml", _tau2_telecom),
        Reader("tau2-telecom-tasks", "tau2/telecom/tasks.json", "json", _tau2_telecom),
        Reader("tau2-tools-json", "tau2/tools.json", "json", _tau2_tools),
        Reader(
            "results-tau2",
            "tau2/results.json",
            "json",
            lambda r: run_records(
                read_results(r / "tau2" / "results.json", "tau2", shown="results.json"),
                run_id="imp",
                pin=standalone_pin(b"", "results.json"),
                spec="import:tau2",
                threshold=1.0,
                now=NOW,
            ),
        ),
    ]

# ---------------------------------------------------------------------------------------------
# Hostile strategies.

# JSON texts no Python value serialises to, spliced in where a placeholder string was dumped.
_SPLICES: dict[str, Callable[[int], str]] = {
    "deep-list": lambda n: "[" * n + "]" * n,
    "deep-object": lambda n: '{"a":' * n + "1" + "}" * n,
    "deep-mixed": lambda n: '[{"a":' * n + "0" + "}]" * n,
    "huge-int": lambda n: "9" * (n * 10),
    "huge-negative": lambda n: "-" + "1" * (n * 10),
    "huge-exponent": lambda n: "1e" + "9" * n,
    "lone-surrogate": lambda n: '"\\ud800 text"',
    "nan": lambda n: "NaN",
    "infinity": lambda n: "-Infinity",
}
_DEPTHS = st.sampled_from([99, 101, 150, 430, 700, 1200, 20000])
_PLACEHOLDER = re.compile(r'"@@(\w[\w-]*):(\d+)@@"')


@st.composite
def spliced(draw: st.DrawFn) -> str:
    return f"@@{draw(st.sampled_from(sorted(_SPLICES)))}:{draw(_DEPTHS)}@@"


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "0x", "=1+1", "\x00", "x" * 140_000, "\u202e", "2026-13-45T99:00:00Z"]),
)
HOSTILE_VALUES = st.one_of(
    spliced(),
    _SCALARS,
    st.lists(_SCALARS, max_size=3),
    st.dictionaries(st.text(max_size=6), _SCALARS, max_size=3),
)


def _dump(value: Any) -> str:
    text = json.dumps(value, allow_nan=True)
    return _PLACEHOLDER.sub(lambda m: _SPLICES[m.group(1)](int(m.group(2))), text)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replace(copy[head], tuple(rest), new)
    return copy


@st.composite
def mutated_json(draw: st.DrawFn, doc: Any) -> str:
    """``doc`` with one field (any depth, the root too) replaced by a hostile value or removed."""
    # Pick a depth first, then a field at that depth: the structure (a list of spans, a table of
    # messages) is hit as often as the leaves, which far outnumber it.
    by_depth: dict[int, list[tuple[Any, ...]]] = {}
    for found in _paths(doc):
        by_depth.setdefault(len(found), []).append(found)
    at_depth = by_depth[draw(st.sampled_from(sorted(by_depth)))]
    path = at_depth[draw(st.integers(0, len(at_depth) - 1))]
    if path and draw(st.integers(0, 5)) == 0:
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        trimmed = (
            {k: v for k, v in parent.items() if k != path[-1]}
            if isinstance(parent, dict)
            else [v for i, v in enumerate(parent) if i != path[-1]]
        )
        return _dump(_replace(doc, path[:-1], trimmed))
    return _dump(_replace(doc, path, draw(HOSTILE_VALUES)))


@st.composite
def mutated_jsonl(draw: st.DrawFn, sample: bytes) -> bytes:
    lines = sample.decode("utf-8").splitlines()
    index = draw(st.integers(0, len(lines) - 1))
    lines[index] = draw(mutated_json(json.loads(lines[index])))
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


_TOML_VALUES = st.one_of(
    st.sampled_from(
        [
            "[" * 600 + "]" * 600,
            "9" * 5000,
            "-" + "1" * 4400,
            "nan",
            "-inf",
            '"\\ud800"',
            "{a = {b = {c = 1}}}",
            "{" + "a = {" * 400 + "}" * 401,
            '[1, "a", {b = 2}]',
            "true",
            '"x"',
            "1979-05-27T07:32:00Z",
            '"' + "x" * 200_000 + '"',
            "",
            "'''unterminated",
        ]
    ),
    st.text(max_size=20),
)


@st.composite
def mutated_toml(draw: st.DrawFn, sample: bytes) -> bytes:
    lines = sample.decode("utf-8").splitlines()
    candidates = [i for i, line in enumerate(lines) if "=" in line] or [0]
    index = draw(st.sampled_from(candidates))
    key = lines[index].split("=", 1)[0]
    lines[index] = f"{key}= {draw(_TOML_VALUES)}"
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


_CELLS = st.one_of(
    st.sampled_from(
        ["x" * 140_000, "=1+1", "'", '"', "\r", "\x00", "yes", "maybe", "", "resolve", "get_order"]
    ),
    st.text(max_size=20),
)


@st.composite
def mutated_csv(draw: st.DrawFn, sample: bytes) -> bytes:
    rows = list(csv.reader(io.StringIO(sample.decode("utf-8"), newline="")))
    r = draw(st.integers(0, len(rows) - 1))
    c = draw(st.integers(0, len(rows[r]) - 1))
    rows[r][c] = draw(_CELLS)
    if draw(st.booleans()):
        rows[r] = rows[r][: draw(st.integers(0, len(rows[r])))]
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue().encode("utf-8")


@st.composite
def mutated_text(draw: st.DrawFn, sample: bytes) -> bytes:
    lines = sample.decode("utf-8").splitlines()
    index = draw(st.integers(0, len(lines) - 1))
    lines[index] = draw(
        st.one_of(st.text(max_size=30), st.sampled_from(["---", "version:", "x" * 200_000]))
    )
    return "\n".join(lines).encode("utf-8", "surrogatepass")


_BAD_BYTES = st.sampled_from(
    [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00", b"\xef\xbb\xbf", b"\r"]
)


@st.composite
def byte_damage(draw: st.DrawFn, sample: bytes) -> bytes:
    """Invalid UTF-8, a NUL, a BOM or a CR at a random offset; a BOM in front; or a cut."""
    at = draw(st.integers(0, len(sample)))
    how = draw(st.sampled_from(["insert", "bom", "cut"]))
    if how == "bom":
        return b"\xef\xbb\xbf" + sample
    if how == "cut":
        return sample[:at]
    return sample[:at] + draw(_BAD_BYTES) + sample[at:]


def hostile_bytes(kind: str, sample: bytes) -> st.SearchStrategy[bytes]:
    structured: st.SearchStrategy[bytes]
    if kind == "json":
        structured = mutated_json(json.loads(sample)).map(
            lambda t: t.encode("utf-8", "surrogatepass")
        )
    elif kind == "jsonl":
        structured = mutated_jsonl(sample)
    elif kind == "toml":
        structured = mutated_toml(sample)
    elif kind == "csv":
        structured = mutated_csv(sample)
    elif kind == "text":
        structured = mutated_text(sample)
    else:  # binary formats: damage the bytes
        structured = byte_damage(sample)
    return st.one_of(structured, structured, byte_damage(sample), st.binary(max_size=300))


# ---------------------------------------------------------------------------------------------
# The property.


def _snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_each_readers_own_sample_is_read(root: Path, reader: Reader) -> None:
    """The unmutated sample is accepted, so mutations reach the checks behind the first one."""
    reader.read(root)


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_reader_survives_hostile_bytes(root: Path, reader: Reader) -> None:
    target = root / reader.target
    sample = target.read_bytes()

    @settings(
        max_examples=int(os.environ.get("CASEWORK_FUZZ_EXAMPLES", "25")),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=hostile_bytes(reader.kind, sample))
    def check(data: bytes) -> None:
        target.write_bytes(data)
        before = _snapshot(root)
        try:
            reader.read(root)
        except CaseworkError as exc:
            str(exc)  # the message itself must render
        assert _snapshot(root) == before, "a reader wrote into the project"

    try:
        check()
    finally:
        target.write_bytes(sample)


@pytest.mark.parametrize("first", [False, True], ids=["next", "first"])
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("target", ["cases.jsonl", "labels.jsonl"])
def test_release_of_hostile_files_reports_or_releases(
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
    target: str,
    first: bool,
) -> None:
    """`casework dataset release` reads the tree itself: a bad file is refused with nothing written.

    ``first``: the dataset was never released (its log and version store gone), so it takes
    the first release's path (labels validated beside the cases, the hash computed as written).

    With ``workers=2`` the lines are validated on forked workers in tiny shares (a bad share
    cancels the rest; the full path then reports), as a large tree is.
    """
    if workers > 1:
        monkeypatch.setattr("casework.dataset._incremental.PARALLEL_MIN_ROW_BYTES", 0)
        monkeypatch.setattr("casework.dataset._incremental.parallel_workers", lambda: workers)
        monkeypatch.setattr("casework.dataset._incremental._SHARE_BYTES", 512)
        # ... and written as a large tree is: store and staging side by side, the version hash
        # computed as the cases are staged.
        monkeypatch.setattr("casework.dataset._write.OVERLAP_MIN_BYTES", 0)
    sample = (root / "datasets" / "refunds" / target).read_bytes()
    told: list[tuple[str, int, int]] = []

    @settings(
        max_examples=int(os.environ.get("CASEWORK_FUZZ_EXAMPLES", "25")),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=hostile_bytes("jsonl", sample))
    def check(data: bytes) -> None:
        copy = tmp_path / "release"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(root, copy)
        (copy / "datasets" / "refunds" / target).write_bytes(data)
        if first:
            (copy / "datasets" / "refunds" / "versions.jsonl").unlink()
            shutil.rmtree(copy / ".casework" / "versions", ignore_errors=True)
        before = _snapshot(copy)
        try:
            record = release(
                load_project(copy), "refunds", None, "fuzz", on_progress=lambda *a: told.append(a)
            )
        except CaseworkError as exc:
            str(exc)  # the message itself must render
            assert _snapshot(copy) == before, "a refused release wrote into the project"
        else:
            folder = copy / "datasets" / "refunds"
            # nothing released: the tree equals the latest release
            digest = record.hash if record else read_versions(folder, "v")[-1].hash
            assert digest == files_hash(folder)  # the hash names what was written
            stored = read_stored(copy / ".casework", digest)  # the store rebuilds it
            assert stored is not None and content_hash(*stored) == digest

    check()
    assert all(0 <= d <= t for _, d, t in told)


# ---------------------------------------------------------------------------------------------
# The inputs issue 11 found, each one pinned.

_GOOD_SPAN = {
    "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
    "spanId": "00f067aa0ba902b7",
    "name": "chat",
    "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}],
}


def _otlp(rs: Any) -> bytes:
    return json.dumps({"resourceSpans": rs}).encode()


def _in_scope(**span: Any) -> bytes:
    return _otlp([{"scopeSpans": [{"spans": [{**_GOOD_SPAN, **span}]}]}])


# Inputs a reader may accept (a corpus skips a bad line and says so; a deep JSON string stays text).
ACCEPTED = {
    "corpus: nested 5,000 deep",
    "generic: content holds JSON nested 900 deep",
    "sheet csv: cell of 200,000 characters",
}

PINNED = {
    "cases: nested 1,200 deep": (
        "cases",
        b'{"id": "a", "situation": ' + b"[" * 1200 + b"]" * 1200 + b"}\n",
    ),
    "cases: 5,000-digit integer": ("cases", b'{"id": "a", "n": ' + b"9" * 5000 + b"}\n"),
    "labels: nested 20,000 deep": ("labels", b"[" * 20000 + b"]" * 20000 + b"\n"),
    "config: invalid UTF-8": ("config", b'name = "caf\xe9"\n'),
    "config: nested arrays": ("config", b"name = " + b"[" * 2000 + b"]" * 2000 + b"\n"),
    "config: 5,000-digit integer": (
        "config",
        b'name = "x"\n[labelling]\ncalibration_min_rows = ' + b"9" * 5000 + b"\n",
    ),
    "tools: invalid UTF-8": ("tools", b'[{"name": "get_order", "description": "\xff"}]'),
    "tools: nested 5,000 deep": ("tools", b"[" * 5000 + b"]" * 5000),
    "renames: invalid UTF-8": ("renames", b'[tools]\nlookup_order = "get_\xc3\x28order"\n'),
    "guideline: invalid UTF-8": ("guideline", b"---\nversion: refunds-g7\n---\n\xff\xfe\n"),
    "otlp: resourceSpans item is a string": ("otel", _otlp(["x"])),
    "otlp: resource is a list": ("otel", _otlp([{"resource": [], "scopeSpans": []}])),
    "otlp: scopeSpans is an object": ("otel", _otlp([{"scopeSpans": {"spans": []}}])),
    "otlp: scope is a number": ("otel", _otlp([{"scopeSpans": [7]}])),
    "otlp: span is a list": ("otel", _otlp([{"scopeSpans": [{"spans": [[1]]}]}])),
    "otlp: status is a string": ("otel", _in_scope(status="ERROR")),
    "otlp: attributes is a string": ("otel", _in_scope(attributes="a=b")),
    "otlp: arrayValue is a list": (
        "otel",
        _in_scope(attributes=[{"key": "k", "value": {"arrayValue": [1, 2]}}]),
    ),
    "otlp: doubleValue is text": (
        "otel",
        _in_scope(attributes=[{"key": "k", "value": {"doubleValue": "abc"}}]),
    ),
    "otlp: start time of 4,000 digits": ("otel", _in_scope(startTimeUnixNano="9" * 4000)),
    "openinference: index of 5,000 digits": (
        "openinference",
        _in_scope(
            attributes=[
                {"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
                {
                    "key": "llm.input_messages." + "9" * 5000 + ".message.role",
                    "value": {"stringValue": "user"},
                },
            ]
        ),
    ),
    "generic: nested 1,200 deep": (
        "generic-jsonl",
        b'{"session_id": "s", "messages": ' + b"[" * 1200 + b"]" * 1200 + b"}\n",
    ),
    "generic: content holds JSON nested 900 deep": (
        "generic-jsonl",
        json.dumps(
            {
                "session_id": "s",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "tool", "name": "get_order", "content": "[" * 900 + "]" * 900},
                ],
            }
        ).encode(),
    ),
    "generic: lone surrogate": (
        "generic-jsonl",
        b'{"session_id": "s", "messages": [{"role": "user", "content": "\\ud800"}]}\n',
    ),
    "sheet csv: cell of 200,000 characters": (
        "label-sheet-csv",
        b"sheet,dataset,labeller,case_id,guideline_version,outcome,state\nlabel,refunds,lab-22,d-1,refunds-g7,,"
        + b"x" * 200_000
        + b"\n",
    ),
    "sheet csv: NUL and a stray quote": (
        "label-sheet-csv",
        b'sheet,outcome\n"label\x00,"re"solve\n',
    ),
    "adk: nested 3,000 deep": ("adk", b"[" * 3000 + b"]" * 3000),
    "scripted: regex nested 1,000 deep": (
        "scripted-llm",
        json.dumps({"regex": "(" * 1000 + ")" * 1000, "reply": "x"}).encode() + b"\n",
    ),
    "scripted: regex repeat count too large": (
        "scripted-llm",
        b'{"regex": "a{99999999999}", "reply": "x"}\n',
    ),
    "run log: nested 3,000 deep": ("run-log", b"[" * 3000 + b"]" * 3000 + b"\n" + _jsonl(RUN_LOG)),
    "corpus: invalid UTF-8": ("corpus-text", b"fine\n\xff\xfe bad\n"),
    "corpus: nested 5,000 deep": ("corpus-jsonl", b"[" * 5000 + b"]" * 5000 + b"\n"),
    "prompt: invalid UTF-8": ("prompt-file", b"You are \xff an agent\n"),
}
if HAS_TAU2:
    PINNED |= {
        "tau2 db.toml: 5,000-digit integer": (
            "tau2-telecom-db",
            b"[[plans]]\nplan_id = " + b"9" * 5000 + b"\n",
        ),
        "tau2 db.toml: nested arrays": (
            "tau2-telecom-db",
            b"[[plans]]\nplan_id = " + b"[" * 2000 + b"]" * 2000 + b"\n",
        ),
        "tau2 db.toml: a date JSON cannot hold": (
            "tau2-telecom-db",
            b"[[plans]]\nplan_id = 1979-05-27T07:32:00Z\n",
        ),
        "tau2 db.toml: invalid UTF-8": ("tau2-telecom-db", b'[[plans]]\nname = "caf\xe9"\n'),
    }


@pytest.mark.parametrize("name", sorted(PINNED))
def test_known_hostile_input_gets_a_located_error(root: Path, name: str) -> None:
    reader_name, data = PINNED[name]
    reader = next(r for r in READERS if r.name == reader_name)
    target = root / reader.target
    sample = target.read_bytes()
    target.write_bytes(data)
    try:
        before = _snapshot(root)
        if name in ACCEPTED:
            reader.read(root)
        else:
            with pytest.raises(CaseworkError) as info:
                reader.read(root)
            # Located: the message starts with the file it is about.
            assert str(info.value).split(":")[0].endswith(Path(reader.target).name)
        assert _snapshot(root) == before
    finally:
        target.write_bytes(sample)


def test_own_csv_export_of_a_large_state_reads_back(root: Path) -> None:
    # A case whose state is larger than the csv module's 131,072-character cell limit.
    from casework.labelling.sheets import render_csv, sheet_line

    data = case_dict("big")
    data["situation"]["state"] = {"history": ["x" * 1000] * 200}
    case = Case.model_validate(data)
    project = load_project(root)
    line = sheet_line("label", "refunds", "lab-14", case, "refunds-g7", declared_tools(project))
    path = root / "big.csv"
    try:
        path.write_bytes(render_csv([line], "label", list(declared_tools(project))))
        entries, problems = read_sheet(path, "big.csv")
    finally:
        path.unlink()
    assert problems == []
    assert json.loads(entries[0].answer.state) == case.situation.state


# ---------------------------------------------------------------------------------------------
# Bounded work: a decompression bomb for the archive readers, a self-copying state patch for the
# case reader. Each is refused with a CaseworkError, having written nothing.

_BOMB_EXAMPLES = max(3, int(os.environ.get("CASEWORK_FUZZ_EXAMPLES", "25")) // 4)
_ZSTD_METHOD = 93


def _zstd_member_zip(name: str, frames: bytes) -> bytes:
    """A zip of one stored entry relabelled zstd (method 93), as Inspect writes its entries."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(name, frames)
    out = bytearray(buffer.getvalue())
    for signature, at_method in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        at = out.find(signature)
        struct.pack_into("<H", out, at + at_method, _ZSTD_METHOD)
    return bytes(out)


#: Limits lowered for these tests (the defaults are 256 MiB and ratio 200): a corpus of blank
#: lines is read a line at a time until a bound fires, so the work grows with the bytes inflated
#: before the refusal; at the defaults one 48 MiB bomb of newlines took seconds. Every bomb drawn
#: below still exceeds both bounds several times over.
_BOMB_LIMITS = {"CASEWORK_MAX_DECOMPRESSED": "4M", "CASEWORK_MAX_COMPRESSION_RATIO": "20"}


@st.composite
def bombs(draw: st.DrawFn, reader: str) -> bytes:
    """A small file that inflates to 8 MiB up to gigabytes (zstd frames repeated)."""
    unit = draw(st.sampled_from([b"a", b" ", b"\x00", b"0", b"\n", b'{"a": 1}\n']))
    payload = unit * ((draw(st.sampled_from([8, 12, 16])) << 20) // len(unit))
    if reader == "corpus-gzip":
        return gzip.compress(payload, compresslevel=draw(st.sampled_from([1, 9])))
    member = draw(st.sampled_from(["header.json", "samples/r-1_epoch_1.json"]))
    if draw(st.booleans()):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(member, payload)
        return buffer.getvalue()
    frame = zstandard.ZstdCompressor().compress(payload)
    return _zstd_member_zip(member, frame * draw(st.sampled_from([1, 16, 100])))


@pytest.mark.parametrize("name", ["results-inspect-eval", "corpus-gzip"])
def test_archive_readers_refuse_a_decompression_bomb(
    root: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable, value in _BOMB_LIMITS.items():
        monkeypatch.setenv(variable, value)
    reader = next(r for r in READERS if r.name == name)
    target = root / reader.target
    sample = target.read_bytes()

    @settings(
        max_examples=_BOMB_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=bombs(name))
    def check(data: bytes) -> None:
        target.write_bytes(data)
        before = _snapshot(root)
        with pytest.raises(CaseworkError, match=r"decompression bomb|decompresses to more than"):
            reader.read(root)
        assert _snapshot(root) == before, "a reader wrote into the project"

    try:
        check()
    finally:
        target.write_bytes(sample)


@st.composite
def self_copying_patches(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Ops that each copy the state (or a growing branch of it) into itself: doubling it."""
    ops = draw(st.integers(min_value=22, max_value=40))
    whole = draw(st.booleans())
    patch: list[dict[str, Any]] = []
    for i in range(ops):
        if whole:
            patch.append({"op": "copy", "from": "", "path": f"/c{i}"})
        else:  # the branch /orders copied into itself, deeper each time
            patch.append({"op": "copy", "from": "/orders", "path": f"/orders/c{i}"})
    return patch


def test_case_reader_refuses_a_self_copying_state_patch(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from casework.dataset.state import initial_state

    # The bound lowered from 1,000,000 values: the work before the refusal grows with the bound
    # (seconds at the default), and 22 or more doublings still pass 10,000 many times over.
    monkeypatch.setenv("CASEWORK_MAX_PATCH_VALUES", "10000")
    target = root / "datasets" / "refunds" / "cases.jsonl"
    sample = target.read_bytes()
    state = root / "states" / "shop.json"
    state.parent.mkdir(exist_ok=True)
    state_bytes = json.dumps({"orders": {"ORD-1": {"total": 9.5}}, "next": 1}).encode()
    state.write_bytes(state_bytes)
    sha = hashlib.sha256(state_bytes).hexdigest()

    @settings(max_examples=_BOMB_EXAMPLES, deadline=None, database=None)
    @given(patch=self_copying_patches())
    def check(patch: list[dict[str, Any]]) -> None:
        case = case_dict("p-1")
        case["situation"]["state_ref"] = {"path": "states/shop.json", "sha256": sha}
        case["situation"]["state_patch"] = patch
        target.write_bytes(sample.rstrip(b"\n") + b"\n" + _jsonl([case]))
        before = _snapshot(root)
        cases = load_dataset(load_project(root), "refunds").cases
        (loaded,) = [c for c in cases if c.id == "p-1"]
        with pytest.raises(CaseworkError, match=r"adds more than 10,000 values") as info:
            initial_state(root, loaded)
        assert info.value.problems[0].field.startswith("situation.state_patch[")  # type: ignore[attr-defined]
        assert _snapshot(root) == before, "a reader wrote into the project"

    try:
        check()
    finally:
        target.write_bytes(sample)
        state.unlink()
        with contextlib.suppress(OSError):
            state.parent.rmdir()


def test_an_operation_name_that_is_not_text_is_no_model_call(root: Path) -> None:
    # Found by the hostile-bytes run: a list as `gen_ai.operation.name` made the content-capture
    # check hash it (TypeError) instead of reading the span as no model call.
    target = root / "traces" / "otel-logs.json"
    text = target.read_text(encoding="utf-8")
    data = json.loads(text)
    changed = 0
    for resource in data["resourceLogs"]:
        for scope in resource["scopeLogs"]:
            for record in scope["logRecords"]:
                for attribute in record.get("attributes", []):
                    if attribute["key"] == "gen_ai.operation.name":
                        attribute["value"] = []
                        changed += 1
    assert changed, "the sample names an operation"
    target.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CaseworkError, match="no conversation read from this file"):
        _traces("otel-logs.json", None)(root)
