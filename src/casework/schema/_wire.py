"""What an agent receives and returns, as versioned pydantic records adapters speak as JSON.

:class:`AgentInput` is the situation as the agent may see it; :class:`Trajectory` is what it did.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from casework.schema._records import Outcome, Turn

#: Version of the :class:`AgentInput` and :class:`Trajectory` formats.
TRAJECTORY_SCHEMA_VERSION: Literal[1] = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class AgentTool(_Model):
    """One tool the agent may call through the fixture tool server."""

    name: str
    """Tool name."""
    description: str = ""
    """What the tool does, as declared."""
    parameters: dict[str, Any] = Field(default_factory=dict)
    """JSON Schema of the tool's arguments, as declared."""


class AgentInput(_Model):
    """The request an agent gets for one trial: the situation as the agent may see it.

    It never carries the label, the oracle, ``satisfiable``, slice, split, provenance, the
    situation's goal, fixtures, data state or injection notes: fixtures and state are reachable
    only by calling tools.
    """

    schema_version: Literal[1] = TRAJECTORY_SCHEMA_VERSION
    """Version of this record format."""
    trial_id: str
    """Opaque id of this trial (random; says nothing about the case)."""
    turns: list[Turn]
    """Conversation prefix the agent starts from; the last turn is normally the user's."""
    tools: list[AgentTool] = Field(default_factory=list)
    """Tools the agent may call (the project's declared tools, or the case's own catalogue)."""
    tool_server: str | None = None
    """Base URL of the trial's fixture tool server (`POST {tool_server}/tools/{name}`); set for
    `http:` and `cmd:` agents, ``None`` for in-process Python agents."""
    seed: int = 0
    """Seed for this trial; trials of one case get different seeds, reruns of a run the same."""


class TrajectoryToolCall(_Model):
    """One tool call, as the fixture tool server recorded it."""

    name: str
    """Tool called."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Arguments of the call."""
    result: Any = None
    """What the tool returned (JSON), when it succeeded."""
    error: str | None = None
    """Error the tool returned instead of a result (no fixture, a failed effect, a canned error)."""
    effects_applied: int = 0
    """JSON Patch operations this call applied to the data state."""


class Message(_Model):
    """One message the agent produced (or received) after the conversation prefix."""

    role: Literal["user", "assistant", "tool", "system"]
    """Who speaks."""
    content: str = ""
    """Text of the message."""
    tool_calls: list[TrajectoryToolCall] = Field(default_factory=list)
    """Tool calls the agent reports for this message (informational; grading uses the record)."""


class Usage(_Model):
    """What the trial consumed, as the agent reports it."""

    input_tokens: int = 0
    """Prompt tokens."""
    output_tokens: int = 0
    """Completion tokens."""
    cost_usd: float = 0.0
    """Cost in US dollars."""


class Trajectory(_Model):
    """What an agent did in one trial. Agents return it; the runner completes it.

    Agents fill ``messages``, ``final_reply`` and optionally ``outcome``, ``handoff``, ``usage``
    and ``agent_version``. The runner overwrites ``tool_calls`` and ``final_state`` with what the
    fixture tool server recorded, so grading never trusts an agent's account of its own calls.
    """

    schema_version: Literal[1] = TRAJECTORY_SCHEMA_VERSION
    """Version of this record format."""
    messages: list[Message] = Field(default_factory=list)
    """Messages after the conversation prefix (assistant turns, tool results, simulated users)."""
    final_reply: str = ""
    """The agent's last reply to the user; defaults to the content of the last assistant message."""
    outcome: Outcome | None = None
    """Outcome the agent reports taking (`resolve`, `clarify`, `refuse`, `escalate`), if it does."""
    handoff: bool = False
    """True when the agent handed the conversation to a person."""
    tool_calls: list[TrajectoryToolCall] = Field(default_factory=list)
    """Every tool call of the trial, in order (filled by the runner)."""
    final_state: dict[str, Any] | None = None
    """Data state after the trial (filled by the runner)."""
    state_diff: list[dict[str, Any]] | None = None
    """JSON Patch (RFC 6902) from the initial to the final data state, kept in the run log in
    place of `final_state` for cases run in a tool environment or on a shared `state_ref`
    (filled by the runner; the final state is the initial state with this patch applied)."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens and cost."""
    agent_version: str | None = None
    """Version of the agent that produced this trajectory, if it says."""
    error: str | None = None
    """Why the trial failed to produce a trajectory (agent crash, timeout, bad output)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the agent wants kept with the trial (ignored by grading)."""

    def reply(self) -> str:
        """The final reply: ``final_reply``, else the last assistant message's content."""
        if self.final_reply.strip():
            return self.final_reply
        for message in reversed(self.messages):
            if message.role == "assistant" and message.content.strip():
                return message.content
        return ""
