"""The runner: agent adapters, fixture tools, runs of k trials, metrics and comparisons.

Entry points: :func:`run_agent` (`casework run`), :func:`load_run`, :func:`run_results`
(with :func:`corrected_pass` where a judge decided verdicts),
:func:`compare_runs`, :func:`retire_cases`; adapters via :func:`load_agent`.
"""

from casework.runner.adapters import Agent, load_agent
from casework.runner.analysis import (
    CompareResult,
    CorrectedPass,
    RetireResult,
    RunResults,
    compare_runs,
    retire_cases,
    run_results,
)
from casework.runner.environment import ToolEnvironment, tool
from casework.runner.fixtures import ToolError, Tools
from casework.runner.metrics import GroupMetrics, pass_at_k, pass_hat_k
from casework.runner.records import RunEnd, RunHeader, TrialRecord
from casework.runner.run import RunRequest, run_agent
from casework.runner.store import list_run_files, list_runs, load_run, log_path

__all__ = [
    "Agent",
    "CompareResult",
    "CorrectedPass",
    "GroupMetrics",
    "RetireResult",
    "RunEnd",
    "RunHeader",
    "RunRequest",
    "RunResults",
    "ToolEnvironment",
    "ToolError",
    "Tools",
    "TrialRecord",
    "compare_runs",
    "list_run_files",
    "list_runs",
    "load_agent",
    "load_run",
    "log_path",
    "pass_at_k",
    "pass_hat_k",
    "retire_cases",
    "run_agent",
    "run_results",
    "tool",
]
