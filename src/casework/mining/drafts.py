"""Draft situations: one raw conversation, scrubbed in memory, becomes an unlabelled mined case.

Entry point: :func:`draft_case`. A draft never carries a label and never shows the agent's final
answer: the conversation prefix stops at the last user turn.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from casework.dataset.jsonl import canonical_line, problems_from_validation
from casework.errors import InputErrors, Problem
from casework.mining.conversation import (
    RawConversation,
    RawMessage,
    RawToolCall,
    as_arguments,
    fold_tool_messages,
)
from casework.mining.quoting import quoted
from casework.privacy import Scrubber
from casework.privacy.scrub import SCRUB_VERSION, ScrubContext
from casework.schema import (
    Case,
    Provenance,
    ScrubInfo,
    Situation,
    Split,
    ToolCall,
    ToolFixture,
    Turn,
)

__all__ = ["DraftOptions", "ScrubLeak", "draft_case", "retain_until"]

_GOAL_MAX = 160
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


class ScrubLeak(InputErrors):
    """A known customer value survived scrubbing: nothing is written (never shows the value)."""


@dataclass(frozen=True)
class DraftOptions:
    """How drafts are made.

    Attributes:
        slice: Slice of every draft whose trace names none.
        split: Split of the drafts.
        mined_at: Mining time (UTC).
        retention_days: Days a row is kept (see :func:`retain_until`).
    """

    slice: str
    split: Split
    mined_at: datetime
    retention_days: int


def retain_until(mined_at: datetime, retention_days: int) -> date:
    """The UTC date after which the row must leave the dataset: ``mined_at`` + retention days.

    The row may stay in every version released on or before this date; the first version
    released after it must not hold it (`casework dataset expire`).
    """
    return (mined_at.astimezone(UTC) + timedelta(days=retention_days)).date()


def _content(ctx: ScrubContext, value: Any) -> str:
    """Scrubbed text of a message: a string as text, structured content walked, then dumped."""
    if value is None:
        return ""
    if isinstance(value, str):
        return ctx.text(value)
    return json.dumps(ctx.json(value), ensure_ascii=False, sort_keys=True)


def _goal(first_user: str) -> str:
    text = " ".join(first_user.split())
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0] if text else ""
    if len(sentence) > _GOAL_MAX:
        sentence = sentence[: _GOAL_MAX - 1].rstrip() + "…"
    return sentence or "(the customer's first message was empty)"


def _learn(ctx: ScrubContext, conv: RawConversation, calls: list[RawToolCall]) -> None:
    """Every customer value the conversation's structure names, before any text is scrubbed."""
    ctx.add_known_from(conv.metadata)
    ctx.add_known_from(list(conv.fixtures))
    ctx.add_known_from(conv.state)
    for call in calls:
        ctx.add_known_from(call.arguments)
        ctx.add_known_from(call.result)


def _call(ctx: ScrubContext, call: RawToolCall) -> ToolCall:
    return ToolCall(
        name=call.name,
        arguments=ctx.json(call.arguments),
        id=ctx.text(call.id) if call.id else None,
        result=ctx.json(call.result),
        error=ctx.text(call.error) if call.error else None,
    )


def _turns(
    ctx: ScrubContext, messages: tuple[RawMessage, ...], last_user: int, calls: list[RawToolCall]
) -> list[Turn]:
    """Scrubbed turns up to the last user turn; tool messages folded into the calls they answer."""
    _, folded = fold_tool_messages(messages)
    turns: list[Turn] = []
    next_call = 0
    for position, m in enumerate(messages[: last_user + 1]):
        if m.role == "system" or position in folded:
            continue
        if m.role == "assistant":
            made = calls[next_call : next_call + len(m.tool_calls)]
            next_call += len(m.tool_calls)
            turns.append(
                Turn(
                    role="assistant",
                    content=_content(ctx, m.content),
                    tool_calls=[_call(ctx, c) for c in made],
                )
            )
        else:
            turns.append(Turn(role=m.role, content=_content(ctx, m.content)))
    return turns


def _fixtures(
    ctx: ScrubContext, conv: RawConversation, calls: list[RawToolCall]
) -> list[ToolFixture]:
    """Explicit fixtures, then one per recorded call result.

    Deduplicated by tool and arguments, the first kept: an explicit fixture beats a recorded
    call, and the first of several identical calls (a retried timeout, say) wins.
    """
    out: list[ToolFixture] = []
    seen: set[str] = set()
    for raw in conv.fixtures:
        fixture = ToolFixture.model_validate(
            {
                "tool": raw.get("tool") or raw.get("name"),
                "match": ctx.json(as_arguments(raw.get("match") or raw.get("arguments") or {})),
                "response": ctx.json(raw.get("response", raw.get("result"))),
                "error": ctx.text(str(raw["error"])) if raw.get("error") else None,
            }
        )
        key = canonical_line(ToolFixture(tool=fixture.tool, match=fixture.match))
        if key not in seen:
            seen.add(key)
            out.append(fixture)
    for call in calls:
        if call.result is None and not call.error:
            continue
        fixture = ToolFixture(
            tool=call.name,
            match=ctx.json(call.arguments),
            response=ctx.json(call.result),
            error=ctx.text(call.error) if call.error else None,
        )
        key = canonical_line(ToolFixture(tool=fixture.tool, match=fixture.match))
        if key not in seen:
            seen.add(key)
            out.append(fixture)
    return out


def draft_case(
    conv: RawConversation,
    scrubber: Scrubber,
    options: DraftOptions,
    signals: list[str],
) -> Case | None:
    """Scrub ``conv`` and make it an unlabelled draft case; ``None`` without a user turn.

    Known values (fixtures, tool arguments and results, session metadata) are learnt first, so
    a name is replaced in the first message even when only a later tool result holds it. The
    prefix ends at the last user turn; fixtures hold every recorded tool result.

    Raises:
        InputErrors: The conversation cannot make a valid case (a bad tool name, a bad fixture).
        ScrubLeak: A known customer value is still present after scrubbing (a bug; nothing is
            written).
    """
    last_user = max((i for i, m in enumerate(conv.messages) if m.role == "user"), default=None)
    if last_user is None:
        return None
    calls = conv.tool_calls()
    ctx = scrubber.conversation()
    _learn(ctx, conv, calls)
    session = ctx.identifier("session", conv.session_id)
    trace = ctx.identifier("trace", conv.trace_id) if conv.trace_id else None
    try:
        turns = _turns(ctx, conv.messages, last_user, calls)
        situation = Situation(
            goal=_goal(next(t.content for t in turns if t.role == "user")),
            turns=turns,
            fixtures=_fixtures(ctx, conv, calls),
            state=ctx.json(conv.state),
        )
        case = Case(
            id=f"mined-{session.partition('_')[2]}",
            slice=conv.slice or options.slice,
            split=options.split,
            source="mined",
            situation=situation,
            provenance=Provenance(
                source_session=session,
                source_trace=trace,
                subjects=sorted(ctx.subjects),
                mined_at=options.mined_at,
                retain_until=retain_until(options.mined_at, options.retention_days),
                scrub=ScrubInfo(version=SCRUB_VERSION, key_fingerprint=scrubber.fingerprint),
                signals=signals,
            ),
        )
    except ValidationError as exc:
        # The offending value came from the trace: quote it scrubbed (it may be a customer's).
        raise InputErrors(
            [
                Problem(p.path, p.line, p.field, p.message, quoted(p.got), p.has_got)
                for p in problems_from_validation(exc, conv.origin, None)
            ]
        ) from exc
    leaked = ctx.leaked_kinds(situation.model_dump_json())
    if leaked:
        raise ScrubLeak(
            [
                Problem(
                    conv.origin,
                    None,
                    None,
                    f"a known {', '.join(leaked)} value survived scrubbing; nothing was written "
                    "(please report this with the trace's shape, not its content)",
                )
            ]
        )
    return case
