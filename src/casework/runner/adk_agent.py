"""``adk:URL/APP``: run an agent served by ``adk api_server`` (Python or Java ADK), no glue.

Both ADKs serve the same HTTP API (Python: ``google/adk/cli/api_server.py``; Java:
``dev/src/main/java/com/google/adk/web/controller/{Session,Execution}Controller.java``):

- ``POST /apps/{app}/users/{user}/sessions`` with ``{"state": …}`` creates a session (Python
  also takes ``events``, which restore a conversation prefix; Java's ``SessionRequest`` reads
  ``state`` only);
- ``POST /run`` with ``{"appName", "userId", "sessionId", "newMessage"}`` runs one invocation
  and answers the list of events it produced (each: ``author``, ``content.parts`` with ``text``,
  ``functionCall`` or ``functionResponse``, ``usageMetadata``, ``partial``);
- ``POST /run_sse`` with the same body and ``"streaming": true`` (``adk:URL/APP?stream=sse``)
  answers the same events as server-sent events, one ``data:`` line of event JSON each, the
  model's reply streamed as ``partial`` events before the whole one (Python's
  ``run_agent_sse``; Java's ``ExecutionController.agentRunSse``); Python reports a failure
  mid-stream as a ``data: {"error": …}`` event;
- ``GET /apps/{app}/users/{user}/sessions/{id}`` answers the session with its ``state``.

ADK runs the agent's own tools, so this adapter records the calls and their results from the
events, and the trial's final state is the ADK session's final state. Entry point:
:class:`AdkAgent`, built by :func:`casework.runner.adapters.load_agent` for ``adk:`` specs.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote

import httpx
from httpx_sse import SSEError, aconnect_sse

from casework.dataset._tools_from import adk_target
from casework.errors import CaseworkError, UsageError
from casework.runner.fixtures import ToolSession
from casework.schema import AgentInput, Message, Trajectory, TrajectoryToolCall, Turn, Usage

__all__ = ["ADK_USER_ID", "AdkAgent", "AdkUnavailable", "events_to_trajectory"]

#: The ``user_id`` casework's sessions are created under on the ADK server.
ADK_USER_ID = "casework"


class AdkUnavailable(CaseworkError):
    """The ADK server cannot be reached or does not serve the app (the run stops)."""


@dataclass
class _Conversation:
    """The ADK session of one trial, and how many of the trial's turns it already holds."""

    session_id: str
    sent: int


def _content(role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": role, "parts": parts}


def _prefix_events(turns: list[Turn], author: str) -> list[dict[str, Any]]:
    """ADK events restoring a conversation prefix (the events ``adk api_server`` would have)."""
    events: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role == "assistant":
            parts: list[dict[str, Any]] = [{"text": turn.content}] if turn.content else []
            answers: list[dict[str, Any]] = []
            for n, call in enumerate(turn.tool_calls, start=1):
                call_id = call.id or f"casework-{len(events)}-{n}"
                parts.append(
                    {"functionCall": {"id": call_id, "name": call.name, "args": call.arguments}}
                )
                if call.result is not None or call.error is not None:
                    response = {"error": call.error} if call.error is not None else call.result
                    if not isinstance(response, dict):
                        response = {"result": response}  # ADK's FunctionTool wraps non-dicts so
                    answers.append(
                        {
                            "functionResponse": {
                                "id": call_id,
                                "name": call.name,
                                "response": response,
                            }
                        }
                    )
            if parts:
                events.append({"author": author, "content": _content("model", parts)})
            if answers:
                events.append({"author": author, "content": _content("user", answers)})
        else:
            # ADK sessions have no system or tool role: their text reaches the agent as the user's.
            events.append({"author": "user", "content": _content("user", [{"text": turn.content}])})
    return events


def _get(data: dict[str, Any], camel: str, snake: str) -> Any:
    """A field as Python ADK (camelCase by alias) or a snake_case writer spells it."""
    return data.get(camel, data.get(snake))


def _count(value: Any) -> int:
    """A token count as ADK writes it (an integer); anything else counts nothing."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _is_error(response: Any) -> str | None:
    """ADK's convention for a failed tool: a response that is only ``{"error": …}``."""
    if isinstance(response, dict) and set(response) == {"error"}:
        return str(response["error"])
    return None


def events_to_trajectory(events: list[Any]) -> tuple[Trajectory, list[TrajectoryToolCall]]:
    """Read the events of one ADK invocation into a trajectory and its recorded tool calls.

    Partial (streamed) events and the model's thoughts are skipped. Each ``functionCall`` is a
    tool call; the ``functionResponse`` with its id (else the next unanswered call of that name)
    gives its result, or its error when the response is only ``{"error": …}``. The final reply
    is the text of the last event not written by the user; usage sums ``usageMetadata``.
    """
    messages: list[Message] = []
    calls: list[TrajectoryToolCall] = []
    pending: list[tuple[str | None, int]] = []  # (call id, index in calls) still unanswered
    final_reply = ""
    usage = Usage()
    for event in events:
        if not isinstance(event, dict) or event.get("partial"):
            continue
        meta = _get(event, "usageMetadata", "usage_metadata")
        if isinstance(meta, dict):
            usage = Usage(
                input_tokens=usage.input_tokens
                + _count(_get(meta, "promptTokenCount", "prompt_token_count")),
                output_tokens=usage.output_tokens
                + _count(_get(meta, "candidatesTokenCount", "candidates_token_count")),
            )
        content = event.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            continue
        texts: list[str] = []
        made: list[TrajectoryToolCall] = []
        for part in parts:
            if not isinstance(part, dict):
                continue
            text = part.get("text")
            if isinstance(text, str) and text and not part.get("thought"):
                texts.append(text)
            call = _get(part, "functionCall", "function_call")
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                args = call.get("args")
                recorded = TrajectoryToolCall(
                    name=call["name"], arguments=args if isinstance(args, dict) else {}
                )
                pending.append((call.get("id"), len(calls)))
                calls.append(recorded)
                made.append(recorded)
            answer = _get(part, "functionResponse", "function_response")
            if isinstance(answer, dict):
                _answer(answer, calls, pending, messages)
        if event.get("author") == "user":
            continue
        if texts or made:
            text = "\n".join(texts)
            messages.append(Message(role="assistant", content=text, tool_calls=made))
            if text:
                final_reply = text
    # A call the events never answered (a long-running tool) stays with no result and no error.
    return Trajectory(messages=messages, final_reply=final_reply, usage=usage), calls


def _answer(
    answer: dict[str, Any],
    calls: list[TrajectoryToolCall],
    pending: list[tuple[str | None, int]],
    messages: list[Message],
) -> None:
    call_id, name = answer.get("id"), answer.get("name")
    match = next((p for p in pending if call_id is not None and p[0] == call_id), None)
    if match is None:
        match = next((p for p in pending if calls[p[1]].name == name), None)
    response = answer.get("response")
    if match is not None:
        pending.remove(match)
        error = _is_error(response)
        calls[match[1]] = calls[match[1]].model_copy(
            update={"result": None if error is not None else response, "error": error}
        )
    messages.append(Message(role="tool", content=json.dumps(response, sort_keys=True)))


class AdkAgent:
    """``adk:URL/APP``: each trial is a fresh session of APP on the ADK server at URL.

    The session starts with the case's data state as its session state and the conversation
    prefix as its events; the trailing user turns go to ``POST /run`` as one message (to
    ``POST /run_sse``, streaming, with ``adk:URL/APP?stream=sse``); later calls
    of the same trial (a simulated user's turns) continue the same session. Tool calls and results
    are recorded from the events and the final session state replaces the trial's state.
    """

    needs_tool_server = False

    def __init__(self, spec: str, *, timeout_s: float, connections: int) -> None:
        target = adk_target(spec)
        if target is None:
            raise UsageError(
                f"expected adk:http://HOST:PORT/APP (the app `adk api_server` serves). Got '{spec}'.",
                param="agent",
            )
        self.spec = spec
        self.base, self.app = target
        self._sse = _stream_option(spec)
        self._timeout = timeout_s
        limits = httpx.Limits(
            max_connections=max(1, connections), max_keepalive_connections=max(1, connections)
        )
        self._client = httpx.AsyncClient(
            base_url=self.base, timeout=timeout_s, limits=limits, trust_env=False
        )
        self._author: str | None = None
        self._trials: weakref.WeakKeyDictionary[ToolSession, _Conversation] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def _sessions(self) -> str:
        return f"/apps/{quote(self.app)}/users/{ADK_USER_ID}/sessions"

    async def _root_agent(self) -> str:
        """The name prefix events are written by: the root agent's (Python's app-info), else the app's."""
        if self._author is None:
            self._author = self.app
            response = await self._client.get(f"/apps/{quote(self.app)}/app-info")
            if response.status_code == 200:
                name = response.json().get("rootAgentName")
                self._author = name if isinstance(name, str) and name else self.app
        return self._author

    async def _served_or_stop(self) -> None:
        """Stop the run when the server's app list (``GET /list-apps``) lacks the app."""
        listed = await self._client.get("/list-apps")
        apps = listed.json() if listed.status_code == 200 else None
        if isinstance(apps, list) and self.app not in apps:
            served = ", ".join(str(a) for a in apps) or "none"
            raise AdkUnavailable(
                f"ADK server {self.base} does not serve app '{self.app}' (it serves: {served})"
            )

    async def _start(self, session: ToolSession, prefix: list[Turn]) -> str:
        body: dict[str, Any] = {"state": session.initial_state}
        if prefix:
            body["events"] = _prefix_events(prefix, await self._root_agent())
        response = await self._client.post(self._sessions, json=body)
        if response.status_code != 200:
            await self._served_or_stop()
            raise _Failed(
                f"creating the ADK session answered HTTP {response.status_code}: "
                f"{response.text[:300]}"
            )
        session_id = response.json().get("id")
        if not isinstance(session_id, str):
            raise _Failed("the ADK server created a session without an id")
        return session_id

    async def run(self, request: AgentInput, session: ToolSession) -> Trajectory:
        """Run one invocation on the trial's ADK session; failures become a failed trajectory."""
        turns = request.turns
        tail = len(turns)
        while tail > 0 and turns[tail - 1].role == "user":
            tail -= 1
        if tail == len(turns):
            return Trajectory(
                error="the conversation does not end with a user turn: nothing to send to ADK"
            )
        try:
            known = self._trials.get(session)
            if known is None:
                known = _Conversation(await self._start(session, turns[:tail]), tail)
                self._trials[session] = known
            # Turns the session holds already: the prefix and the agent's own earlier replies.
            new = [t.content for t in turns[max(known.sent, tail) :] if t.role == "user"]
            known.sent = len(turns)
            body = {
                "appName": self.app,
                "userId": ADK_USER_ID,
                "sessionId": known.session_id,
                "newMessage": _content("user", [{"text": text} for text in new]),
            }
            events = await (self._run_sse(body) if self._sse else self._run(body))
            trajectory, calls = events_to_trajectory(events)
            final = await self._client.get(f"{self._sessions}/{quote(known.session_id)}")
            if final.status_code != 200:
                raise _Failed(f"reading the ADK session answered HTTP {final.status_code}")
            state = final.json().get("state")
        except httpx.ConnectError as exc:
            raise AdkUnavailable(
                f"ADK server {self.base} is not reachable ({exc}); is `adk api_server` running?"
            ) from exc
        except httpx.TimeoutException:
            return Trajectory(error=f"agent timed out after {self._timeout:g} s")
        except (httpx.HTTPError, ValueError) as exc:
            return Trajectory(error=f"ADK request failed: {type(exc).__name__}: {exc}")
        except _Failed as exc:
            return Trajectory(error=str(exc))
        # ADK ran the tools: the record of calls and the final state come from its events and
        # session (the runner reads both from the trial's tool session).
        session.calls.extend(calls)
        if isinstance(state, dict):
            session.state = state
        return trajectory

    async def _run(self, body: dict[str, Any]) -> list[Any]:
        """``POST /run``: the invocation's events, as one JSON list."""
        response = await self._client.post("/run", json=body)
        if response.status_code != 200:
            await self._served_or_stop()
            raise _Failed(f"ADK /run answered HTTP {response.status_code}: {response.text[:300]}")
        events = response.json()
        if not isinstance(events, list):
            raise _Failed("ADK /run answered something that is not a list of events")
        return events

    async def _run_sse(self, body: dict[str, Any]) -> list[Any]:
        """``POST /run_sse`` with ``streaming``: the invocation's events, as server-sent events."""
        events: list[Any] = []
        async with aconnect_sse(
            self._client, "POST", "/run_sse", json={**body, "streaming": True}
        ) as source:
            if source.response.status_code != 200:
                text = (await source.response.aread()).decode("utf-8", "replace")
                await self._served_or_stop()
                raise _Failed(
                    f"ADK /run_sse answered HTTP {source.response.status_code}: {text[:300]}"
                )
            try:
                async for sse in source.aiter_sse():
                    if not sse.data.strip():
                        continue
                    event = json.loads(sse.data)
                    if isinstance(event, dict) and "error" in event and "content" not in event:
                        raise _Failed(f"ADK /run_sse reported an error: {event['error']}")
                    events.append(event)
            except SSEError as exc:
                raise _Failed(f"ADK /run_sse answered no event stream: {exc}") from None
        return events

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()


def _stream_option(spec: str) -> bool:
    """Whether an ``adk:`` spec asks for ``/run_sse`` (``?stream=sse``); any other query is refused."""
    query = spec.partition("?")[2]
    if not query:
        return False
    options = parse_qs(query, keep_blank_values=True)
    if options == {"stream": ["sse"]}:
        return True
    raise UsageError(
        "the only option of an adk: spec is ?stream=sse (events over ADK's /run_sse). "
        f"Got '{spec}'.",
        param="agent",
    )


class _Failed(Exception):
    """One trial's ADK exchange failed (a failed trajectory, not a stopped run)."""
