"""An LLM-backed version of the example agent: any OpenAI-compatible chat model with tool calling.

Runs only when a model endpoint is configured, through the environment:

- ``REFUNDS_AGENT_MODEL`` (required), e.g. ``gpt-4o-mini`` or ``qwen2.5:7b-instruct``;
- ``REFUNDS_AGENT_BASE_URL`` for a local server (Ollama, vLLM, LM Studio, llama.cpp), else api.openai.com;
- ``REFUNDS_AGENT_API_KEY`` (falls back to ``OPENAI_API_KEY``; a local server needs none).

Spec: ``python:agents.llm_agent:agent`` (``casework run refunds --agent python:agents.llm_agent:agent``).
The model reports its outcome by calling the pseudo-tool ``final_answer``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from casework.runner import Tools
from casework.schema import AgentInput, Message, Trajectory, Usage

MAX_STEPS = 12
PROMPT = Path(__file__).resolve().parent.parent / "agent" / "prompt.md"
FINAL = {
    "type": "function",
    "function": {
        "name": "final_answer",
        "description": "Send your final reply to the customer and say which outcome you took.",
        "parameters": {
            "type": "object",
            "properties": {
                "reply": {"type": "string", "description": "The message the customer reads."},
                "outcome": {"type": "string", "enum": ["resolve", "clarify", "refuse", "escalate"]},
            },
            "required": ["reply", "outcome"],
        },
    },
}


class NotConfigured(RuntimeError):
    """No model endpoint is configured for the LLM agent."""


def _client() -> tuple[Any, str]:
    model = os.environ.get("REFUNDS_AGENT_MODEL")
    if not model:
        raise NotConfigured(
            "set REFUNDS_AGENT_MODEL (and REFUNDS_AGENT_BASE_URL for a local server) to run the LLM agent"
        )
    from openai import OpenAI

    base_url = os.environ.get("REFUNDS_AGENT_BASE_URL")
    key = (
        os.environ.get("REFUNDS_AGENT_API_KEY")
        or os.environ.get("OPENAI_API_KEY")
        or ("none" if base_url else None)
    )
    return OpenAI(base_url=base_url, api_key=key), model


def _messages(request: AgentInput) -> list[dict[str, Any]]:
    system = (
        PROMPT.read_text(encoding="utf-8")
        if PROMPT.is_file()
        else "You are a careful customer-support agent."
    )
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for turn in request.turns:
        if turn.role == "tool":
            continue
        if turn.tool_calls:
            calls = "; ".join(
                f"{c.name}({json.dumps(c.arguments)}) -> {json.dumps(c.result)}"
                for c in turn.tool_calls
            )
            out.append(
                {
                    "role": "assistant",
                    "content": f"{turn.content}\n[earlier tool calls: {calls}]".strip(),
                }
            )
        else:
            out.append({"role": turn.role, "content": turn.content})
    return out


def agent(request: AgentInput, tools: Tools) -> Trajectory:
    """Tool-calling loop: call tools until the model calls ``final_answer``."""
    client, model = _client()
    messages = _messages(request)
    schema = [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters or {"type": "object"},
            },
        }
        for t in request.tools
    ]
    usage = Usage()
    record: list[Message] = []
    for _ in range(MAX_STEPS):
        response = client.chat.completions.create(
            model=model,
            messages=messages,
            tools=[*schema, FINAL],
            seed=request.seed,
            temperature=0.7,
        )
        if response.usage is not None:
            usage = Usage(
                input_tokens=usage.input_tokens + response.usage.prompt_tokens,
                output_tokens=usage.output_tokens + response.usage.completion_tokens,
            )
        choice = response.choices[0].message
        calls = choice.tool_calls or []
        if not calls:
            record.append(Message(role="assistant", content=choice.content or ""))
            return Trajectory(
                messages=record,
                final_reply=choice.content or "",
                usage=usage,
                agent_version=f"llm:{model}",
            )
        messages.append(
            {
                "role": "assistant",
                "content": choice.content,
                "tool_calls": [c.model_dump() for c in calls],
            }
        )
        for call in calls:
            args = json.loads(call.function.arguments or "{}")
            if call.function.name == "final_answer":
                record.append(Message(role="assistant", content=str(args.get("reply", ""))))
                outcome = args.get("outcome")
                return Trajectory(
                    messages=record,
                    final_reply=str(args.get("reply", "")),
                    outcome=outcome
                    if outcome in ("resolve", "clarify", "refuse", "escalate")
                    else None,
                    usage=usage,
                    agent_version=f"llm:{model}",
                )
            reply = tools.try_call(call.function.name, args)
            content = json.dumps(reply.as_json())
            record.append(Message(role="tool", content=f"{call.function.name}: {content}"))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return Trajectory(
        messages=record,
        final_reply="",
        usage=usage,
        agent_version=f"llm:{model}",
        error="no final answer after 12 steps",
    )
