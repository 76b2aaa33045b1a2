"""AgentDojo (the `agentdojo` package as installed): suites in as cases, graded by its own functions.

Entry points: :func:`import_agentdojo` (`casework import agentdojo SUITE`), the tool environments
in :mod:`casework.interop.agentdojo.environment`, and the programmatic oracle
:func:`casework.interop.agentdojo.oracle.agentdojo_check`. Needs the `agentdojo` package.
"""

from casework.interop.agentdojo._import import (
    AgentDojoImportReport,
    AgentDojoOptions,
    import_agentdojo,
)
from casework.interop.agentdojo._suites import DEFAULT_VERSION, SUITES

__all__ = [
    "DEFAULT_VERSION",
    "SUITES",
    "AgentDojoImportReport",
    "AgentDojoOptions",
    "import_agentdojo",
]
