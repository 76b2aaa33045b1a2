"""Shape sets on disk: `shapes/<name>.jsonl` (one shape a line) and `shapes/<name>.versions.jsonl`.

Like a dataset release: the version is the sha256 of the shape file's bytes; a build whose shapes
equal the latest version's adds no version. Both files are written atomically, shapes first.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from casework.atomic import atomic_write_text
from casework.dataset.jsonl import canonical_line, read_records
from casework.errors import Hint, InputError, UsageError
from casework.names import check_name
from casework.project import Project
from casework.shapes._model import Shape, ShapeVersion

VERSIONS_SUFFIX = ".versions.jsonl"


@dataclass(frozen=True)
class ShapeSet:
    """A saved shape set: its shapes and its version log (oldest first).

    Attributes:
        name: Shape set name (`refunds`).
        shapes: Shapes, largest first.
        versions: Every build that changed the set, oldest first.
    """

    name: str
    shapes: list[Shape]
    versions: list[ShapeVersion]

    @property
    def version(self) -> ShapeVersion:
        """The latest version (the one ``shapes`` holds)."""
        return self.versions[-1]

    def shape(self, shape_id: str) -> Shape:
        """The shape with this id (`shape-03`).

        Raises:
            UsageError: No shape has that id.
        """
        for s in self.shapes:
            if s.id == shape_id:
                return s
        known = ", ".join(s.id for s in self.shapes) or "none"
        raise UsageError(
            f"shape set '{self.name}' has no shape '{shape_id}' (it has {known}).", param="shape"
        )


def shapes_dir(project: Project) -> Path:
    """The folder of shape sets (`[paths] shapes`, default `shapes/`)."""
    return project.path(project.config.paths.shapes)


def shapes_file(project: Project, name: str) -> Path:
    """`shapes/<name>.jsonl` (it may not exist)."""
    check_name(name, "shape set name")
    return shapes_dir(project) / f"{name}.jsonl"


def shape_set_names(project: Project) -> list[str]:
    """Shape sets present: every `shapes/<name>.jsonl` with a version log beside it."""
    folder = shapes_dir(project)
    if not folder.is_dir():
        return []
    return sorted(
        p.name.removesuffix(".jsonl")
        for p in folder.glob("*.jsonl")
        if not p.name.endswith(VERSIONS_SUFFIX)
        and (folder / (p.name.removesuffix(".jsonl") + VERSIONS_SUFFIX)).exists()
    )


def load_shapes(project: Project, name: str, *, param: str = "name") -> ShapeSet:
    """Read a saved shape set.

    Raises:
        UsageError: No shape set has that name (``param`` names the parameter at fault).
        InputErrors: A line of either file is malformed, or the shape file is not the content
            of the latest version (edited by hand).
    """
    path = shapes_file(project, name)
    log = path.with_name(name + VERSIONS_SUFFIX)
    if not path.exists() or not log.exists():
        known = ", ".join(shape_set_names(project)) or "none yet"
        raise UsageError(f"no shape set '{name}' (known: {known}).", param=param).suggest(
            Hint("shapes build", why="to build one")
        )
    shown = project.relative(path)
    shapes = read_records(path, Shape, shown=shown, key=lambda s: s.id).records
    versions = read_records(log, ShapeVersion, shown=project.relative(log)).records
    if not versions:
        raise UsageError(f"{project.relative(log)}: the version log is empty.", param=param)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != versions[-1].hash:
        raise InputError(
            shown,
            None,
            None,
            f"content hash sha256:{digest[:12]} is not that of the latest version "
            f"({versions[-1].hash[:12]}); the file was changed by hand",
        ).suggest(Hint("shapes build", why="to rebuild it"))
    return ShapeSet(name, shapes, versions)


def shapes_content(shapes: list[Shape]) -> str:
    """The shape file's text: one canonical JSON line per shape."""
    return "".join(canonical_line(s) + "\n" for s in shapes)


def save_shapes(project: Project, name: str, shapes: list[Shape], version: ShapeVersion) -> None:
    """Write the shape file, then append ``version`` to the log (each atomically)."""
    path = shapes_file(project, name)
    log = path.with_name(name + VERSIONS_SUFFIX)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = log.read_text(encoding="utf-8") if log.exists() else ""
    atomic_write_text(path, shapes_content(shapes))
    atomic_write_text(log, old + canonical_line(version) + "\n")


def read_versions(project: Project, name: str) -> list[ShapeVersion]:
    """The version log of a shape set (empty when there is none)."""
    log = shapes_file(project, name).with_name(name + VERSIONS_SUFFIX)
    return read_records(log, ShapeVersion, missing_ok=True).records
