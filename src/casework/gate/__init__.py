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
    from casework.gate._decision import (
        RULES,
        GateContext,
        GateFinding,
        GateInputs,
        GateReason,
        GateReport,
        GateRule,
        Ruling,
        evaluate_gate,
        pass_rate,
        rule_dataset_findings,
        rule_gating_slices_present,
        rule_imported_run,
        rule_judge_admissible,
        rule_labeller_agreement,
        rule_pass_rate,
        rule_regression,
        rule_released_version,
        rule_run_finished,
        rule_undetermined,
    )
    from casework.gate._gather import (
        dataset_findings,
        gate_inputs,
        gate_run,
        leakage_findings,
        releases_of,
        slice_kappas,
    )
    from casework.gate._quota import UnsatisfiableShare, unsatisfiable_shares

__all__ = [
    "RULES",
    "GateContext",
    "GateFinding",
    "GateInputs",
    "GateReason",
    "GateReport",
    "GateRule",
    "Ruling",
    "UnsatisfiableShare",
    "check_project",
    "dataset_findings",
    "evaluate_gate",
    "gate_inputs",
    "gate_run",
    "leakage_findings",
    "pass_rate",
    "releases_of",
    "rule_dataset_findings",
    "rule_gating_slices_present",
    "rule_imported_run",
    "rule_judge_admissible",
    "rule_labeller_agreement",
    "rule_pass_rate",
    "rule_regression",
    "rule_released_version",
    "rule_run_finished",
    "rule_undetermined",
    "slice_kappas",
    "unsatisfiable_shares",
]

if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {
            "casework.gate._dataset_checks": ("check_project",),
            "casework.gate._decision": (
                "RULES",
                "GateContext",
                "GateFinding",
                "GateInputs",
                "GateReason",
                "GateReport",
                "GateRule",
                "Ruling",
                "evaluate_gate",
                "pass_rate",
                "rule_dataset_findings",
                "rule_gating_slices_present",
                "rule_imported_run",
                "rule_judge_admissible",
                "rule_labeller_agreement",
                "rule_pass_rate",
                "rule_regression",
                "rule_released_version",
                "rule_run_finished",
                "rule_undetermined",
            ),
            "casework.gate._gather": (
                "dataset_findings",
                "gate_inputs",
                "gate_run",
                "leakage_findings",
                "releases_of",
                "slice_kappas",
            ),
            "casework.gate._quota": ("UnsatisfiableShare", "unsatisfiable_shares"),
        },
    )
