"""The τ-bench family: τ²-bench domains in as cases, and τ-bench results in as a run.

Entry points: :func:`import_tau2` (`casework import tau2`) over :func:`read_tau2_domain` and the
pure :func:`cases_from_tau2`; :func:`read_tau_results` (the ``tau`` format of
`casework import run`: τ-bench's list of ``{task_id, reward, info, traj, trial}``).
"""

from casework.interop.tau2._domains import (
    TAU2_SPLITS,
    Tau2ImportReport,
    import_tau2,
    read_tau2_domain,
)
from casework.interop.tau2._results import read_tau_results
from casework.interop.tau2._tasks import Tau2Domain, Tau2Notes, Tau2Options, cases_from_tau2
from casework.interop.tau2._tools import Tau2Tool, tools_from_python

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
