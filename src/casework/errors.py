"""Typed errors: every failure casework reports carries where it happened and what it got.

Library code raises these; the CLI turns them into one message on stderr in exactly one place
(:func:`casework.cli.main`). Message shape, everywhere::

    datasets/refunds/cases.jsonl:12: label.outcome: Input should be 'resolve', ... Got 'resolved'.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Self

__all__ = [
    "MAX_REPORTED",
    "CaseworkError",
    "ConfigError",
    "DecisionConflict",
    "Described",
    "GateFailed",
    "Hint",
    "InputError",
    "InputErrors",
    "Problem",
    "ReleaseConflict",
    "UsageError",
    "VersionNotFound",
    "WorkbenchError",
    "format_got",
]

#: How many bad lines one report lists before it counts the rest.
MAX_REPORTED = 50


class Described(str):
    """A description of an offending value (`a JSON list of 3 items`), shown after ``Got`` unquoted.

    Readers of files that hold customer data quote this instead of the value itself.
    """

    __slots__ = ()


#: Control characters shown escaped in ``Got …``: a raw NUL or escape sequence in a message
#: corrupts the terminal or hides the rest of the line.
_CONTROL_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)} | {
    ord("\n"): "\\n",
    ord("\t"): "\\t",
    ord("\r"): "\\r",
}


def format_got(value: Any, limit: int = 80) -> str:
    """Render an offending value for ``Got …``: strings quoted as they are, other values as JSON.

    Bytes that are not UTF-8 are shown with backslash escapes; long values are shortened; a
    :class:`Described` value is shown as it is.
    """
    if isinstance(value, Described):
        return str(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="backslashreplace")
    if isinstance(value, str):
        text = "'" + value.translate(_CONTROL_ESCAPES) + "'"
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


#: How a client spells a parameter name (the CLI: its flag, ``agent`` -> ``--agent``).
Speller = Callable[[str], str]


@dataclass(frozen=True)
class Hint:
    """A next step a message suggests, as data: an action and its arguments.

    The library never writes a command line into a message; it attaches a hint, which the CLI
    renders as the command to run (``casework review sync refunds``) and the web app as a link to
    the page that does the same, where it has one.

    Attributes:
        action: The action, named as its command group and verb (``review sync``, ``db upgrade``).
        args: Positional arguments (a dataset name).
        params: Named parameters and their values (``("kind", "leakage-pair")``); a client spells
            each name its own way (the CLI: ``--kind``).
        why: What the step is for, a few words (``to withdraw the item``), or empty.
    """

    action: str
    args: tuple[str, ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    why: str = ""

    def command_line(self) -> str:
        """The step as a command line: ``casework review list --kind leakage-pair``."""
        words = ["casework", self.action, *self.args]
        for name, value in self.params:
            words += [f"--{name.replace('_', '-')}", value]
        return " ".join(words)


#: How a client shows a hint (the CLI: the command line; the web app: a link's text).
HintRenderer = Callable[[Hint], str]


def hint_as_command(hint: Hint) -> str:
    """A hint as the CLI shows it: its command line in backticks."""
    return f"`{hint.command_line()}`"


def next_step(hint: Hint, render: HintRenderer = hint_as_command) -> str:
    """A hint as the sentence that follows a message (``Next: `casework db upgrade`.``)."""
    return f"Next: {render(hint)}{' ' + hint.why if hint.why else ''}."


def _as_is(name: str) -> str:
    return f"`{name}`"


class CaseworkError(Exception):
    """Base class of every error casework raises on purpose (exit code 1 in the CLI).

    Library messages never spell a client's flags: a parameter is named in backticks
    (`` `resume` ``) and listed in ``mentions``; :meth:`render` lets a client spell it its own way.
    """

    exit_code = 1
    #: Parameters the message names in backticks.
    mentions: tuple[str, ...] = ()

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.hints: list[tuple[str, tuple[str, ...]]] = []
        #: Next steps the message suggests, as data (rendered after the message and the hints).
        self.next_steps: list[Hint] = []

    def suggest(self, hint: Hint) -> Self:
        """Attach a next step (returns the error, so ``raise Err(...).suggest(Hint(...))`` reads)."""
        self.next_steps.append(hint)
        return self

    def add_hint(self, text: str, *, mentions: Sequence[str] = ()) -> None:
        """Append a sentence of advice (parameters in ``mentions`` as for the message)."""
        self.hints.append((text, tuple(mentions)))

    def _body(self, spell: Speller) -> str:
        return _spell(super().__str__(), self.mentions, spell)

    def render(self, spell: Speller = _as_is, hint: HintRenderer = hint_as_command) -> str:
        """The message with every mentioned parameter spelled by ``spell``, then the hints.

        Each next step is shown as ``hint`` renders it (by default its command line).
        """
        parts = [self._body(spell)]
        parts += [_spell(text, names, spell) for text, names in getattr(self, "hints", [])]
        parts += [next_step(step, hint) for step in getattr(self, "next_steps", [])]
        return " ".join(p for p in parts if p)

    def __str__(self) -> str:
        return self.render()


def _spell(text: str, names: Iterable[str], spell: Speller) -> str:
    for name in names:
        text = text.replace(f"`{name}`", spell(name))
    return text


class UsageError(CaseworkError):
    """The library was called wrongly (exit code 2 in the CLI).

    Args:
        message: What is wrong, as a sentence; other parameters it names are written in backticks.
        param: The parameter at fault, if one is (the message then reads ``param: message``).
        mentions: Parameters the message names in backticks, besides ``param``.
    """

    exit_code = 2

    def __init__(
        self, message: str, *, param: str | None = None, mentions: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.param = param
        self.mentions = tuple(mentions)

    def _body(self, spell: Speller) -> str:
        body = super()._body(spell)
        return f"{spell(self.param).strip('`')}: {body}" if self.param else body


@dataclass(frozen=True)
class Problem:
    """One located problem: ``path:line: field: message. Got …``.

    Attributes:
        path: The file, as the user would name it (relative where possible).
        line: 1-based line number, or ``None`` for a whole-file problem.
        field: Dotted field path (``label.outcome``), or ``None``.
        message: What is wrong, as a sentence without final period.
        got: The offending value; ``None`` means no ``Got`` part (use ``has_got``).
        has_got: Whether to print the ``Got …`` part.
    """

    path: str
    line: int | None
    field: str | None
    message: str
    got: Any = None
    has_got: bool = False

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        parts = [where]
        if self.field:
            parts.append(self.field)
        text = ": ".join(parts) + ": " + self.message.rstrip(".") + "."
        if self.has_got:
            text += f" Got {format_got(self.got)}."
        return text


class InputError(CaseworkError, ValueError):
    """Bad input at a known place.

    ``problems`` lists every located problem (one for an error raised directly; several for
    :class:`InputErrors`); ``problem`` is the first.

    Args:
        path: File the input came from.
        line: 1-based line, or ``None``.
        field: Dotted field path, or ``None``.
        message: What is wrong.
        got: The offending value (printed as ``Got …``) when ``has_got`` is true.
        has_got: Whether ``got`` is meaningful; defaults to ``got is not None``.
    """

    def __init__(
        self,
        path: str,
        line: int | None,
        field: str | None,
        message: str,
        got: Any = None,
        *,
        has_got: bool | None = None,
    ) -> None:
        problem = Problem(
            path, line, field, message, got, got is not None if has_got is None else has_got
        )
        self.problems = [problem]
        super().__init__(str(problem))

    @property
    def problem(self) -> Problem:
        """The first (for a single error, the only) problem."""
        return self.problems[0]

    @property
    def path(self) -> str:
        """File the input came from."""
        return self.problem.path

    @property
    def line(self) -> int | None:
        """1-based line number, or ``None``."""
        return self.problem.line

    @property
    def field(self) -> str | None:
        """Dotted field path, or ``None``."""
        return self.problem.field


class InputErrors(InputError):
    """Several located problems in one input, reported together like a compiler would.

    The message lists at most :data:`MAX_REPORTED` problems and counts the rest.
    """

    def __init__(self, problems: Sequence[Problem], *, cap: int = MAX_REPORTED) -> None:
        if not problems:
            raise ValueError("InputErrors needs at least one problem")
        self.problems = list(problems)
        shown = [str(p) for p in self.problems[:cap]]
        rest = len(self.problems) - len(shown)
        if rest > 0:
            shown.append(f"… and {rest} more problem{'s' if rest != 1 else ''}.")
        CaseworkError.__init__(self, "\n".join(shown))

    @classmethod
    def raise_if_any(cls, problems: Iterable[Problem]) -> None:
        """Raise one :class:`InputErrors` listing the problems, if there are any."""
        found = list(problems)
        if found:
            raise cls(found)


class ConfigError(InputError):
    """The project configuration is missing or invalid, located like any input error.

    ``casework.toml:31: models.judge.script: file llm/judge.jsonl not found. Got 'llm/judge.jsonl'.``
    (:meth:`casework.project.Project.config_error` finds the line of a key.)
    """


class VersionNotFound(CaseworkError, LookupError):
    """A ``name@version`` reference names no release, or its content cannot be recovered."""


class ReleaseConflict(CaseworkError):
    """Another process holds a dataset's release lock, or changed its files under a release.

    Nothing was written; running the command again (once the other one finishes) is safe.
    """


class WorkbenchError(CaseworkError):
    """The workbench database is unreachable or not at the expected schema revision."""


class DecisionConflict(CaseworkError):
    """Someone else decided the same item first; this decision was not stored (nothing changed)."""


class GateFailed(CaseworkError):
    """The release gate failed; the message lists every reason."""
