"""Processes the tests start that coverage does not measure again.

Under ``--cov`` pytest-cov leaves ``COV_CORE_*`` variables in the environment, and every Python
process started with them measures itself (its ``.pth`` hook starts coverage at interpreter
start-up). For a process that runs no casework code (a script driving Inspect AI, ADK or
OpenTelemetry's instrumentation, an example's generator) or only casework code the in-process
tests measure already (the start-up probes of the CLI), that is tracer overhead on start-up and
third-party code, for nothing. The tests that start such processes give them
:func:`unmeasured_env`. Processes that reach lines nothing else reaches keep the variables and
stay measured: the shard workers of ``casework run --workers``, the README's τ² example (the
report's τ² scoring note) and the dataset benchmark (a plain changed case in ``dataset diff``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: The prefix of the variables pytest-cov sets for the processes a measured test starts.
COVERAGE_VARS = "COV_CORE_"


def unmeasured_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (this process's environment by default) without pytest-cov's variables."""
    source = os.environ if env is None else env
    return {k: v for k, v in source.items() if not k.startswith(COVERAGE_VARS)}
