"""The runner: agent adapters, fixture tools, runs of k trials, metrics and comparisons.

Entry points: :func:`run_agent` (`casework run`), :func:`load_run`, :func:`run_results`,
:func:`compare_runs`, :func:`retire_cases`; adapters via :func:`load_agent`.
"""

from casework.grading.trajectory import (
    AgentInput,
    AgentTool,
    Message,
    Trajectory,
    TrajectoryToolCall,
    Usage,
)
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
from casework.runner.compare import (
    CaseDelta,
    Comparison,
    Retirement,
    compare_tallies,
    retirement,
    sign_test,
)
from casework.runner.fixtures import ToolError, ToolReply, Tools, ToolSession
from casework.runner.metrics import (
    CaseTally,
    GroupMetrics,
    bootstrap_ci,
    pass_at_k,
    pass_hat_k,
    stability,
    summarize,
)
from casework.runner.records import LoadedRun, RunEnd, RunHeader, TrialRecord, read_log, tallies
from casework.runner.run import RunObserver, RunRequest, RunSummary, run_agent, trial_seed
from casework.runner.store import RunStore, list_runs, load_run, log_path
from casework.runner.toolserver import ToolServer

__all__ = [
    "AGENT_ENV_ALLOWED",
    "TOOL_SERVER_ENV",
    "Agent",
    "AgentInput",
    "AgentTool",
    "AgentUnavailable",
    "CaseDelta",
    "CaseTally",
    "CmdAgent",
    "Comparison",
    "GroupMetrics",
    "HttpAgent",
    "LoadedRun",
    "Message",
    "PythonAgent",
    "Retirement",
    "RunEnd",
    "RunHeader",
    "RunObserver",
    "RunRequest",
    "RunStore",
    "RunSummary",
    "ToolError",
    "ToolReply",
    "ToolServer",
    "ToolSession",
    "Tools",
    "Trajectory",
    "TrajectoryToolCall",
    "TrialRecord",
    "Usage",
    "agent_environment",
    "bootstrap_ci",
    "compare_tallies",
    "list_runs",
    "load_agent",
    "load_run",
    "log_path",
    "pass_at_k",
    "pass_hat_k",
    "read_log",
    "retirement",
    "run_agent",
    "sign_test",
    "stability",
    "summarize",
    "tallies",
    "trial_seed",
]
