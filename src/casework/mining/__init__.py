"""Mining production traces: importers, failure signals and draft situations.

Entry point: :func:`mine` (the `casework mine` command). Importers: the generic JSONL/JSON format
(:func:`read_generic`, ``--map``), OpenTelemetry GenAI spans and OpenInference spans (OTLP JSON).
"""

from casework.mining.conversation import RawConversation, RawMessage, RawToolCall
from casework.mining.drafts import DraftOptions, ScrubLeak, draft_case, retain_until
from casework.mining.generic import FieldMap, parse_mapping, read_generic
from casework.mining.mine import (
    FORMATS,
    MineOptions,
    MineReport,
    TraceFormat,
    detect_format,
    mine,
    read_conversations,
    trace_files,
)
from casework.mining.openinference import conversations_from_openinference
from casework.mining.otel_genai import conversations_from_genai
from casework.mining.otlp import Span, normalise_id, read_spans
from casework.mining.signals import SIGNALS, failure_signals, is_negative_feedback

__all__ = [
    "FORMATS",
    "SIGNALS",
    "DraftOptions",
    "FieldMap",
    "MineOptions",
    "MineReport",
    "RawConversation",
    "RawMessage",
    "RawToolCall",
    "ScrubLeak",
    "Span",
    "TraceFormat",
    "conversations_from_genai",
    "conversations_from_openinference",
    "detect_format",
    "draft_case",
    "failure_signals",
    "is_negative_feedback",
    "mine",
    "normalise_id",
    "parse_mapping",
    "read_conversations",
    "read_generic",
    "read_spans",
    "retain_until",
    "trace_files",
]
