"""`casework mine`, `forget` and `expire` through the CLI."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from casework.erasure._everywhere import OUT_OF_REACH
from casework.privacy import PseudonymKey

TRACES = Path(__file__).resolve().parents[2] / "examples" / "refunds" / "traces"
KEY = "e2e-mining-key-not-secret-0123456789ab"
CONFIG = """name = "e2e"
[privacy.id_patterns]
order = '\\bORD-\\d{6}\\b'
customer = '\\bCUS-\\d{5}\\b'
"""


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "casework.toml").write_text(CONFIG, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
    return folder


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--project", str(root), *args], catch_exceptions=False)


def test_mine_forget_expire(root: Path) -> None:
    result = run(root, "mine", str(TRACES), "--dataset", "refunds", "--slice", "refunds")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "read 8 conversation(s) from 2 file(s) (1 jsonl, 1 otel)",
        "failure signals: thumbs_down 3, escalated 2, retry 1, retry_storm 1, abandoned 3, tool_error 2",
        f"drafted 8 case(s), scrubbed with key {PseudonymKey(KEY.encode(), 'env').fingerprint}",
    ]
    assert lines[3].startswith("refunds@1 released: ") and lines[3].endswith(" (8 cases)")
    assert len(lines) == 4
    cases = (root / "datasets" / "refunds" / "cases.jsonl").read_text(encoding="utf-8")
    assert "ada.fakename@example.com" not in cases and "Ada" not in cases

    forgot = run(root, "dataset", "forget", "--email", "ada.fakename@example.com")
    assert forgot.exit_code == 0
    lines = forgot.stdout.splitlines()
    assert lines[0].startswith("refunds: removed 2 row(s), 6 left; released refunds@2 (")
    assert "Git history still holds the removed rows" in forgot.stdout
    assert "git filter-repo --replace-text" in forgot.stdout
    # a word, not a substring: release hashes are hex and may hold "ada"
    assert re.search(r"\bada\b", forgot.stdout, re.IGNORECASE) is None
    assert "fakename" not in forgot.stdout

    ahead = run(root, "dataset", "expire", "--as-of", "2099-01-01", "--dry-run")
    assert ahead.stdout.splitlines() == [
        "refunds: would remove 6 row(s) (6 past their retention date), 0 left",
        "held none: leakage flags, run logs, reports, shape sets, judge tuning keys, "
        "exported copies",
        "casework cannot reach these copies: delete or redact them yourself",
        *(f"  {what}" for what in OUT_OF_REACH),
    ]
    now = run(root, "dataset", "expire")
    assert now.stdout.splitlines() == ["refunds: removed 0 row(s), 6 left"]
    expired = run(root, "dataset", "expire", "--as-of", "2099-01-01", "--format", "json")
    data = json.loads(expired.stdout)
    assert data["datasets"][0]["removed"] == 6 and data["datasets"][0]["version"]["number"] == 3
    assert data["history_recipe"].startswith("Git history still holds the removed rows")


def test_mine_json_output(root: Path) -> None:
    result = run(
        root,
        "mine",
        str(TRACES / "conversations.jsonl"),
        "--dataset",
        "d",
        "--failing-only",
        "--format",
        "json",
    )
    data = json.loads(result.stdout)
    assert (data["conversations"], len(data["drafted"]), data["not_failing"]) == (6, 4, 2)
    assert data["version"]["number"] == 1 and data["key_fingerprint"].startswith("sha256:")


def test_no_key(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASEWORK_PSEUDONYM_KEY")
    result = run(root, "mine", str(TRACES), "--dataset", "refunds")
    assert result.exit_code == 1
    assert result.stderr == (
        "casework.toml: privacy.key_file: no pseudonym key: set CASEWORK_PSEUDONYM_KEY or "
        "privacy.key_file (a file of at least 32 random bytes); generate one with "
        '`python -c "import secrets; print(secrets.token_hex(32))"` and keep it outside the '
        "repository.\n"
    )
    assert not (root / "datasets").exists()


def test_short_key(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", "too-short")
    result = run(root, "dataset", "forget", "--email", "a@b.c")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "CASEWORK_PSEUDONYM_KEY: the pseudonym key is too short (9 bytes; at least 32 are needed)"
    )


OTHER_KEY = "a-second-key-for-the-same-project-9876543210"


def test_forget_under_another_key_refuses_naming_both_fingerprints(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(root, "mine", str(TRACES), "--dataset", "refunds").exit_code == 0
    before = (root / "datasets" / "refunds" / "versions.jsonl").read_bytes()
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", OTHER_KEY)
    result = run(root, "dataset", "forget", "--email", "ada.fakename@example.com")
    assert result.exit_code == 1
    mined = PseudonymKey(KEY.encode(), "env").fingerprint
    current = PseudonymKey(OTHER_KEY.encode(), "env").fingerprint
    assert result.stderr == (
        f"dataset 'refunds': rows were mined with pseudonym key {mined} (8 row(s)), but the key "
        f"from CASEWORK_PSEUDONYM_KEY has fingerprint {current}: the pseudonyms of the identifiers "
        "cannot match those rows, so nothing of that customer would be removed. Use the key the "
        "rows were mined with.\n"
    )
    assert "removed 0 row(s)" not in result.output
    assert (root / "datasets" / "refunds" / "versions.jsonl").read_bytes() == before


def test_mine_under_another_key_refuses(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(root, "mine", str(TRACES), "--dataset", "refunds").exit_code == 0
    before = (root / "datasets" / "refunds" / "cases.jsonl").read_bytes()
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", OTHER_KEY)
    result = run(root, "mine", str(TRACES), "--dataset", "refunds")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "dataset 'refunds': rows were mined with pseudonym key "
        f"{PseudonymKey(KEY.encode(), 'env').fingerprint} (8 row(s)), but the key from "
        f"CASEWORK_PSEUDONYM_KEY has fingerprint {PseudonymKey(OTHER_KEY.encode(), 'env').fingerprint}: "
        "drafts mined under it would not match those rows"
    )
    assert (root / "datasets" / "refunds" / "cases.jsonl").read_bytes() == before
    # a new dataset under the second key is fine: nothing there to mismatch
    assert run(root, "mine", str(TRACES), "--dataset", "other").exit_code == 0


def test_low_entropy_key(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", "k" * 32)
    result = run(root, "mine", str(TRACES), "--dataset", "refunds")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "CASEWORK_PSEUDONYM_KEY: the pseudonym key has too little entropy (it repeats a 1-byte "
        "block): a guessable key lets anyone recompute pseudonyms from identifiers;"
    )
    assert "k" * 32 not in result.stderr
    assert not (root / "datasets").exists()


def test_usage_errors_exit_2(root: Path) -> None:
    bad_map = run(
        root, "mine", str(TRACES / "conversations.jsonl"), "--dataset", "d", "--map", "nonsense"
    )
    assert bad_map.exit_code == 2
    assert (
        bad_map.stderr == "--map: 'nonsense': expected DST=SRC.PATH (e.g. session_id=meta.sid).\n"
    )
    nothing = run(root, "dataset", "forget")
    assert nothing.exit_code == 2
    assert nothing.stderr == "forget: name at least one --email, --account or --session.\n"
    bad_format = run(root, "mine", str(TRACES), "--dataset", "d", "--trace-format", "csv")
    assert bad_format.exit_code == 2
    assert "'csv' is not one of 'jsonl', 'otel', 'openinference'" in bad_format.stderr
    # --format is the output format, as in every other command; trace formats have their option.
    trace_as_output = run(root, "mine", str(TRACES), "--dataset", "d", "--format", "otel")
    assert trace_as_output.exit_code == 2
    assert "'otel' is not one of 'text', 'json'" in trace_as_output.stderr


def test_bad_traces_exit_1_with_every_line(root: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"session_id": "a"}\n{"session_id": "b", "messages": [{"role": "nobody"}]}\n',
        encoding="utf-8",
    )
    result = run(root, "mine", str(bad), "--dataset", "d")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"{bad}:1: messages: field required (the list of messages).",
        f"{bad}:2: messages.0.role: role must be user, assistant, system or tool (or human, customer, ai, "
        "bot, agent, model, developer, function). Got 'nobody'.",
    ]
    assert not (root / "datasets").exists()


def _one_span(key: str, value: str) -> str:
    span = {
        "traceId": "4bf92f3577b34da6a3ce929d0e0e4736",
        "spanId": "00f067aa0ba902b7",
        "name": "chat",
        "attributes": [
            {"key": key, "value": {"stringValue": value}},
            {"key": "llm.input_messages.0.message.role", "value": {"stringValue": "user"}},
            {"key": "llm.input_messages.0.message.content", "value": {"stringValue": "hi"}},
        ],
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})


@pytest.mark.parametrize(
    ("fmt", "content"),
    [
        # OpenInference spans read as GenAI spans, and GenAI spans as OpenInference ones.
        ("otel", _one_span("openinference.span.kind", "LLM")),
        ("openinference", _one_span("gen_ai.operation.name", "chat")),
    ],
)
def test_a_format_that_reads_no_conversation_says_so(
    root: Path, tmp_path: Path, fmt: str, content: str
) -> None:
    traces = tmp_path / "t.json"
    traces.write_text(content, encoding="utf-8")
    result = run(root, "mine", str(traces), "--dataset", "d", "--trace-format", fmt)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"{traces}: no conversation read from this file as format '{fmt}'; check the trace "
        "format (or let it be detected)."
    ]
    assert not (root / "datasets").exists()


def test_an_empty_trace_file_is_not_an_error(root: Path, tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    traces.write_text("\n", encoding="utf-8")
    result = run(root, "mine", str(traces), "--dataset", "d", "--trace-format", "jsonl")
    assert result.exit_code == 0, result.output


def test_mine_never_prints_the_customer_data_of_a_malformed_trace(
    root: Path, tmp_path: Path
) -> None:
    email, phone = "dana.customer@example.org", "+1 (429) 623-5934"
    said = f"I'm {email}, call {phone}"
    lines = [
        json.dumps({"session_id": "s1", "messages": [{"role": "user", "content": said}]})[:-3],
        json.dumps({"session_id": "s2", "messages": said}),
        json.dumps({"session_id": "s3", "messages": [{"role": email, "content": phone}]}),
        json.dumps(
            {
                "session_id": "s4",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "tool_calls": [{"name": email, "arguments": {}}]},
                    {"role": "user", "content": "and?"},
                ],
            }
        ),
    ]
    traces = tmp_path / "t.jsonl"
    traces.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run(root, "mine", str(traces), "--dataset", "d")
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) >= 3
    for secret in (email, "dana.customer", "4296235934", "623-5934"):
        assert secret not in result.stderr
        assert secret not in result.stdout
    # A record that reads but cannot make a case fails at drafting: quoted scrubbed too.
    traces.write_text(lines[3] + "\n", encoding="utf-8")
    drafted = run(root, "mine", str(traces), "--dataset", "d")
    assert drafted.exit_code == 1
    assert "name: must be a tool name" in drafted.stderr
    assert email not in drafted.stderr and "dana.customer" not in drafted.stderr
