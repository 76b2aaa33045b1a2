"""`casework synth` and `casework llm` end to end: scripted offline, and over HTTP to a stub server."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from casework.dataset import load_dataset, release
from casework.project import load_project
from casework.schema import Case
from tests.factories import TOOLS
from tests.llm.stub_server import StubServer, chat_reply, error_reply, running_stub
from tests.synth.conftest import seed_case


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with running_stub() as server:
        yield server


def make(root: Path, config: str, script: list[dict[str, Any]] | None = None) -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "casework.toml").write_text('name = "t"\n' + config, encoding="utf-8")
    (root / "agent" / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    if script is not None:
        (root / "llm").mkdir()
        (root / "llm" / "responses.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in script), encoding="utf-8"
        )
    release(
        load_project(root),
        "refunds",
        [Case.model_validate(seed_case(n)) for n in range(1, 8)],
        "seeds",
        now=datetime(2026, 1, 1, tzinfo=UTC),
    )
    return root


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--project", str(root), *args], catch_exceptions=False)


SCRIPT = [
    {
        "when": ["Task: paraphrase", f"ORD-{1000 + n}"],
        "reply": {"variants": [[f"Could you sort out a refund on ORD-{1000 + n} for me? ({n})"]]},
    }
    for n in range(1, 8)
]
SCRIPTED = (
    '[models.generator]\nprovider = "scripted"\nscript = "llm/responses.jsonl"\n'
    'family = "scripted"\n'
)


@pytest.fixture(autouse=True)
def _no_db_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)


def test_synth_scripted_prints_variants_labelling_queue_and_usage(tmp_path: Path) -> None:
    root = make(tmp_path / "p", SCRIPTED, SCRIPT)

    result = run(
        root, "synth", "refunds", "-t", "paraphrase", "-t", "drop_identifier", "--slice", "refunds"
    )

    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("refunds: 3 variant(s) added as release 2 (")
    assert "Back to labelling (1): r-01~drop_identifier" in out
    assert (
        "LLM generator (scripted): 2 requests, 0 from cache, tokens not reported by the provider"
        in out
    )
    assert result.stderr == (
        "warning: slice 'refunds' reached the synthetic cap of 30% (thresholds.synthetic_cap): "
        "11 variant(s) not generated\n"
    )
    cases = {c.id: c for c in load_dataset(load_project(root), "refunds").cases}
    assert cases["r-01~paraphrase"].label is not None
    assert cases["r-01~drop_identifier"].label is None
    assert cases["r-02~paraphrase"].situation.turns[0].content == (
        "Could you sort out a refund on ORD-1002 for me? (2)"
    )


def test_synth_json_output(tmp_path: Path) -> None:
    root = make(tmp_path / "p", "[thresholds]\nsynthetic_cap = 1.0\n")

    result = run(
        root, "synth", "refunds", "-t", "injected_tool_text", "--limit", "2", "--format", "json"
    )

    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["version"] == 2
    assert [c["id"] for c in data["created"]] == [
        "r-01~injected_tool_text",
        "r-02~injected_tool_text",
    ]
    assert data["to_labelling"] == ["r-01~injected_tool_text", "r-02~injected_tool_text"]
    assert data["created"][0] == {
        "id": "r-01~injected_tool_text",
        "parent_id": "r-01",
        "transform": "injected_tool_text",
        "slice": "refunds",
        "split": "dev",
        "labelled": False,
    }
    assert data["limited"] == 5
    assert data["usage"] == []


def test_synth_is_reproducible_byte_for_byte(tmp_path: Path) -> None:
    outputs = []
    for name in ("a", "b"):
        root = make(tmp_path / name, SCRIPTED + "[thresholds]\nsynthetic_cap = 1.0\n", SCRIPT)
        result = run(
            root, "synth", "refunds", "-t", "paraphrase", "-t", "typos", "-t", "informal_register"
        )
        assert result.exit_code == 0, result.stderr
        outputs.append((root / "datasets" / "refunds" / "cases.jsonl").read_bytes())
    assert outputs[0] == outputs[1]


def test_synth_bad_input(tmp_path: Path) -> None:
    root = make(tmp_path / "p", "")

    unknown = run(root, "synth", "refunds", "-t", "shuffle")
    assert unknown.exit_code == 2
    assert "Invalid value for '--transform' / '-t': 'shuffle' is not one of" in unknown.stderr

    no_slice = run(root, "synth", "refunds", "-t", "typos", "--slice", "billing")
    assert (no_slice.exit_code, no_slice.stderr) == (
        2,
        "--slice: dataset 'refunds' has no slice 'billing' (slices: refunds).\n",
    )

    no_script = run(root, "synth", "refunds", "-t", "paraphrase")
    assert (no_script.exit_code, no_script.stderr) == (
        1,
        "casework.toml: models.generator.script: the scripted provider needs a responses file "
        '(script = "llm/responses.jsonl") or a function (script = "python:pkg.mod:fn").\n',
    )
    before = (root / "datasets" / "refunds" / "versions.jsonl").read_bytes()
    assert (root / "datasets" / "refunds" / "versions.jsonl").read_bytes() == before


def test_unmatched_scripted_prompt_fails_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make(tmp_path / "p", SCRIPTED, SCRIPT[:1])
    monkeypatch.chdir(root)
    before = (root / "datasets" / "refunds" / "cases.jsonl").read_bytes()

    result = run(root, "synth", "refunds", "-t", "paraphrase")

    assert result.exit_code == 1
    assert result.stderr == (
        "llm/responses.jsonl: no scripted rule matches the prompt; add a line whose 'when' text "
        "the prompt contains. Got '[\"Hi, I was charged twice for order ORD-1002. Thank you for "
        "looking into this ….\n"
    )
    assert (root / "datasets" / "refunds" / "cases.jsonl").read_bytes() == before


def _paraphraser(body: dict[str, Any]) -> Any:
    prompt = body["messages"][-1]["content"]
    texts = json.loads(prompt.split("Customer messages:\n", 1)[1].split("\n", 1)[0])
    order = texts[0].split("ORD-", 1)[1][:4]
    return chat_reply(
        json.dumps({"variants": [[f"Please issue my money back for ORD-{order}, it went wrong."]]})
    )


def test_synth_against_an_openai_compatible_server(tmp_path: Path, stub: StubServer) -> None:
    config = (
        f'[models.generator]\nprovider = "openai"\nmodel = "stub-model"\nbase_url = "{stub.url}"\n'
        'family = "llama"\nmax_retries = 1\n[agent]\nfamily = "llama"\n'
    )
    root = make(tmp_path / "p", config)
    stub.queue(error_reply(429, "slow down", headers={"retry-after": "0"}))
    stub.fallback = _paraphraser

    first = run(root, "synth", "refunds", "-t", "paraphrase", "--limit", "2", "--dry-run")
    assert first.exit_code == 0, first.stderr
    assert first.stdout.startswith(
        "refunds: 2 variant(s) would be added (dry run, nothing written)"
    )
    assert (
        "LLM generator (stub-model): 2 requests, 0 from cache, 1 retry, "
        "20 prompt + 10 completion tokens"
    ) in first.stdout
    assert first.stderr.startswith(
        "warning: the generator model's family 'llama' is the agent's own"
    )
    assert len(stub.requests) == 3  # the 429, then one request per seed

    # The same prompts again are served by the workbench cache: no new requests.
    second = run(root, "synth", "refunds", "-t", "paraphrase", "--limit", "2")
    assert second.exit_code == 0, second.stderr
    assert len(stub.requests) == 3
    assert "LLM generator (stub-model): 2 requests, 2 from cache, 0 prompt + 0 completion" in (
        second.stdout
    )
    variant = load_dataset(load_project(root), "refunds").case("r-01~paraphrase")
    assert variant is not None and variant.provenance.generator is not None
    assert variant.situation.turns[0].content == (
        "Please issue my money back for ORD-1001, it went wrong."
    )
    assert variant.provenance.generator.model_dump() == {
        "model": "stub-model",
        "prompt_version": 1,
        "family": "llama",
    }

    stats = run(root, "llm", "cache", "stats")
    assert stats.stdout == "openai:stub-model: 2 cached replies\n"
    cleared = run(root, "llm", "cache", "clear")
    assert cleared.stdout == "removed 2 cached replies\n"


def test_llm_ping(tmp_path: Path, stub: StubServer) -> None:
    config = f'[models.judge]\nprovider = "openai"\nmodel = "stub-model"\nbase_url = "{stub.url}"\n'
    root = make(tmp_path / "p", config)
    stub.queue(chat_reply("pong", prompt_tokens=9, completion_tokens=1))

    result = run(root, "llm", "ping", "--role", "judge", "--format", "json")

    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["model"], data["endpoint"], data["reply"]) == ("stub-model", stub.url, "pong")
    assert (data["prompt_tokens"], data["completion_tokens"]) == (9, 1)
    assert stub.requests[0]["max_tokens"] == 16


def test_llm_ping_timeout_is_one_clear_line(tmp_path: Path, stub: StubServer) -> None:
    config = (
        f'[models.generator]\nprovider = "openai"\nmodel = "stub-model"\nbase_url = "{stub.url}"\n'
        "timeout_s = 0.2\nmax_retries = 0\n"
    )
    root = make(tmp_path / "p", config)
    stub.fallback = lambda body: _slow()

    result = run(root, "llm", "ping")

    assert result.exit_code == 1
    assert result.stderr == (
        f"models.generator (stub-model at {stub.url}): request timed out after 0.2 s; check that "
        "the server is up and answering, or raise models.generator.timeout_s (1 attempt).\n"
    )


def _slow() -> Any:
    action = chat_reply("late")
    action.delay = 2.0
    return action


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds"


def test_example_scripted_replies_cover_the_first_refunds_seeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (EXAMPLE / "datasets" / "refunds" / "cases.jsonl").exists():
        pytest.skip("the example dataset has not been built")
    root = tmp_path / "refunds"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".casework", "runs"))
    config = (root / "casework.toml").read_text(encoding="utf-8")
    assert 'script = "llm/responses.jsonl"' in config  # the example ships the scripted replies
    config = re.sub(r"(?m)^synthetic_cap = .*$", "synthetic_cap = 0.5", config)
    (root / "casework.toml").write_text(config, encoding="utf-8")
    monkeypatch.chdir(root)

    first = run(root, "synth", "refunds", "-t", "paraphrase", "--slice", "refunds", "--limit", "15")
    second = run(
        root, "synth", "refunds", "-t", "noise_detail", "-t", "multi_intent",
        "--slice", "refunds", "--limit", "16",
    )  # fmt: skip

    assert first.exit_code == 0, first.stderr
    assert "refunds: 15 variant(s) added" in first.stdout
    assert "Not kept (1):\n  refunds-009~paraphrase: frozen case: never sent to a model\n" in (
        first.stdout
    )
    assert second.exit_code == 0, second.stderr
    assert "refunds: 16 variant(s) added" in second.stdout
    assert "Not kept" not in second.stdout
    assert "Back to labelling (8): refunds-001~multi_intent, " in second.stdout
