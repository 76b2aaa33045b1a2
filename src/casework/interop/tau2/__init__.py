"""The τ-bench family: τ²-bench domains in as cases, and τ-bench results in as a run.

Entry points: :func:`import_tau2` (`casework import tau2`) over :func:`read_tau2_domain` and the
pure :func:`cases_from_tau2`; :func:`read_tau_results` (the ``tau`` format of
`casework import run`: τ-bench's list of ``{task_id, reward, info, traj, trial}``).
"""

from casework.interop.tau2._domains import (
    TAU2_SPLITS,
    Tau2Domain,
    Tau2ImportReport,
    Tau2Notes,
    Tau2Options,
    Tau2Tool,
    cases_from_tau2,
    import_tau2,
    read_tau2_domain,
    tools_from_python,
)
from casework.interop.tau2._results import read_tau_results

__all__ = [
    "TAU2_SPLITS",
    "Tau2Domain",
    "Tau2ImportReport",
    "Tau2Notes",
    "Tau2Options",
    "Tau2Tool",
    "cases_from_tau2",
    "import_tau2",
    "read_tau2_domain",
    "read_tau_results",
    "tools_from_python",
]
