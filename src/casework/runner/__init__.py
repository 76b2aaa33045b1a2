"""The runner: agent adapters, fixture tools, runs of k trials, metrics and comparisons.

Entry points: :func:`run_agent` (`casework run`), :func:`load_run`, :func:`run_results`,
:func:`compare_runs`, :func:`retire_cases`; adapters via :func:`load_agent`.
"""

from casework.runner.adapters import (
    AGENT_ENV_ALLOWED,
    TOOL_SERVER_ENV,
    Agent,
    AgentUnavailable,
    CmdAgent,
    HttpAgent,
    PythonAgent,
    agent_environment,
    load_agent,
)
from casework.runner.analysis import (
    CompareResult,
    RetireResult,
    RunResults,
    compare_runs,
    measures_same,
    retire_cases,
    run_results,
)
from casework.runner.compare import (
    CaseDelta,
    Comparison,
    Retirement,
    compare_tallies,
    mcnemar_statistic,
    retirement,
    sign_test,
)
from casework.runner.fixtures import ToolError, ToolReply, Tools, ToolSession, substitute_args
from casework.runner.metrics import (
    CaseTally,
    GroupMetrics,
    bootstrap_ci,
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_hat_k,
    stability,
    summarize,
)
from casework.runner.records import LoadedRun, RunEnd, RunHeader, TrialRecord, read_log, tallies
from casework.runner.redact import LogRedaction, redact_run_logs, redact_run_rows
from casework.runner.run import RunObserver, RunRequest, RunSummary, run_agent, trial_seed
from casework.runner.store import RunStore, list_runs, load_run, log_path
from casework.runner.toolserver import ToolServer

__all__ = [
    "AGENT_ENV_ALLOWED",
    "TOOL_SERVER_ENV",
    "Agent",
    "AgentUnavailable",
    "CaseDelta",
    "CaseTally",
    "CmdAgent",
    "CompareResult",
    "Comparison",
    "GroupMetrics",
    "HttpAgent",
    "LoadedRun",
    "LogRedaction",
    "PythonAgent",
    "RetireResult",
    "Retirement",
    "RunEnd",
    "RunHeader",
    "RunObserver",
    "RunRequest",
    "RunResults",
    "RunStore",
    "RunSummary",
    "ToolError",
    "ToolReply",
    "ToolServer",
    "ToolSession",
    "Tools",
    "TrialRecord",
    "agent_environment",
    "bootstrap_ci",
    "compare_runs",
    "compare_tallies",
    "list_runs",
    "load_agent",
    "load_run",
    "log_path",
    "mcnemar_statistic",
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "measures_same",
    "pass_at_k",
    "pass_hat_k",
    "read_log",
    "redact_run_logs",
    "redact_run_rows",
    "retire_cases",
    "retirement",
    "run_agent",
    "run_results",
    "sign_test",
    "stability",
    "substitute_args",
    "summarize",
    "tallies",
    "trial_seed",
]
