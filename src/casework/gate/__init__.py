"""The release gate: dataset checks, run results and thresholds decide a release.

- :func:`check_project`: every dataset check that needs no run (`casework dataset check`);
- :func:`gate_run`: gather the inputs of a run (and a baseline) from each stage and decide;
- :func:`evaluate_gate`: the pure decision, a list of named rules (:data:`RULES`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from casework._lazy import attach

if TYPE_CHECKING:
    from casework.gate._dataset_checks import check_project
    from casework.gate._decision import RULES, GateInputs, GateReport, GateRule, evaluate_gate
    from casework.gate._gather import gate_run

__all__ = [
    "RULES",
    "GateInputs",
    "GateReport",
    "GateRule",
    "check_project",
    "evaluate_gate",
    "gate_run",
]

if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {
            "casework.gate._dataset_checks": ("check_project",),
            "casework.gate._decision": (
                "RULES",
                "GateInputs",
                "GateReport",
                "GateRule",
                "evaluate_gate",
            ),
            "casework.gate._gather": ("gate_run",),
        },
    )
