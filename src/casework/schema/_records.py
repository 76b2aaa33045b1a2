"""The file formats: pydantic models for cases, labels and release records.

Every record carries ``schema_version``; unknown fields are errors; the docstring under each field
is its reference documentation (``casework schema`` prints the JSON Schema built from them).
Entry points: :class:`Case`, :class:`LabelRecord`, :class:`VersionRecord`, :func:`case_json_schema`.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    AfterValidator,
    AwareDatetime,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from casework._docs import document_fields
from casework.names import LabellerId, Name, case_id_problem
from casework.schema._base import (
    OUTCOMES,
    SCHEMA_VERSION,
    SPLITS,
    OracleClass,
    Outcome,
    Source,
    Split,
    UnsatisfiableKind,
    _Record,
)
from casework.schema._version import VersionCounts, VersionRecord

__all__ = [
    "OUTCOMES",
    "SCHEMA_VERSION",
    "SPLITS",
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
    "OracleClass",
    "Outcome",
    "Provenance",
    "ScrubInfo",
    "Situation",
    "Source",
    "Split",
    "StateAssertion",
    "StateRef",
    "Tau2Scoring",
    "ToolCall",
    "ToolFixture",
    "ToolRequirement",
    "Turn",
    "UnsatisfiableKind",
    "UserScenario",
    "VersionCounts",
    "VersionRecord",
    "case_json_schema",
]

_TOOL_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}\Z")


def _sorted_already(value: Any) -> bool:
    """Whether every object in ``value`` already lists its keys in sorted order (checked in C).

    orjson writes a JSON value as is and with sorted keys; the bytes are equal exactly when no
    key order changes. Values orjson cannot write (an int past 64 bits, a non-string key, a lone
    surrogate, a subclass of dict or str) answer ``False``, and the Python sort below decides.
    """
    try:
        plain = orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
        return plain == orjson.dumps(
            value, option=orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_SORT_KEYS
        )
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return False


def _sort_deep(value: Any) -> Any:
    """Sort the keys of free-form JSON objects so that canonical output never depends on input order.

    Content read from a canonical file is sorted already and is kept as it is (no rebuild).
    """
    # Most objects of a case (call arguments, fixture matches) are empty or hold one plain
    # value: sorted whatever their key, answered without the two writes below (a fifth of
    # validating a case's Python calls).
    if not value or (len(value) == 1 and type(next(iter(value.values()))) in _PLAIN):
        return value
    if _sorted_already(value):
        return value
    return _resort(value)


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _resort(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _resort(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_resort(v) for v in value]
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_sort_deep)]
"""A free-form JSON object; keys are sorted on load so the canonical form is stable."""


def _check_tool_name(name: str) -> str:
    # A case names a dozen tools, from a catalogue of a few dozen: names already seen valid are
    # looked up, not matched again (the match was a sixth of validating a case's Python calls).
    if name in _TOOL_NAMES_SEEN:
        return name
    if not _TOOL_RE.match(name):
        raise ValueError("must be a tool name (letters, digits, '_', '.', ':' or '-')")
    if len(_TOOL_NAMES_SEEN) < _TOOL_NAMES_KEPT and type(name) is str:
        _TOOL_NAMES_SEEN.add(name)
    return name


_TOOL_NAMES_SEEN: set[str] = set()
_TOOL_NAMES_KEPT = 4096  # bounded: a file of ever-new names costs a match each, not memory


ToolName = Annotated[str, AfterValidator(_check_tool_name)]


# ---------------------------------------------------------------------------------------------
# Issue 16 part 2: simulated users and label semantics (answer-fact matching)

STOP_TOKEN = "###STOP###"
"""What a simulated user writes (anywhere in its message) to end the conversation."""

FactMatch = Literal["exact", "normalised", "regex"]
"""How a matched fact is checked against the final reply, deterministically."""


def _unset(value: Any) -> bool:
    """Whether an issue-16 field is unset (None): then left out of every dump.

    Older records so dump as they did; `tools: []` is set (a case that offers no tool at all).
    """
    return value is None


def _empty(value: Any) -> bool:
    """Left out of every dump when empty (issue-16 label fields; see :func:`_unset`)."""
    return value is None or value == []


def _not_set(value: Any) -> bool:
    """Left out of every dump when off, so records without the flag dump as they did."""
    return value is False


class UserScenario(_Record):
    """A simulated user: who they are, what they want and what they know.

    The simulator sees only this and the conversation, never the label, oracle or `satisfiable`.
    """

    goal: str
    """What the user wants from the conversation, in their terms."""
    persona: str = ""
    """Who the user is and how they write (terse, anxious, non-native speaker...)."""
    known_info: str = ""
    """What the user knows and gives when asked (order ids, names, dates)."""
    unknown_info: str = ""
    """What the user does not know: they say so rather than invent it."""
    instructions: str = ""
    """Further instructions to the simulator (when to give up, what to insist on)."""
    max_turns: int = Field(default=10, ge=1, le=200)
    """Most user turns the simulator writes (the opening one included); then the trial ends."""


class AnswerFact(_Record):
    """An answer fact checked without a judge: the reply holds `text` as `match` says."""

    text: str = Field(min_length=1)
    """The fact (for `regex`: a Python regular expression searched in the reply)."""
    match: FactMatch = "normalised"
    """`exact` (the text appears verbatim), `normalised` (appears, as whole words, after NFKC,
    case-folding and turning every run of non-alphanumerics into one space) or `regex`."""

    @model_validator(mode="after")
    def _regex_compiles(self) -> AnswerFact:
        if self.match == "regex":
            try:
                re.compile(self.text)
            except (re.error, RecursionError, OverflowError) as exc:
                raise ValueError(f"text: invalid regular expression: {exc}") from None
        return self

    def __str__(self) -> str:
        return self.text


# ---------------------------------------------------------------------------------------------
# Situation


class ToolCall(_Record):
    """One tool call in a conversation turn, with its result when the trace recorded it."""

    name: ToolName
    """Name of the tool called, as the agent declares it."""
    arguments: JsonObject = Field(default_factory=dict)
    """Arguments of the call, as a JSON object."""
    id: str | None = None
    """Call id from the trace, if any (pairs a call with its result)."""
    result: Any = None
    """What the tool returned (JSON), if recorded."""
    error: str | None = None
    """Error message the tool returned instead of a result, if any."""


class Turn(_Record):
    """One message of the conversation prefix the agent starts from."""

    role: Literal["user", "assistant", "system", "tool"]
    """Who speaks: the customer (`user`), the agent (`assistant`), a system note or a tool."""
    content: str = ""
    """Text of the message (may be empty for an assistant turn that only calls tools)."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """Tool calls the assistant made in this turn (assistant turns only)."""

    @model_validator(mode="after")
    def _calls_only_from_assistant(self) -> Turn:
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only assistant turns may carry tool_calls")
        return self


class JsonPatchOp(_Record):
    """One RFC 6902 JSON Patch operation applied to the data state when a fixture is called.

    A string ``value`` of exactly ``"${args.NAME}"`` is replaced by the call's argument ``NAME``
    before the patch is applied, so ``issue_refund(amount=12)`` can write 12 into the ledger.
    """

    op: Literal["add", "remove", "replace", "move", "copy", "test"]
    """The JSON Patch operation."""
    path: str
    """JSON Pointer into the data state (`/orders/ord_1/status`)."""
    value: Any = None
    """Value for `add`, `replace` and `test`."""
    from_: str | None = Field(default=None, alias="from")
    """Source pointer for `move` and `copy`."""

    @field_validator("path")
    @classmethod
    def _pointer(cls, v: str) -> str:
        if v and not v.startswith("/"):
            raise ValueError("must be a JSON Pointer starting with '/' (or '' for the whole state)")
        return v


class ToolFixture(_Record):
    """A canned tool response the runner serves in place of the live tool."""

    tool: ToolName
    """Name of the tool this fixture answers."""
    match: JsonObject = Field(default_factory=dict)
    """Arguments a call must carry (subset match) to get this response; empty matches any call."""
    response: Any = None
    """What the tool returns (JSON)."""
    error: str | None = None
    """If set, the tool fails with this message instead of returning `response`."""
    effects: list[JsonPatchOp] = Field(default_factory=list)
    """Writes this call applies to the data state (JSON Patch), for state assertions to read."""


# ---------------------------------------------------------------------------------------------
# Tool environments (issue 16): shared base state and golden actions. Every field this block
# adds elsewhere is optional and marked "(tool environments)": `Situation.state_ref`,
# `Situation.state_patch`, `Oracle.golden_actions`, `Oracle.state_compare`.

_SHA256_RE = re.compile(r"^[0-9a-f]{64}\Z")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


def _project_path(v: str) -> str:
    """Check a path a case names inside its project: relative, no ``..``, no control characters.

    Every reader of a case benefits: a NUL byte would otherwise reach the operating system as
    an exception, and a control character would garble the messages that quote the path.

    Raises:
        ValueError: The path is empty, absolute, climbs out with ``..`` or holds a control character.
    """
    bad = _CONTROL_RE.search(v)
    if bad is not None:
        raise ValueError(f"must not contain control characters ({bad.group()!r})")
    if not v or v.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", v):
        raise ValueError("must be a path relative to the project root")
    if ".." in re.split(r"[\\/]", v):
        raise ValueError("must not contain '..' (the file must be inside the project)")
    return v


class StateRef(_Record):
    """A shared base state file (JSON object, or SQLite read as ``{table: [row, ...]}``).

    The file's sha256 is pinned in the case line, so the dataset version hash covers the state
    the case runs on: editing the file without updating the pin fails `casework dataset check` and the
    run, and updating the pin changes the case line and so makes a new version.
    """

    path: str
    """Path of the file relative to the project root (`states/shop.json`); it must stay inside."""
    sha256: str
    """sha256 of the file's bytes (`casework dataset check` prints the current one when it differs)."""

    @field_validator("path")
    @classmethod
    def _relative(cls, v: str) -> str:
        return _project_path(v)

    @field_validator("sha256")
    @classmethod
    def _hex(cls, v: str) -> str:
        if not _SHA256_RE.match(v):
            raise ValueError("must be 64 lowercase hex digits")
        return v


class GoldenAction(_Record):
    """One tool call of the golden path, replayed by the golden-replay state oracle."""

    name: ToolName
    """Tool to call."""
    arguments: JsonObject = Field(default_factory=dict)
    """Arguments of the call."""
    optional: bool = False
    """A read the agent need not make: replayed when it succeeds, skipped when it fails."""


class Injection(_Record):
    """Adversity planted in the situation (an instruction inside a tool result, a stale read...)."""

    kind: Literal[
        "prompt_injection", "stale_state", "malformed_input", "goal_change", "tool_failure", "other"
    ]
    """What sort of adversity this is."""
    location: str
    """Where it sits: `user_turn:N`, `tool:NAME`, `state:/pointer`."""
    text: str = ""
    """The planted content, or a description of the adversity."""


class Situation(_Record):
    """The inputs of a case: everything the agent may see, and nothing else."""

    goal: str
    """What the user is trying to achieve, in one sentence (for people; not shown to the agent)."""
    # --- issue 16 part 2 (simulated users, per-case tool catalogues): optional, left out when unset;
    # declared before `turns`, whose check reads `user_scenario`
    user_scenario: UserScenario | None = Field(default=None, exclude_if=_unset)
    """A simulated user who answers the agent, instead of (with empty `turns`) or after the
    prefix; the runner plays it with `[models.user]`. Part of the situation: labellers see it."""
    tools: list[ToolName] | None = Field(default=None, exclude_if=_unset)
    """Names of the tools this case offers the agent (from `tools_file` when set, else the
    project's declared tools); unset: all of them. The offered set is part of the situation."""
    tools_file: str | None = Field(default=None, exclude_if=_unset)
    """Tool catalogue file of this case (path inside the project, the shapes `agent/tools.json`
    accepts); needs `tools_sha256`."""
    tools_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$", exclude_if=_unset)
    """sha256 of `tools_file`'s bytes, so the dataset version pins the catalogue's content."""
    # --- end issue 16 part 2
    turns: list[Turn]
    """Conversation prefix the agent starts from; the last turn is normally the user's."""
    fixtures: list[ToolFixture] = Field(default_factory=list)
    """Tool responses the runner serves during the trial."""
    state: JsonObject = Field(default_factory=dict)
    """Initial data state (orders, customers, ledger...) that fixtures' effects write to."""
    injected: list[Injection] = Field(default_factory=list)
    """Adversity deliberately planted in this situation."""
    state_ref: StateRef | None = None
    """(tool environments) Shared base state file; `state` must then stay empty."""
    state_patch: list[JsonPatchOp] = Field(default_factory=list)
    """(tool environments) JSON Patch applied to the `state_ref` file: this case's differences."""

    @field_validator("tools_file")
    @classmethod
    def _inside(cls, v: str | None) -> str | None:
        return None if v is None else _project_path(v)

    @field_validator("turns")
    @classmethod
    def _non_empty(cls, v: list[Turn], info: ValidationInfo) -> list[Turn]:
        if not v and info.data.get("user_scenario") is None:
            raise ValueError("must hold at least one turn (or set user_scenario)")
        return v

    @model_validator(mode="after")
    def _file_pinned(self) -> Situation:
        if (self.tools_file is None) != (self.tools_sha256 is None):
            raise ValueError("tools_file and tools_sha256 go together")
        return self

    @model_validator(mode="after")
    def _one_state_source(self) -> Situation:
        if self.state_ref is not None and self.state:
            raise ValueError("state_ref and state are exclusive: put differences in state_patch")
        if self.state_patch and self.state_ref is None:
            raise ValueError("state_patch needs a state_ref")
        return self

    def user_text(self) -> str:
        """All user turns joined by newlines (leakage compares more: `casework.leakage.text`)."""
        return "\n".join(t.content for t in self.turns if t.role == "user")


# ---------------------------------------------------------------------------------------------
# Label


class ArgMatcher(_Record):
    """How one argument of a required (or forbidden) tool call is matched."""

    match: Literal["any", "exact", "any_of", "subset", "regex", "predicate"] = "exact"
    """`any`: present with any value; `exact`: equal; `any_of`: equal to one of the values listed
    in `value`; `subset`: an object/list containing `value`; `regex`: a string matching `value`
    fully; `predicate`: JMESPath expression over `@` is true."""
    value: Any = None
    """Expected value, list of acceptable values, subset, regular expression or JMESPath
    predicate, depending on `match`."""
    strings: Literal["exact", "bfcl", "bfcl-java", "bfcl-js"] = Field(
        default="exact", exclude_if=lambda v: v == "exact"
    )
    """(`exact`, `any_of`) How values are compared. `exact`: equal. `bfcl`: as BFCL's AST checker
    compares them: strings (also inside lists and objects) equal once spaces and `, . / - _ * ^`
    are removed, case is folded and `'` reads as `"`; types must agree (an integer may stand for
    a float); an acceptable object maps each key to its own list of acceptable values (`""`
    among them: the key may be left out). `bfcl-java`, `bfcl-js`: the argument is Java or
    JavaScript source text (`50L`, `new String[]{a, b}`, `{'k': 1}`), read as `source_type` and
    then compared as BFCL's checker does; text that does not read as that type is compared as
    written, and an argument that is not text fails."""
    source_type: str | None = Field(
        default=None, pattern=r"^\w+(<\w+>)?$", exclude_if=lambda v: v is None
    )
    """(strings `bfcl-java`, `bfcl-js`) The parameter's declared type in that language, with the
    item type of a list (`long`, `HashMap`, `Array<String>`, `array<float>`)."""
    optional: bool = Field(default=False, exclude_if=_not_set)
    """The argument may be left out; when it is given, it must match."""

    @model_validator(mode="after")
    def _any_of_lists(self) -> ArgMatcher:
        if self.match == "any_of" and not isinstance(self.value, list):
            raise ValueError("any_of needs a list of acceptable values")
        if self.strings in ("bfcl-java", "bfcl-js") and self.source_type is None:
            raise ValueError(f"strings '{self.strings}' needs the parameter's source_type")
        if self.source_type is not None and self.strings not in ("bfcl-java", "bfcl-js"):
            raise ValueError("source_type goes with strings 'bfcl-java' or 'bfcl-js'")
        return self


class ToolRequirement(_Record):
    """A tool named by a label; written as a plain string when no argument is constrained."""

    name: ToolName
    """Tool name, as the agent declares it."""
    arguments: dict[str, ArgMatcher] = Field(default_factory=dict)
    """Argument matchers; a call must satisfy all of them. Empty: any arguments."""
    allow_error: bool = Field(default=False, exclude_if=_not_set)
    """(`required_tools` only) A call that returned an error satisfies this requirement too.
    Off by default: a call the tool answered with an error did not do what the label requires
    (set it when trying the tool is what counts, e.g. a lookup that is expected to fail)."""

    @model_validator(mode="before")
    @classmethod
    def _from_str(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @model_serializer(mode="wrap")
    def _to_str(self, handler: SerializerFunctionWrapHandler) -> Any:
        if not self.arguments and not self.allow_error:
            return self.name
        return handler(self)


class Label(_Record):
    """The expected behaviour, decided by people who never saw the agent's output."""

    outcome: Outcome
    """`resolve`, `clarify` (ask a question), `refuse` or `escalate` (hand to a person)."""
    required_tools: list[ToolRequirement] = Field(default_factory=list)
    """Calls that must happen (a name, or a name with argument matchers)."""
    forbidden_tools: list[ToolRequirement] = Field(default_factory=list)
    """Calls that must not happen (e.g. `issue_refund` on an ineligible order)."""
    answer_facts: list[str] = Field(default_factory=list)
    """Short statements a correct final reply must contain (the judge decides; a paraphrase
    counts). Facts checked without a judge go in `matched_facts`."""
    guideline_version: str | None = None
    """Guideline the label was decided under (`refunds-g7`)."""
    labellers: list[str] = Field(default_factory=list)
    """Pseudonymous ids of the people whose labels produced this one."""
    adjudicated: bool = False
    """True when a third person resolved a disagreement between labellers."""
    # --- issue 16 part 2 (label semantics): optional, left out when unset
    acceptable_outcomes: list[Outcome] = Field(default_factory=list, exclude_if=_empty)
    """Other outcomes that also pass, besides `outcome` (e.g. `outcome: refuse` with
    `acceptable_outcomes: [escalate]`). `outcome` stays the one labellers agree on."""
    matched_facts: list[AnswerFact] = Field(default_factory=list, exclude_if=_empty)
    """Answer facts checked deterministically against the final reply, each by its `match`
    (`exact`, `normalised` substring or `regex`), with no judge, beside any state assertions."""
    nl_assertions: list[str] = Field(default_factory=list, exclude_if=_empty)
    """Natural-language assertions about the whole trajectory (rubric items), each decided by
    the calibrated judge as an `answer_fact` finding (`nl_assertions` check)."""

    @model_validator(mode="before")
    @classmethod
    def _outcome_list(cls, value: Any) -> Any:
        # `outcome: ["refuse", "escalate"]` is read as outcome refuse, escalate also acceptable.
        if isinstance(value, dict) and isinstance(value.get("outcome"), list):
            listed = value["outcome"]
            if listed and "acceptable_outcomes" not in value:
                return {**value, "outcome": listed[0], "acceptable_outcomes": listed[1:]}
        return value

    @model_validator(mode="after")
    def _acceptable_distinct(self) -> Label:
        if self.outcome in self.acceptable_outcomes:
            raise ValueError("acceptable_outcomes repeats outcome; list only the other outcomes")
        if len(set(self.acceptable_outcomes)) != len(self.acceptable_outcomes):
            raise ValueError("acceptable_outcomes lists an outcome twice")
        return self

    def accepted_outcomes(self) -> tuple[Outcome, ...]:
        """`outcome` then `acceptable_outcomes`: every outcome that passes."""
        return (self.outcome, *self.acceptable_outcomes)

    # --- end issue 16 part 2

    @model_validator(mode="after")
    def _allow_error_required_only(self) -> Label:
        # A forbidden call counts whether or not the tool answered it: it was attempted.
        if any(t.allow_error for t in self.forbidden_tools):
            raise ValueError("forbidden_tools: allow_error applies to required_tools only")
        return self

    @model_validator(mode="after")
    def _no_tool_both_required_and_forbidden(self) -> Label:
        req = {t.name for t in self.required_tools if not t.arguments}
        clash = sorted(req & {t.name for t in self.forbidden_tools if not t.arguments})
        if clash:
            raise ValueError(f"tool(s) both required and forbidden: {', '.join(clash)}")
        return self

    def tool_names(self) -> set[str]:
        """Every tool this label names, required or forbidden."""
        return {t.name for t in self.required_tools} | {t.name for t in self.forbidden_tools}


# ---------------------------------------------------------------------------------------------
# Oracle


class StateAssertion(_Record):
    """A programmatic check over the final data state of a trial."""

    expr: str
    """Expression selecting a value from the final state."""
    language: Literal["jmespath", "jsonpath"] = "jmespath"
    """Expression language of `expr`."""
    op: Literal["eq", "ne", "gt", "ge", "lt", "le", "contains", "exists", "absent"] = "eq"
    """Comparison between the selected value and `value`."""
    value: Any = None
    """Expected value (unused by `exists` and `absent`)."""
    description: str = ""
    """What the assertion means, for people reading a failed verdict."""


Tau2RewardPart = Literal["DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION"]
"""A part of τ²-bench's reward basis (its `RewardType`)."""


class Tau2Scoring(_Record):
    """τ²-bench's own scoring of an imported task, carried as published (oracle data: never shown).

    τ²'s evaluator reads these parts as they are (its environment assertions, initialization
    actions and golden actions run in τ²'s own domain environment); casework's golden replay and
    matched facts are the same criteria in casework's terms.
    """

    domain: str | None = None
    """τ²-bench domain whose environment scores the task (`airline`, `retail`, `telecom`);
    `None` when the domain is not one the installed τ²-bench knows."""
    reward_basis: list[Tau2RewardPart] = Field(min_length=1)
    """What τ²'s reward multiplies, as the task names it (τ²'s default: `DB`, `COMMUNICATE`)."""
    evaluation_criteria: JsonObject = Field(default_factory=dict)
    """The task's `evaluation_criteria` as published (actions, env_assertions, communicate_info,
    nl_assertions, reward_basis)."""
    initial_state: JsonObject | None = None
    """The task's `initial_state` as published (initialization_data, initialization_actions,
    message_history)."""
    user_tools: StateRef | None = None
    """Catalogue of the simulated user's own tools (telecom's device), pinned by sha256; never
    offered to the agent."""
    lost: list[Tau2RewardPart] = Field(default_factory=list, exclude_if=_empty)
    """Parts of the reward basis casework cannot score for this task: the case is not gradable
    (`casework dataset check` fails it)."""


class Oracle(_Record):
    """What decides whether a trajectory through the situation was correct."""

    class_: OracleClass = Field(default="human", alias="class")
    """`state_assertion` (programmatic, preferred), `rubric_judge` (LLM judge, admissible only once
    certified against people's verdicts on its verdicts: docs/judge.md), `human`, or
    `programmatic` (a registered Python check named by `check` decides: a benchmark's own
    scoring functions carried as they are)."""
    check: str | None = Field(default=None, exclude_if=_unset)
    """(class `programmatic`) The check that decides: a registered name, a `casework.checks`
    entry point, or `pkg.module:function`; called with (state before, state after, trajectory,
    `check_params`), it returns pass/fail and a reason."""
    check_params: JsonObject | None = Field(default=None, exclude_if=_unset)
    """(class `programmatic`) Arguments the check reads (a benchmark's task id, its version)."""
    assertions: list[StateAssertion] = Field(default_factory=list)
    """State assertions over the final state (class `state_assertion`)."""
    rubric: str | None = None
    """Rubric the judge applies (class `rubric_judge`). A generator that proposes the rubric never
    writes the answer key for the same case; a reference answer written by people may appear."""
    ref: str | None = None
    """Reference to an external oracle definition (a check name, a document)."""
    not_gradable: str | None = Field(default=None, exclude_if=_unset)
    """What of the source benchmark's scoring casework cannot carry (BFCL's multi-turn tasks,
    scored by executing the calls on BFCL's own classes): the case is kept for people, and
    `casework dataset check` fails it rather than grading it on something else."""
    golden_actions: list[GoldenAction] = Field(default_factory=list)
    """(tool environments) Tool calls that reach the right final state; replayed on a fresh copy
    of the initial state, the agent's final state must equal theirs. Oracle data: never shown."""
    state_compare: list[str] = Field(default_factory=list)
    """(tool environments) JSON Pointers (`/orders`, `/bookings/B-1/status`) the golden-replay
    comparison covers; empty compares the whole state."""
    tau2: Tau2Scoring | None = Field(default=None, exclude_if=_unset)
    """(imported τ²-bench tasks) τ²'s own reward basis and criteria, carried as published."""

    @field_validator("state_compare")
    @classmethod
    def _pointers(cls, v: list[str]) -> list[str]:
        for pointer in v:
            if not pointer.startswith("/"):
                raise ValueError(f"must hold JSON Pointers starting with '/'; {pointer!r} does not")
        return v

    @model_validator(mode="after")
    def _class_has_its_parts(self) -> Oracle:
        if self.class_ == "state_assertion" and not (
            self.assertions or self.golden_actions or self.tau2
        ):
            raise ValueError("class 'state_assertion' needs at least one assertion")
        if self.class_ == "rubric_judge" and not self.rubric:
            raise ValueError("class 'rubric_judge' needs a rubric")
        if (self.class_ == "programmatic") != (self.check is not None):
            raise ValueError("class 'programmatic' and check go together")
        return self


# ---------------------------------------------------------------------------------------------
# Provenance


class Generator(_Record):
    """The model and prompt that generated a case or variant."""

    model: str
    """Model id (`gpt-4o-mini`, `scripted`)."""
    prompt_version: str | int
    """Version of the generation prompt."""
    family: str | None = None
    """Model family, recorded because a generator of the agent's own family writes easier text."""


class ScrubInfo(_Record):
    """How a mined row was scrubbed (never the key itself)."""

    version: str
    """Version of the scrubber (detectors and normalisation rules)."""
    key_fingerprint: str
    """Fingerprint of the pseudonym key (a hash of it, not reversible)."""


class Provenance(_Record):
    """Where a case came from and what has been done to it: the supply chain of the dataset."""

    shape: str | None = None
    """Named failure shape this case belongs to."""
    source_trace: str | None = None
    """Trace id the case was mined from (scrubbed)."""
    source_session: str | None = None
    """Keyed pseudonym of the production session, for deletion requests."""
    subjects: list[str] = Field(default_factory=list)
    """Pseudonyms of the customer identifiers this row contains, for deletion requests."""
    mined_at: AwareDatetime | None = None
    """When the row was mined (UTC)."""
    retain_until: date | None = None
    """The row must leave the dataset in the first change after this UTC date."""
    generator: Generator | None = None
    """Model and prompt that generated this case, for synthetic or authored cases."""
    transform: str | None = None
    """Transform that made this variant from its seed (`paraphrase`, `drop_identifier`...)."""
    parent_id: str | None = None
    """Id of the seed case a variant was made from."""
    axis: str | None = None
    """Axis of perturbation within the shape (missing input, two readings...)."""
    unsatisfiable_kind: UnsatisfiableKind | None = None
    """Why the task cannot be completed, for unsatisfiable cases."""
    reviewer: str | None = None
    """Who reviewed the case."""
    reviewed_at: AwareDatetime | None = None
    """When it was reviewed (UTC)."""
    discriminates: list[str] = Field(default_factory=list)
    """Last pairs of systems this case separated (`v3.1 > v2.8`)."""
    scrub: ScrubInfo | None = None
    """Scrubbing record for mined rows."""
    original_id: str | None = Field(default=None, exclude_if=_unset)
    """Id of the task in the benchmark or tool it was imported from (τ² `[mobile_data_issue]…`),
    kept when the case's id differs: shown, and `import run` matches a run's task ids by it."""
    signals: list[str] = Field(default_factory=list)
    """Failure signals of the production conversation a mined row came from (`thumbs_down`,
    `escalated`, `retry`, `retry_storm`, `abandoned`, `tool_error`), for selecting and clustering."""


# ---------------------------------------------------------------------------------------------
# Case


class Case(_Record):
    """A situation bound to a label and an oracle: the unit a dataset counts."""

    schema_version: Literal[1] = SCHEMA_VERSION
    """Version of this record format."""
    id: str
    """Stable unique id (letters, digits, `._~:+-`); variants are `<seed>~<transform>[-n]`."""
    slice: Name
    """Named group (an intent, a product area); agreement, caps and quotas are per slice."""
    split: Split
    """`dev`, `holdout` or `smoke` (retired cases that still run cheaply)."""
    frozen: bool = False
    """Private: never exported to prompts, few-shot examples or training data."""
    source: Source
    """`mined` (production traces), `hand` (written by a person) or `synthetic` (generated)."""
    satisfiable: bool = True
    """False when the honest answer is a refusal, a question or an escalation."""
    situation: Situation
    """The inputs the agent sees."""
    label: Label | None = None
    """Expected behaviour; absent on drafts and on variants waiting for labelling."""
    oracle: Oracle = Field(default_factory=Oracle)
    """What decides correctness (default: a human)."""
    provenance: Provenance = Field(default_factory=Provenance)
    """Supply-chain metadata."""

    @field_validator("id")
    @classmethod
    def _id_shape(cls, v: str) -> str:
        if case_id_problem(v) is not None:
            raise ValueError(
                "must start with a letter or digit and hold only letters, digits and ._~:+-"
            )
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Case:
        if (
            not self.satisfiable
            and self.label is not None
            and "resolve" in self.label.accepted_outcomes()
        ):
            raise ValueError("an unsatisfiable case cannot have outcome 'resolve'")
        if self.provenance.unsatisfiable_kind is not None and self.satisfiable:
            raise ValueError("provenance.unsatisfiable_kind is set but satisfiable is true")
        return self

    def tool_names(self) -> set[str]:
        """Every tool the case names: in its label, its fixtures and its conversation."""
        names = self.label.tool_names() if self.label else set()
        names |= {f.tool for f in self.situation.fixtures}
        names |= {c.name for t in self.situation.turns for c in t.tool_calls}
        return names


# ---------------------------------------------------------------------------------------------
# Raw labels and releases


class LabelRecord(_Record):
    """One labeller's raw label for one case, kept so agreement can be recomputed from git."""

    schema_version: Literal[1] = SCHEMA_VERSION
    """Version of this record format."""
    case_id: str
    """Id of the labelled case."""
    labeller: LabellerId
    """Pseudonymous labeller id."""
    role: Literal["first", "second", "adjudicator"]
    """Whether this is the first, the second (overlap) or the adjudicating label."""
    overlap_reason: Literal["calibration", "audit", "disagreement"] | None = None
    """Why a second label exists: new-slice calibration, random audit, or a disagreement."""
    outcome: Outcome
    """Outcome class the labeller chose."""
    required_tools: list[ToolRequirement] = Field(default_factory=list)
    """Tools the labeller marked required."""
    forbidden_tools: list[ToolRequirement] = Field(default_factory=list)
    """Tools the labeller marked forbidden."""
    answer_facts: list[str] = Field(default_factory=list)
    """Facts the labeller expects in the reply."""
    guideline_version: str
    """Guideline version the labeller worked under."""
    labelled_at: AwareDatetime
    """When the label was submitted (UTC)."""


def case_json_schema() -> dict[str, Any]:
    """JSON Schema of one line of `cases.jsonl`, for editors and external validators."""
    schema = Case.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://casework.dev/schema/case-v{SCHEMA_VERSION}.json"
    return schema


document_fields(globals())
