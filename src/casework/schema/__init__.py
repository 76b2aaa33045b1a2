"""The file formats and the agent wire format, as versioned pydantic models.

Every record carries ``schema_version``; unknown fields are errors; the docstring under each field
is its reference documentation (``casework schema`` prints the JSON Schema built from them).

- case files (``_records``): :class:`Case`, :class:`LabelRecord`, :class:`VersionRecord`,
  :func:`case_json_schema`;
- the leakage review file (``_leakage``): :class:`LeakageFlagRecord`;
- what an agent receives and returns (``_wire``): :class:`AgentInput`, :class:`Trajectory`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import attach

if TYPE_CHECKING:
    from casework.schema._base import (
        OUTCOMES,
        SCHEMA_VERSION,
        SPLITS,
        OracleClass,
        Outcome,
        Source,
        Split,
        UnsatisfiableKind,
    )
    from casework.schema._leakage import LeakageDecision, LeakageFlagRecord, LeakageStatus
    from casework.schema._records import (
        STOP_TOKEN,
        AnswerFact,
        ArgMatcher,
        Case,
        FactMatch,
        Generator,
        GoldenAction,
        Injection,
        JsonPatchOp,
        Label,
        LabelRecord,
        Oracle,
        Provenance,
        ScrubInfo,
        Situation,
        StateAssertion,
        StateRef,
        ToolCall,
        ToolFixture,
        ToolRequirement,
        Turn,
        UserScenario,
        case_json_schema,
    )
    from casework.schema._version import VersionCounts, VersionRecord
    from casework.schema._wire import (
        TRAJECTORY_SCHEMA_VERSION,
        AgentInput,
        AgentTool,
        Message,
        Trajectory,
        TrajectoryToolCall,
        Usage,
    )

__all__ = [
    "OUTCOMES",
    "SCHEMA_VERSION",
    "SPLITS",
    "STOP_TOKEN",
    "TRAJECTORY_SCHEMA_VERSION",
    "AgentInput",
    "AgentTool",
    "AnswerFact",
    "ArgMatcher",
    "Case",
    "FactMatch",
    "Generator",
    "GoldenAction",
    "Injection",
    "JsonPatchOp",
    "Label",
    "LabelRecord",
    "LeakageDecision",
    "LeakageFlagRecord",
    "LeakageStatus",
    "Message",
    "Oracle",
    "OracleClass",
    "Outcome",
    "Provenance",
    "ScrubInfo",
    "Situation",
    "Source",
    "Split",
    "StateAssertion",
    "StateRef",
    "ToolCall",
    "ToolFixture",
    "ToolRequirement",
    "Trajectory",
    "TrajectoryToolCall",
    "Turn",
    "UnsatisfiableKind",
    "Usage",
    "UserScenario",
    "VersionCounts",
    "VersionRecord",
    "case_json_schema",
]

if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {
            "casework.schema._leakage": (
                "LeakageDecision",
                "LeakageFlagRecord",
                "LeakageStatus",
            ),
            "casework.schema._base": (
                "OUTCOMES",
                "SCHEMA_VERSION",
                "SPLITS",
                "OracleClass",
                "Outcome",
                "Source",
                "Split",
                "UnsatisfiableKind",
            ),
            "casework.schema._records": (
                "STOP_TOKEN",
                "AnswerFact",
                "ArgMatcher",
                "Case",
                "FactMatch",
                "Generator",
                "GoldenAction",
                "Injection",
                "JsonPatchOp",
                "Label",
                "LabelRecord",
                "Oracle",
                "Provenance",
                "ScrubInfo",
                "Situation",
                "StateAssertion",
                "StateRef",
                "ToolCall",
                "ToolFixture",
                "ToolRequirement",
                "Turn",
                "UserScenario",
                "case_json_schema",
            ),
            "casework.schema._version": (
                "VersionCounts",
                "VersionRecord",
            ),
            "casework.schema._wire": (
                "TRAJECTORY_SCHEMA_VERSION",
                "AgentInput",
                "AgentTool",
                "Message",
                "Trajectory",
                "TrajectoryToolCall",
                "Usage",
            ),
        },
    )
