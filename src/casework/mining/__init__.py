"""Mining production traces: importers, failure signals and draft situations.

Entry point: :func:`mine` (the `casework mine` command). Importers: the generic JSONL/JSON format
(:func:`read_generic`, ``--map``), OpenTelemetry GenAI spans and OpenInference spans (OTLP JSON).
"""

from casework.mining.conversation import RawConversation
from casework.mining.drafts import draft_case
from casework.mining.mine import FORMATS, MineOptions, MineReport, mine, read_conversations
from casework.mining.signals import failure_signals

__all__ = [
    "FORMATS",
    "MineOptions",
    "MineReport",
    "RawConversation",
    "draft_case",
    "failure_signals",
    "mine",
    "read_conversations",
]
