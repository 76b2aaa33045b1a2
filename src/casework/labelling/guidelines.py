"""Versioned labelling guidelines: `guidelines/<slice>.md` with `version: <slice>-gN` front matter.

Entry points: :func:`read_guideline`, :func:`list_guidelines`, :func:`current_versions` and
:func:`bump_guideline` (gN -> gN+1 plus a changelog entry, in one atomic write of the file).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from casework.atomic import atomic_write_text
from casework.decoding import decode_utf8
from casework.errors import ConfigError, InputError, InputErrors, Problem, UsageError
from casework.names import inside, name_problem
from casework.project import Project

__all__ = [
    "CHANGELOG_HEADING",
    "Bump",
    "Guideline",
    "bump_guideline",
    "bump_text",
    "current_versions",
    "guideline_path",
    "list_guidelines",
    "parse_guideline",
    "read_guideline",
]

CHANGELOG_HEADING = "## Changelog"
_KEY_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True)
class Guideline:
    """One slice's guideline file.

    Attributes:
        slice: The slice it governs (the file's stem).
        version: ``<slice>-gN``.
        number: ``N``.
        path: The file.
        text: The whole file.
        changelog: Changelog entries, newest first (lines of the ``## Changelog`` section).
    """

    slice: str
    version: str
    number: int
    path: Path
    text: str
    changelog: tuple[str, ...]


@dataclass(frozen=True)
class Bump:
    """A guideline version change.

    Attributes:
        slice: The slice.
        old: Version before.
        new: Version after.
        path: The rewritten file.
        entry: The changelog line written.
    """

    slice: str
    old: str
    new: str
    path: Path
    entry: str


def guideline_path(project: Project, slice_name: str) -> Path:
    """Where a slice's guideline lives (it may not exist)."""
    if name_problem(slice_name) is not None:
        raise UsageError(
            f"'{slice_name}': a slice name holds letters, digits and ._- and starts with a letter or digit."
        )
    folder = project.path(project.config.paths.guidelines)
    return inside(folder, folder / f"{slice_name}.md", f"slice '{slice_name}'")


def _front_matter(text: str, shown: str) -> tuple[dict[str, tuple[int, str]], int]:
    """Keys of the front matter with their (0-based line index, value), and the closing line index."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise InputError(
            shown,
            1,
            "version",
            "a guideline starts with front matter: a '---' line, 'version: <slice>-g1', a '---' line",
            lines[0] if lines else "",
        )
    keys: dict[str, tuple[int, str]] = {}
    for index in range(1, len(lines)):
        line = lines[index]
        if line.strip() == "---":
            return keys, index
        match = _KEY_RE.match(line)
        if match:
            keys[match.group(1)] = (index, match.group(2).strip().strip("'\""))
    raise InputError(shown, 1, None, "front matter is not closed by a '---' line")


def _changelog(text: str) -> tuple[str, ...]:
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == CHANGELOG_HEADING)
    except StopIteration:
        return ()
    entries = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("- "):
            entries.append(line[2:].strip())
    return tuple(entries)


def parse_guideline(text: str, slice_name: str, path: Path, shown: str) -> Guideline:
    """Read a guideline's version from its text.

    Raises:
        InputError: No front matter, no ``version``, or a version not shaped ``<slice>-gN``.
    """
    keys, _ = _front_matter(text, shown)
    if "version" not in keys:
        raise InputError(
            shown, 1, "version", f"front matter needs 'version: {slice_name}-g1'", has_got=False
        )
    index, version = keys["version"]
    match = re.fullmatch(re.escape(slice_name) + r"-g([1-9][0-9]*)", version)
    if not match:
        raise InputError(
            shown, index + 1, "version", f"must be '{slice_name}-gN' with N = 1, 2, …", version
        )
    return Guideline(slice_name, version, int(match.group(1)), path, text, _changelog(text))


def _missing(project: Project, slice_name: str, path: Path) -> Problem:
    return Problem(
        project.relative(path),
        None,
        None,
        f"no guideline for slice '{slice_name}'. Every slice needs one before labelling: "
        f"a Markdown file starting with '---', 'version: {slice_name}-g1', '---'",
    )


def read_guideline(project: Project, slice_name: str) -> Guideline:
    """The guideline of ``slice_name``.

    Raises:
        ConfigError: The file does not exist (the message says what to write).
        InputError: The file has no valid version.
    """
    path = guideline_path(project, slice_name)
    if not path.is_file():
        p = _missing(project, slice_name, path)
        raise ConfigError(p.path, p.line, p.field, p.message, p.got, has_got=p.has_got)
    shown = project.relative(path)
    return parse_guideline(decode_utf8(path.read_bytes(), shown), slice_name, path, shown)


def list_guidelines(project: Project) -> list[Guideline]:
    """Every guideline file of the project, by slice.

    Raises:
        InputErrors: Some files have no valid version (all reported).
    """
    folder = project.path(project.config.paths.guidelines)
    if not folder.is_dir():
        return []
    found: list[Guideline] = []
    problems: list[Problem] = []
    for path in sorted(folder.glob("*.md")):
        if name_problem(path.stem) is not None or path.name.upper() == "README.MD":
            continue
        try:
            found.append(read_guideline(project, path.stem))
        except InputError as exc:
            problems.extend(exc.problems)
    InputErrors.raise_if_any(problems)
    return found


def current_versions(project: Project, slices: Iterable[str]) -> dict[str, str]:
    """The current guideline version of each slice.

    Raises:
        InputErrors: Some slices have no guideline or an invalid one (every slice reported).
    """
    out: dict[str, str] = {}
    problems: list[Problem] = []
    for slice_name in sorted(set(slices)):
        path = guideline_path(project, slice_name)
        if not path.is_file():
            problems.append(_missing(project, slice_name, path))
            continue
        try:
            out[slice_name] = read_guideline(project, slice_name).version
        except InputError as exc:
            problems.extend(exc.problems)
    InputErrors.raise_if_any(problems)
    return out


def bump_text(
    text: str,
    guideline: Guideline,
    message: str,
    today: date,
    *,
    relabel_where: str | None = None,
) -> tuple[str, str]:
    """The guideline text with its version raised by one and a changelog entry added.

    Only the ``version:`` line changes in the front matter, and with ``relabel_where`` a
    ``relabel_where_gN`` line (the JSON-quoted selector of the new version) follows it; the entry
    goes first under ``## Changelog`` (the section is appended when missing).

    Returns:
        The new text and the changelog entry.
    """
    new_version = f"{guideline.slice}-g{guideline.number + 1}"
    keys, _ = _front_matter(text, str(guideline.path))
    index, _ = keys["version"]
    lines = text.splitlines()
    prefix = lines[index][: lines[index].index(":") + 1]
    lines[index] = f"{prefix} {new_version}"
    entry = f"{new_version} ({today.isoformat()}): {message} (was {guideline.version})"
    if relabel_where is not None:
        key = f"relabel_where_g{guideline.number + 1}"
        lines.insert(index + 1, f"{key}: {json.dumps(relabel_where, ensure_ascii=False)}")
        entry += f"; only the rows {key} selects go back"
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == CHANGELOG_HEADING)
    except StopIteration:
        while lines and not lines[-1].strip():
            lines.pop()
        lines += ["", CHANGELOG_HEADING, "", f"- {entry}"]
    else:
        at = start + 1
        while at < len(lines) and not lines[at].strip():
            at += 1
        lines[start + 1 : at] = ["", f"- {entry}"]
    return "\n".join(lines) + "\n", entry


def bump_guideline(
    project: Project,
    slice_name: str,
    message: str,
    *,
    today: date | None = None,
    relabel_where: str | None = None,
) -> Bump:
    """Raise a slice's guideline version (gN -> gN+1) and record why, in one atomic write.

    Rows labelled under the old version keep it on their label: `casework dataset cases DATASET
    --labelled-under OLD` lists them and `casework label assign DATASET --relabel-under OLD` sends
    them back to labelling: all of them, or with ``relabel_where`` (a JMESPath selector over the
    case, stored in the front matter with the new version) only the rows it selects.

    Raises:
        UsageError: Empty or multi-line message.
        ConfigError: No guideline for the slice.
        InputError: The guideline has no valid version.
    """
    why = message.strip()
    if not why:
        raise UsageError("guideline bump: a message is required (-m WHY): say what rule changed.")
    if "\n" in why:
        raise UsageError("guideline bump: the message is one line (it becomes a changelog entry).")
    if relabel_where is not None:
        # Imported here: relabel_rule reaches numpy (through the agreement statistics' version
        # order), and light commands read guidelines.
        from casework.labelling.relabel_rule import compile_selector

        compile_selector(relabel_where)
    guideline = read_guideline(project, slice_name)
    text, entry = bump_text(
        guideline.text,
        guideline,
        why,
        today or datetime.now(UTC).date(),
        relabel_where=relabel_where,
    )
    atomic_write_text(guideline.path, text)
    return Bump(
        slice_name,
        guideline.version,
        f"{slice_name}-g{guideline.number + 1}",
        guideline.path,
        entry,
    )
