"""OpenTelemetry: a run's verdicts as OTLP/JSON evaluation events, and posting them over OTLP/HTTP.

Entry points: :func:`otlp_logs` (pure: the ``gen_ai.evaluation.result`` events of a run) and
:func:`otlp_target` / :func:`post_otlp` (an OTLP/HTTP endpoint, its credentials never shown).
"""

from casework.interop.otel._http import HEADERS_VARIABLES, OtlpTarget, otlp_target, post_otlp
from casework.interop.otel._logs import EVALUATION_EVENT, otlp_logs

__all__ = [
    "EVALUATION_EVENT",
    "HEADERS_VARIABLES",
    "OtlpTarget",
    "otlp_logs",
    "otlp_target",
    "post_otlp",
]
