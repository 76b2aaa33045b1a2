"""One local Ray per pytest worker, shared by every test that asks for it.

Starting a local Ray (its GCS, raylet and worker processes) costs seconds; each Ray test module
used to start and stop its own. The tests that use Ray form one xdist group (see
:mod:`tests.xdist_workers`), so they run one after another on one worker and share one Ray,
which stops as soon as the next test does not need it: no Ray process outlives the group.
"""

from __future__ import annotations

from typing import Any

#: The fixture that gives a test the shared Ray (its name marks the xdist group, too).
FIXTURE = "ray_local"

#: Worker processes of the local Ray: at least two, so the tests see work spread over processes.
CPUS = 2


class LocalRay:
    """Starts a local Ray of :data:`CPUS` CPUs on first use and stops it on request."""

    def __init__(self) -> None:
        self._started = False

    def get(self) -> Any:
        """The ``ray`` module, with a local Ray running (started here, or by someone else)."""
        import ray
        import ray.data

        if not ray.is_initialized():
            ray.init(
                num_cpus=CPUS, include_dashboard=False, log_to_driver=False, configure_logging=False
            )
            self._started = True
        # casework's commands report their own progress; Ray Data's bars would only add noise.
        ray.data.DataContext.get_current().enable_progress_bars = False
        return ray

    def stop(self) -> None:
        """Shut down the Ray started by :meth:`get` (one started elsewhere is left alone)."""
        if not self._started:
            return
        import ray

        ray.shutdown()
        self._started = False
