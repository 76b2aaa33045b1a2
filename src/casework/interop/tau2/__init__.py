"""The τ-bench family: τ²-bench domains in as cases, and τ-bench and τ² results in as runs.

Entry points: :func:`import_tau2` (`casework import tau2`) over :func:`read_tau2_domain` and the
pure :func:`cases_from_tau2`; :func:`read_tau_results` (the ``tau`` format of
`casework import run`: τ-bench's list of ``{task_id, reward, info, traj, trial}``) and
:func:`read_tau2_results` (the ``tau2`` format: τ²'s saved ``Results``, the simulated user kept).
"""

from casework.interop.tau2._domains import import_tau2, read_tau2_domain
from casework.interop.tau2._tasks import Tau2Options, cases_from_tau2

__all__ = [
    "Tau2Options",
    "cases_from_tau2",
    "import_tau2",
    "read_tau2_domain",
]
