"""OpenTelemetry: a run's verdicts as OTLP/JSON evaluation events, and posting them over OTLP/HTTP.

Entry points: :func:`otlp_logs` (pure: the ``gen_ai.evaluation.result`` events of a run) and
:func:`otlp_target` / :func:`post_otlp` (an OTLP/HTTP endpoint, its credentials never shown).
"""

__all__: list[str] = []
