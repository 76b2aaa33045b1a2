"""Simulated users: the runner plays a case's ``user_scenario`` against the agent, turn by turn.

The simulator is an LLM (``[models.user]``; the scripted offline client in tests and the demo).
Its prompt is built from the scenario and the conversation's user and assistant text only —
never the label, oracle, golden actions, ``satisfiable``, fixtures, state or tool results — so it
cannot steer the agent toward the answer key. It ends the conversation by writing
:data:`casework.schema.STOP_TOKEN` (a token, not a tool: any chat model can write it, the
scripted client can reply it, and τ²-bench's simulators use the same ``###STOP###``), or the
runner ends it at ``max_turns`` user turns, when the agent hands off, or when the agent fails.
Entry points: :class:`UserSimulator`, :func:`converse`, :func:`user_seed`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from casework.grading.graders import ESCALATION_TOOL
from casework.llm import LLMClient
from casework.llm import Message as ChatMessage
from casework.runner.adapters import Agent
from casework.runner.fixtures import ToolSession, clone
from casework.schema import (
    STOP_TOKEN,
    AgentInput,
    Message,
    ToolCall,
    Trajectory,
    TrajectoryToolCall,
    Turn,
    Usage,
    UserScenario,
)

__all__ = ["StopReason", "UserSimRecord", "UserSimulator", "converse", "user_seed"]

StopReason = Literal["user_stop", "max_turns", "agent_handoff", "agent_error"]
"""Why a simulated conversation ended: the user wrote the stop token, the user-turn limit was
reached, the agent handed off (handoff flag or an escalation tool), or the agent failed."""

_SYSTEM = (
    "You play a customer writing to a customer-service assistant, to test the assistant. "
    "Stay in character: write only the customer's next message, short and natural, in the "
    "first person. Give what you know when asked; never invent what you do not know, say you "
    "do not know it. Do not help the assistant beyond what a real customer would. When your "
    f"goal is met, or the assistant cannot help further, end with {STOP_TOKEN} on its own."
)

#: Version of the simulator's prompt (a digest of its fixed text), recorded per trial.
SIM_PROMPT_VERSION = "u-" + hashlib.sha256(_SYSTEM.encode()).hexdigest()[:12]

_OPEN = "(The conversation starts: write your first message to the assistant.)"

#: A line of the simulator's message that uses one of the user's own tools (τ²'s telecom phone).
TOOL_LINE = re.compile(r"^TOOL:[ \t]*([A-Za-z_]\w*)[ \t]*(\{.*\})?[ \t]*$", re.MULTILINE)
#: Most tool calls the simulated user makes before one message to the assistant.
MAX_USER_CALLS = 10


def _tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        "Your own device has these tools. To use one, write only lines of the form "
        '`TOOL: name {"argument": value}`; you read each result before you write to the '
        "assistant again. Report what they show; never invent a result."
    ]
    for tool in tools:
        params = sorted((tool.get("parameters") or {}).get("properties") or {})
        lines.append(f"- {tool['name']}({', '.join(params)}): {tool.get('description', '')}")
    return "\n".join(lines)


def tool_lines(text: str) -> list[tuple[str, dict[str, Any] | None]]:
    """The tool calls a simulator's message asks for, as ``(name, arguments)``.

    The arguments are ``None`` when they are not a JSON object.
    """
    out: list[tuple[str, dict[str, Any] | None]] = []
    for name, raw in TOOL_LINE.findall(text):
        try:
            args = json.loads(raw) if raw else {}
        except ValueError:
            args = None
        out.append((name, args if isinstance(args, dict) else None))
    return out


class UserSimRecord(BaseModel):
    """What the simulated user did in one trial (kept on the trial record)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    seed: int
    """Seed the simulator's requests carried (differs across trials, repeats with `--seed`)."""
    model: str
    """Model that played the user."""
    prompt_version: str = SIM_PROMPT_VERSION
    """Version of the simulator's fixed prompt text."""
    user_turns: int
    """User messages the simulator wrote (the conversation is in the trajectory's messages)."""
    stop: StopReason
    """Why the conversation ended."""


def user_seed(run_seed: int, case_id: str, trial: int) -> int:
    """Seed of the simulated user of one trial: stable for a run, independent of the agent's."""
    digest = hashlib.sha256(f"user\0{run_seed}\0{case_id}\0{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def _scenario_text(scenario: UserScenario) -> str:
    parts = [("Your goal", scenario.goal)]
    parts += [
        ("Who you are", scenario.persona),
        ("What you know", scenario.known_info),
        ("What you do not know", scenario.unknown_info),
        ("Instructions", scenario.instructions),
    ]
    return "\n".join(f"{name}: {text.strip()}" for name, text in parts if text.strip())


@dataclass(frozen=True)
class UserSimulator:
    """Writes the simulated user's next message with an LLM client.

    Args:
        client: The chat client (``client_for(project, "user")``, or a scripted one).
    """

    client: LLMClient

    def prompt(
        self,
        scenario: UserScenario,
        turns: Sequence[Turn],
        tools: Sequence[Mapping[str, Any]] = (),
        used: Sequence[tuple[str, str]] = (),
    ) -> list[ChatMessage]:
        """The simulator's messages: the scenario, then the conversation from the user's side.

        The assistant's text goes as ``user`` messages, the customer's own as ``assistant``.

        Only user and assistant text is used: system notes, the agent's tool calls and results
        are left out. A user with tools of their own (``tools``) reads how to use them, and the
        calls made for the message being written (``used``: the line, its result) follow.
        """
        system = f"{_SYSTEM}\n\n{_scenario_text(scenario)}"
        if tools:
            system += "\n\n" + _tools_text(tools)
        messages = [ChatMessage("system", system)]
        for turn in turns:
            if turn.role == "assistant" and turn.content.strip():
                messages.append(ChatMessage("user", turn.content))
            elif turn.role == "user":
                messages.append(ChatMessage("assistant", turn.content))
        if len(messages) == 1 or messages[-1].role == "assistant":
            messages.append(ChatMessage("user", _OPEN if len(messages) == 1 else "(no reply)"))
        for line, result in used:
            messages += [ChatMessage("assistant", line), ChatMessage("user", f"(result) {result}")]
        return messages

    def next_message(
        self,
        scenario: UserScenario,
        turns: Sequence[Turn],
        seed: int,
        tools: Sequence[Mapping[str, Any]] = (),
        used: Sequence[tuple[str, str]] = (),
    ) -> str:
        """The user's next message (may hold the stop token, or tool lines when it has tools).

        Raises:
            LLMError: The model failed.
        """
        return self.client.complete(self.prompt(scenario, turns, tools, used), seed=seed).text


@dataclass
class _Conversation:
    """The growing conversation of one simulated trial and what the agent's calls added."""

    turns: list[Turn]
    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    last: Trajectory = field(default_factory=Trajectory)
    handoff: bool = False
    user_turns: int = 0

    def add_usage(self, usage: Usage) -> None:
        self.usage = Usage(
            input_tokens=self.usage.input_tokens + usage.input_tokens,
            output_tokens=self.usage.output_tokens + usage.output_tokens,
            cost_usd=self.usage.cost_usd + usage.cost_usd,
        )


def _as_turn_calls(calls: Sequence[TrajectoryToolCall]) -> list[ToolCall]:
    return [
        ToolCall(name=c.name, arguments=clone(c.arguments), result=clone(c.result), error=c.error)
        for c in calls
    ]


def _user_says(conv: _Conversation, text: str, calls: Sequence[TrajectoryToolCall] = ()) -> bool:
    """Record the simulator's message and its own tool calls; False when it holds the stop token."""
    conv.user_turns += 1
    stopped = STOP_TOKEN in text
    text = text.replace(STOP_TOKEN, "")
    text = (TOOL_LINE.sub("", text) if calls else text).strip()
    if calls:
        # The user's own calls ride on their message; the agent never reads them (τ²'s too).
        conv.messages.append(Message(role="user", content=text, tool_calls=list(calls)))
    elif text:
        conv.messages.append(Message(role="user", content=text))
    if text and not stopped:
        conv.turns.append(Turn(role="user", content=text))
    return not stopped


async def _user_turn(
    simulator: UserSimulator,
    scenario: UserScenario,
    conv: _Conversation,
    session: ToolSession,
    seed: int,
) -> tuple[str, list[TrajectoryToolCall]]:
    """The simulator's next message, after the calls of its own tools it asks for first."""
    tools = session.user_tools()
    used: list[tuple[str, str]] = []
    calls: list[TrajectoryToolCall] = []
    while True:
        text = await asyncio.to_thread(
            simulator.next_message, scenario, conv.turns, seed, tools, used
        )
        asked = tool_lines(text) if tools else []
        if not asked or len(calls) >= MAX_USER_CALLS:
            return text, calls
        for name, args in asked[: MAX_USER_CALLS - len(calls)]:
            if args is None:
                call = TrajectoryToolCall(name=name, error="arguments must be a JSON object")
            else:
                call = await asyncio.to_thread(session.user_call, name, args)
            calls.append(call)
            shown = call.error if call.error is not None else json.dumps(call.result)
            used.append((f"TOOL: {name} {json.dumps(args or {})}", shown))
        if STOP_TOKEN in text or TOOL_LINE.sub("", text).strip():
            return text, calls  # it said something besides the calls: that is its message


async def _agent_turn(
    agent: Agent, request: AgentInput, session: ToolSession, conv: _Conversation
) -> StopReason | None:
    before = len(session.snapshot()[0])
    traj = await agent.run(request.model_copy(update={"turns": list(conv.turns)}), session)
    conv.last = traj
    conv.add_usage(traj.usage)
    if traj.error:
        return "agent_error"
    made = session.snapshot()[0][before:]
    reply = traj.reply()
    conv.messages.extend(traj.messages or [Message(role="assistant", content=reply)])
    conv.turns.append(Turn(role="assistant", content=reply, tool_calls=_as_turn_calls(made)))
    escalated = any(ESCALATION_TOOL.search(c.name) and c.error is None for c in made)
    if traj.handoff or escalated:
        conv.handoff = conv.handoff or traj.handoff
        return "agent_handoff"
    return None


async def converse(
    agent: Agent,
    request: AgentInput,
    session: ToolSession,
    scenario: UserScenario,
    simulator: UserSimulator,
    seed: int,
) -> tuple[Trajectory, UserSimRecord]:
    """Run one simulated conversation and return its trajectory and the simulator's record.

    The user opens (unless the prefix ends with a user turn), then agent and user take turns
    until a stop (see :data:`StopReason`).

    Every agent call shares the trial's tool session, so calls and state carry across turns.
    The returned trajectory holds every message after the prefix (simulated user turns as
    ``user`` messages), the agent's last reply and outcome, and usage summed over its calls.
    """
    conv = _Conversation(turns=list(request.turns))
    stop: StopReason | None = None
    if not conv.turns or conv.turns[-1].role != "user":
        text, calls = await _user_turn(simulator, scenario, conv, session, seed)
        if not _user_says(conv, text, calls):
            stop = "user_stop"
    while stop is None:
        stop = await _agent_turn(agent, request, session, conv)
        if stop is not None:
            break
        if conv.user_turns >= scenario.max_turns:
            stop = "max_turns"
            break
        text, calls = await _user_turn(simulator, scenario, conv, session, seed)
        if not _user_says(conv, text, calls):
            stop = "user_stop"
    last = conv.last
    trajectory = last.model_copy(
        update={
            "messages": conv.messages,
            "final_reply": last.reply() if stop != "agent_error" else last.final_reply,
            "handoff": conv.handoff,
            "usage": conv.usage,
        }
    )
    record = UserSimRecord(
        seed=seed, model=simulator.client.model, user_turns=conv.user_turns, stop=stop
    )
    return trajectory, record
