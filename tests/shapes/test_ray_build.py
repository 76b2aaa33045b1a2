"""`engine="ray"`: reading, scrubbing, embedding and assignment on Ray Data, the local shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from casework.project import Project
from casework.shapes import ShapeBuild, build_shapes
from casework.shapes._store import shapes_file
from tests.shapes.conftest import options

ray = pytest.importorskip("ray")

pytestmark = [
    # The worker's local Ray of two CPUs, shared with the other Ray tests (tests/ray_cluster.py).
    pytest.mark.usefixtures("ray_local"),
    # Ray's own modules warn about their own deprecated settings; those are not ours to fix.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray", "ignore::FutureWarning:ray"),
]


def test_sampled_ray_build_equals_local(
    corpus: tuple[Project, Path, dict[str, str]],
) -> None:
    project, traces, _ = corpus
    # The pipeline must spread over at least two worker processes.
    assert ray.cluster_resources()["CPU"] >= 2
    sampled = {"sample_size": 300, "batch_size": 30}
    local = build_shapes(project, [traces], "local", options(**sampled))
    remote = build_shapes(project, [traces], "remote", options(engine="ray", **sampled))
    assert local.sampling is not None and remote.sampling == local.sampling
    assert local.sampling.assigned > 9 * 30  # more batches than Ray Data's group of eight
    assert shapes_file(project, "remote").read_bytes() == shapes_file(project, "local").read_bytes()
    assert (remote.failing, remote.unshaped, remote.saturation) == (
        local.failing,
        local.unshaped,
        local.saturation,
    )


def test_ray_build_of_every_conversation_equals_local(
    corpus: tuple[Project, Path, dict[str, str]], full: ShapeBuild
) -> None:
    project, traces, _ = corpus
    remote = build_shapes(project, [traces], "remote-full", options(engine="ray"))
    assert remote.sampling is None
    assert shapes_file(project, "remote-full").read_bytes() == (
        shapes_file(project, "full").read_bytes()
    )
    assert remote.conversations == full.conversations
