"""The `invented` check's edges: what the user may say without having been given it."""

from __future__ import annotations

from datetime import UTC, datetime

from casework.grading import Verdict
from casework.runner.records import TrialRecord
from casework.runner.sim_audit import identifiers, simulator_findings
from casework.runner.user_sim import UserSimRecord
from casework.schema import Case, Message, Trajectory
from tests.factories import case_dict

SCENARIO = {
    "goal": "Change the May 27 trip and add a bag.",
    "known_info": "Your user id is sofia_kim_7287.",
    "unknown_info": "You do not remember your reservation id.",
    "instructions": "Pay with the gift card if it costs less than $100.",
}


def _case() -> Case:
    data = case_dict("c-1")
    data["situation"]["user_scenario"] = SCENARIO
    return Case.model_validate(data)


def _trial(*messages: tuple[str, str]) -> TrialRecord:
    said = [Message(role=role, content=text) for role, text in messages]
    return TrialRecord(
        run_id="r",
        case_id="c-1",
        trial=0,
        slice="refunds",
        split="dev",
        source="hand",
        seed=0,
        started_at=datetime.now(UTC),
        duration_s=0.0,
        verdict=Verdict(passed=False, checks=[]),
        trajectory=Trajectory(messages=said, final_reply=said[-1].content),
        user_sim=UserSimRecord(seed=0, model="m", user_turns=1, stop="user_stop"),
    )


def _checks(*messages: tuple[str, str]) -> dict[str, str]:
    return {f.check: f.message for f in simulator_findings(_case(), _trial(*messages))}


def test_tau2_ids_are_identifiers_and_control_tokens_are_not_said() -> None:
    text = "sofia_kim_7287 OBUT9V HAT078 gift_card_6276644 SFO FL-202 2024-05-27 A1 ###STOP###"
    assert identifiers(text) == {
        "sofia_kim_7287",
        "OBUT9V",
        "HAT078",
        "gift_card_6276644",
        "SFO",
        "FL-202",
        "2024-05-27",
        "STOP",
    }
    assert _checks(("user", "It is sofia_kim_7287. ###STOP###"), ("assistant", "Done.")) == {}


def test_an_id_said_before_the_conversation_gave_it_is_invented() -> None:
    found = _checks(("user", "My reservation is OBUT9V."), ("assistant", "Thanks."))
    assert found == {
        "invented": "the user said OBUT9V, which neither its scenario nor the conversation gave it"
    }


def test_an_id_the_agent_said_first_may_be_repeated() -> None:
    assert (
        _checks(
            ("user", "I want to add a bag."),
            ("assistant", "Your reservation is OBUT9V."),
            ("user", "Yes, OBUT9V, the one on 2024-05-27, for 2 bags and up to 150 dollars."),
            ("assistant", "Done."),
        )
        == {}
    )


def test_words_and_dates_are_not_codes_the_user_must_be_given() -> None:
    # A hyphenated word, a date and an amount are a person's own; ids carry a digit.
    said = ("user", "A follow-up: the check-in on 2024-05-28 for 120 dollars, please.")
    assert _checks(said, ("assistant", "Done.")) == {}


def test_another_user_id_is_reported_once_as_a_contradiction() -> None:
    found = _checks(("user", "It is sofia_kim_7288."), ("assistant", "Done."))
    assert found == {"contradicted_known": "the user said sofia_kim_7288, not in known_info"}
