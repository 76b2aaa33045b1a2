"""Draft situations: scrubbed, unlabelled, never showing the agent's final answer."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from casework.mining import RawConversation, draft_case
from casework.mining.conversation import RawMessage, RawToolCall
from casework.mining.drafts import DraftOptions, ScrubLeak, retain_until
from casework.privacy import PseudonymKey, Scrubber, builtin_detectors, id_pattern_detectors
from casework.privacy.scrub import SCRUB_VERSION

KEY = PseudonymKey(b"drafts-test-key-0123456789abcdefghij", "test")
SCRUBBER = Scrubber(KEY, [*id_pattern_detectors({"order": r"\bORD-\d{6}\b"}), *builtin_detectors()])
MINED_AT = datetime(2026, 2, 10, 23, 30, tzinfo=UTC)
OPTIONS = DraftOptions("refunds", "dev", MINED_AT, 30)

ORDER = {
    "order_id": "ORD-104233",
    "customer": {"name": "Ada Fakename", "email": "ada@fake-mail.org"},
    "total": 39.0,
}
CONV = RawConversation(
    session_id="prod-session-42",
    trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
    origin="t.jsonl:1",
    metadata={"customer": {"account_id": "ACC-77881"}},
    messages=(
        RawMessage("system", "You are a refunds agent."),
        RawMessage("user", "Hi, Ada here. My kettle from ORD-104233 is broken."),
        RawMessage("assistant", "", (RawToolCall("get_order", {"order_id": "ORD-104233"}, "c1"),)),
        RawMessage("tool", ORDER, tool_call_id="c1"),
        RawMessage("assistant", "Sorry Ada! Do you want a refund or a replacement?"),
        RawMessage("user", "A refund to my account ACC-77881 please."),
        RawMessage(
            "assistant",
            "",
            (
                RawToolCall(
                    "issue_refund", {"order_id": "ORD-104233", "amount": 39.0}, "c2", {"ok": True}
                ),
            ),
        ),
        RawMessage("assistant", "FINAL: refunded 39.00 to Ada Fakename."),
    ),
)


def test_draft_is_an_unlabelled_mined_case_ending_at_the_last_user_turn() -> None:
    case = draft_case(CONV, SCRUBBER, OPTIONS, ["thumbs_down"])
    assert case is not None
    assert case.label is None and case.oracle.class_ == "human"
    assert (case.source, case.split, case.slice, case.satisfiable) == (
        "mined",
        "dev",
        "refunds",
        True,
    )
    roles = [t.role for t in case.situation.turns]
    assert roles == ["user", "assistant", "assistant", "user"]  # no system prompt, no final answer
    assert "FINAL" not in case.model_dump_json()
    assert case.situation.turns[1].tool_calls[0].result["total"] == 39.0
    assert [f.tool for f in case.situation.fixtures] == ["get_order", "issue_refund"]


def test_pseudonyms_are_coherent_across_turns_fixtures_and_metadata() -> None:
    case = draft_case(CONV, SCRUBBER, OPTIONS, [])
    assert case is not None
    order = SCRUBBER.pseudonym("order", "ORD-104233")
    account = SCRUBBER.pseudonym("account", "ACC-77881")
    first = SCRUBBER.pseudonym("name", "Ada")
    turns = case.situation.turns
    assert turns[0].content == f"Hi, {first} here. My kettle from {order} is broken."
    assert turns[1].tool_calls[0].arguments == {"order_id": order}
    assert case.situation.fixtures[0].match == {"order_id": order}
    assert case.situation.fixtures[0].response["customer"]["name"] == SCRUBBER.pseudonym(
        "name", "Ada Fakename"
    )
    assert turns[2].content == f"Sorry {first}! Do you want a refund or a replacement?"
    assert turns[3].content == f"A refund to my account {account} please."
    assert case.situation.goal == f"Hi, {first} here."
    subjects = case.provenance.subjects
    assert {order, account, first, SCRUBBER.pseudonym("email", "ada@fake-mail.org")} <= set(
        subjects
    )
    assert subjects == sorted(subjects)


def test_provenance_records_session_retention_and_scrub_not_the_key() -> None:
    case = draft_case(CONV, SCRUBBER, OPTIONS, ["retry"])
    assert case is not None
    prov = case.provenance
    assert prov.source_session == SCRUBBER.pseudonym("session", "prod-session-42")
    assert case.id == "mined-" + prov.source_session.split("_")[1]
    assert prov.source_trace == SCRUBBER.pseudonym("trace", "4bf92f3577b34da6a3ce929d0e0e4736")
    assert prov.source_session not in prov.subjects
    assert prov.mined_at == MINED_AT
    assert prov.retain_until == date(2026, 3, 12)
    assert prov.scrub is not None
    assert (prov.scrub.version, prov.scrub.key_fingerprint) == (SCRUB_VERSION, KEY.fingerprint)
    assert prov.signals == ["retry"]
    assert KEY.secret.decode() not in case.model_dump_json()


def test_retain_until_is_mined_at_plus_retention_days_in_utc() -> None:
    assert retain_until(datetime(2026, 12, 31, 23, 59, tzinfo=UTC), 1) == date(2027, 1, 1)
    paris_1am = datetime(
        2026, 1, 1, 1, 0, tzinfo=timezone(timedelta(hours=2))
    )  # 23:00 UTC the day before
    assert retain_until(paris_1am, 1) == date(2026, 1, 1)


def test_no_user_turn_no_draft() -> None:
    conv = RawConversation("s", (RawMessage("assistant", "hello?"),), "t:1")
    assert draft_case(conv, SCRUBBER, OPTIONS, []) is None


def test_a_known_value_left_in_place_stops_the_draft() -> None:
    # tool names are never scrubbed: a customer value used as a tool name would survive
    conv = RawConversation(
        "s",
        (RawMessage("user", "hi"), RawMessage("assistant", "", (RawToolCall("ACC-77881", {}),))),
        "t.jsonl:9",
        metadata={"account_id": "ACC-77881"},
    )
    conv = RawConversation(
        "s", (*conv.messages, RawMessage("user", "well?")), "t.jsonl:9", metadata=conv.metadata
    )
    with pytest.raises(ScrubLeak) as exc:
        draft_case(conv, SCRUBBER, OPTIONS, [])
    assert str(exc.value) == (
        "t.jsonl:9: a known account value survived scrubbing; nothing was written "
        "(please report this with the trace's shape, not its content)."
    )
    assert "ACC-77881" not in str(exc.value)
