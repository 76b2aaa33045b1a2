"""Scrubbing in memory: detectors and known values replaced by keyed pseudonyms.

Entry points: :func:`scrubber_for` (from the project config and key) and :class:`Scrubber`;
:meth:`Scrubber.conversation` opens a :class:`ScrubContext` that learns a conversation's known
values, scrubs its texts and JSON structures, and collects the row's subjects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from casework.decoding import parse_json
from casework.privacy.detection import Cue, text_scan
from casework.privacy.detectors import (
    BUILTIN_KINDS,
    Detection,
    Detector,
    id_pattern_detectors,
)
from casework.privacy.keys import PseudonymKey
from casework.privacy.known import FieldKinds, KnownValue, collect_known
from casework.privacy.prefilter import Prefilter, stand_in_text
from casework.privacy.pseudonyms import PSEUDONYM_RE, normalise, pseudonym
from casework.privacy.registry import builtin_detectors
from casework.project import Project

__all__ = ["SCRUB_VERSION", "ScrubContext", "Scrubber", "scrubber_for"]

#: Version of the detectors and normalisation rules, recorded on every mined row.
SCRUB_VERSION = "3"

#: Kinds whose pseudonyms do not name a customer (kept out of a row's subjects).
_NOT_SUBJECTS = frozenset({"session", "trace"})

# Overlap priority: an existing pseudonym is never touched; otherwise the longer span wins, and a
# known value beats a detector of the same length.
_TIER_KEEP, _TIER_KNOWN, _TIER_DETECTOR = 0, 1, 2


class _Span(NamedTuple):
    """One span to replace (a tuple: made for every detection, it must be cheap to make)."""

    start: int
    end: int
    tier: int
    kind: str
    value: str


class Scrubber:
    """Replaces PII by keyed pseudonyms; one instance serves many conversations.

    Args:
        key: The pseudonym key.
        detectors: Detectors to run on text (default: the built-in ones).
        fields: Which JSON fields hold customer data (default: the built-in list).
        phone_regions: Regions tried for national phone numbers (normalisation of known phones).
    """

    def __init__(
        self,
        key: PseudonymKey,
        detectors: Sequence[Detector] | None = None,
        fields: FieldKinds | None = None,
        phone_regions: Sequence[str] = ("US", "GB"),
    ) -> None:
        self.key = key
        self.detectors = (
            list(detectors) if detectors is not None else builtin_detectors(phone_regions)
        )
        self.fields = fields or FieldKinds()
        self.phone_regions = tuple(phone_regions)
        self.kinds = frozenset(
            {
                *BUILTIN_KINDS,
                *self.fields.kinds,
                "session",
                "trace",
                *(d.kind for d in self.detectors),
            }
        )
        self._cache: dict[tuple[str, str], str] = {}
        cues: list[Cue | None] = [getattr(d, "cue", None) for d in self.detectors]
        self._cues = [
            (d, c if isinstance(c, Cue) else None)
            for d, c in zip(self.detectors, cues, strict=True)
        ]
        known = [c for c in cues if isinstance(c, Cue)]
        self._cap_run = max((c.run for c in known), default=0)
        self._cap_digits = max((c.digits for c in known), default=0)
        self._chars = tuple(sorted({ch for c in known for ch in c.chars}))
        self._plans: dict[tuple[int, int, tuple[bool, ...]], tuple[Detector, ...]] = {}
        self._prefilter = Prefilter(self.detectors)

    def detectors_for(self, text: str) -> tuple[Detector, ...]:
        """The detectors that may find something in ``text``, in order.

        An ASCII text goes through one RE2 pass that tells which detectors' gates it passes
        (:class:`casework.privacy.prefilter.Prefilter`): on the benchmark's corpus about one
        detector call in five is left; so does a text whose only other characters are dashes,
        read with a stand-in for them. Any other text (or one RE2 gives up on) is judged by the
        detectors' cues: one scan per text (:func:`casework.privacy.detection.text_scan`) and a
        few substring tests give its signature, and the detectors for each signature are worked
        out once.
        """
        if text.isascii():
            planned = self._prefilter.plan(text)
            if planned is not None:
                return planned
        elif self._prefilter.stands_in:
            # A text whose only characters outside ASCII are dashes: its gates are read with
            # an ASCII stand-in for each (every gate matches the stand-in where its pattern
            # matches the dash), the detectors then read the text itself.
            stood = stand_in_text(text)
            planned = self._prefilter.plan(stood) if stood is not None else None
            if planned is not None:
                return planned
        scan = text_scan(text)
        key = (
            min(scan.longest, self._cap_run),
            min(scan.digits, self._cap_digits),
            tuple(map(text.__contains__, self._chars)),
        )
        plan = self._plans.get(key)
        if plan is None:
            held = {ch for ch, present in zip(self._chars, key[2], strict=True) if present}
            plan = tuple(
                d
                for d, c in self._cues
                if c is None
                or (
                    key[0] >= c.run
                    and key[1] >= c.digits
                    and (not c.chars or any(ch in held for ch in c.chars))
                )
            )
            self._plans[key] = plan
        return plan

    @property
    def fingerprint(self) -> str:
        """Fingerprint of the key (recorded on rows)."""
        return self.key.fingerprint

    def normalise(self, kind: str, value: str) -> str:
        """Normalise ``value`` as an identifier of ``kind``."""
        return normalise(kind, value, phone_regions=self.phone_regions)

    def pseudonym(self, kind: str, value: str, *, normalised: bool = False) -> str:
        """Keyed pseudonym of ``value`` (normalised first unless ``normalised``)."""
        norm = value if normalised else self.normalise(kind, value)
        cached = self._cache.get((kind, norm))
        if cached is None:
            cached = pseudonym(self.key.secret, kind, norm)
            if len(self._cache) < 200_000:
                self._cache[(kind, norm)] = cached
        return cached

    def conversation(self, known: Iterable[KnownValue] = ()) -> ScrubContext:
        """A context for one conversation (its known values, its subjects)."""
        ctx = ScrubContext(self)
        for item in known:
            ctx.add_known(item.kind, item.value)
        return ctx

    def text(self, text: str) -> str:
        """Scrub one text with the detectors only (no known values)."""
        return ScrubContext(self).text(text)

    def is_existing(self, text: str) -> bool:
        """Whether ``text`` is exactly a pseudonym of a kind this scrubber produces."""
        m = PSEUDONYM_RE.fullmatch(text)
        return m is not None and m.group(1) in self.kinds


class ScrubContext:
    """Scrubbing state of one conversation: its known values and the pseudonyms it produced."""

    def __init__(self, scrubber: Scrubber) -> None:
        self.scrubber = scrubber
        self.subjects: set[str] = set()
        self._known: dict[str, tuple[str, str]] = {}
        self._known_re: re.Pattern[str] | None = None

    # -- known values ------------------------------------------------------------------------

    def add_known(self, kind: str, value: str) -> None:
        """Learn a customer value: it is replaced wherever it occurs in this conversation.

        A person's name is also learnt word by word (words of 3+ letters), so "Ada" is replaced
        when the fixture holds "Ada Fakename". The value's pseudonym joins the row's subjects
        even if the text never mentions it: the row still came from that customer's session.
        """
        value = value.strip()
        if not value or self.scrubber.is_existing(value):
            return
        norm = self.scrubber.normalise(kind, value)
        self._add(value, kind, norm)
        self._pseudonym(kind, norm)
        if kind == "name":
            for word in re.findall(r"[^\W\d_][^\W\d_'’-]{2,}", value):
                self._add(word, kind, self.scrubber.normalise(kind, word))
        if kind == "address":
            for part in value.split(","):
                if len(part.strip()) >= 5 and any(ch.isdigit() for ch in part):
                    self._add(part.strip(), kind, self.scrubber.normalise(kind, part))

    def add_known_from(self, value: Any) -> None:
        """Learn every customer value of a JSON structure (fixtures, metadata, tool arguments)."""
        for item in collect_known(value, self.scrubber.fields):
            self.add_known(item.kind, item.value)

    def _add(self, text: str, kind: str, norm: str) -> None:
        lookup = " ".join(text.split()).casefold()
        if lookup not in self._known:
            self._known[lookup] = (kind, norm)
            self._known_re = None

    def _pattern(self) -> re.Pattern[str] | None:
        if not self._known:
            return None
        if self._known_re is None:
            alts = sorted(self._known, key=len, reverse=True)
            body = "|".join(r"\s+".join(re.escape(w) for w in alt.split(" ")) for alt in alts)
            self._known_re = re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)
        return self._known_re

    def leaked_kinds(self, text: str) -> list[str]:
        """Kinds of the known values still present in ``text`` (never the values themselves)."""
        pattern = self._pattern()
        if pattern is None:
            return []
        return sorted(
            {self._known[" ".join(m.group().split()).casefold()][0] for m in pattern.finditer(text)}
        )

    # -- text --------------------------------------------------------------------------------

    def _spans(
        self, text: str, plan: Sequence[Detector], *, outside: bool = False
    ) -> tuple[list[_Span], list[_Span]]:
        """Every span found in ``text``, and those that detectors relied on to skip a run.

        With ``outside``, a detector that offers ``find_outside`` (phones, cards) is handed the
        spans found before it and skips runs lying wholly inside one of them: the longer or
        earlier span wins there anyway. That holds only while the span relied on is kept, which
        :meth:`_resolved` checks.
        """
        spans: list[_Span] = []
        relied: list[_Span] = []
        if "_" in text:
            for m in PSEUDONYM_RE.finditer(text):
                if m.group(1) in self.scrubber.kinds:
                    spans.append(_Span(m.start(), m.end(), _TIER_KEEP, "", ""))
        pattern = self._pattern()
        if pattern is not None:
            for m in pattern.finditer(text):
                kind, norm = self._known[" ".join(m.group().split()).casefold()]
                spans.append(_Span(m.start(), m.end(), _TIER_KNOWN, kind, norm))
        for detector in plan:
            find_outside = getattr(detector, "find_outside", None) if outside and spans else None
            if find_outside is not None:
                found, used = find_outside(text, [(s.start, s.end) for s in spans])
                relied.extend(spans[i] for i in used)
            else:
                found = detector.find(text)
            for d in found:
                spans.append(_Span(d.start, d.end, _TIER_DETECTOR, d.kind, d.value))
        return spans, relied

    def _resolved(self, text: str, plan: Sequence[Detector] | None = None) -> list[_Span]:
        """The spans :meth:`text` replaces: as if every detector had read the whole text.

        ``plan`` is the scrubber's :meth:`Scrubber.detectors_for` of ``text``, if known.
        """
        if plan is None:
            plan = self.scrubber.detectors_for(text)
        spans, relied = self._spans(text, plan, outside=True)
        chosen = self._resolve(spans)
        if relied and not set(map(id, relied)) <= set(map(id, chosen)):
            chosen = self._resolve(self._spans(text, plan)[0])
        return chosen

    @staticmethod
    def _resolve(spans: list[_Span]) -> list[_Span]:
        """Non-overlapping spans: existing pseudonyms first, then the longest, then known values.

        Longest first, whatever found it: a personal URL holding a known email is replaced
        whole, so the username elsewhere in the URL goes with it.
        """
        if len(spans) <= 1:
            return spans
        chosen: list[_Span] = []
        order = sorted(
            spans, key=lambda s: (s.tier != _TIER_KEEP, s.start - s.end, s.tier, s.start)
        )
        for s in order:
            if all(s.end <= c.start or s.start >= c.end for c in chosen):
                chosen.append(s)
        chosen.sort(key=lambda s: s.start)
        return chosen

    def detections(self, text: str) -> list[Detection]:
        """What :meth:`text` would replace, without replacing it (existing pseudonyms excluded)."""
        return [
            Detection(s.start, s.end, s.kind, s.value)
            for s in self._resolved(text)
            if s.tier != _TIER_KEEP
        ]

    def text(self, text: str) -> str:
        """Scrub a text: every detected or known value becomes its pseudonym."""
        if not text:
            return text
        plan = self.scrubber.detectors_for(text)
        if not plan and not self._known:
            return text  # nothing to find (existing pseudonyms are kept as they are)
        spans = self._resolved(text, plan)
        if not spans:
            return text
        out: list[str] = []
        pos = 0
        for s in spans:
            out.append(text[pos : s.start])
            if s.tier == _TIER_KEEP:
                out.append(text[s.start : s.end])
            else:
                out.append(self._pseudonym(s.kind, s.value))
            pos = s.end
        out.append(text[pos:])
        return "".join(out)

    def _pseudonym(self, kind: str, norm: str) -> str:
        value = self.scrubber.pseudonym(kind, norm, normalised=True)
        if kind not in _NOT_SUBJECTS:
            self.subjects.add(value)
        return value

    def identifier(self, kind: str, value: str) -> str:
        """The pseudonym of one whole identifier (a session id, a field value)."""
        if self.scrubber.is_existing(value):
            return value
        return self._pseudonym(kind, self.scrubber.normalise(kind, value))

    # -- JSON --------------------------------------------------------------------------------

    def json(
        self,
        value: Any,
        key: str | None = None,
        context: tuple[str, ...] = (),
        *,
        person: bool = False,
    ) -> Any:
        """Scrub a JSON structure by walking it (never as one text).

        A value under a customer-data field (`email`, `customer.name`...) becomes the pseudonym
        of its kind whole; every other string is scrubbed as text; object keys are scrubbed too.
        A string holding a JSON object or array is parsed, walked and written back compactly.
        """
        if isinstance(value, Mapping):
            inner = (*context, key) if key is not None else context
            like = self.scrubber.fields.person_like(value)
            return {
                self.text(str(k)): self.json(v, str(k), inner, person=like)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.json(v, key, context) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        kind = self.scrubber.fields.kind_of(key, context, person=person)
        if isinstance(value, int | float):
            if kind is not None and len(str(value)) >= 3:
                return self.identifier(kind, str(value))
            return value
        if not isinstance(value, str):
            return value
        if kind is not None and value.strip():
            return self.identifier(kind, value)
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
            try:
                parsed = parse_json(stripped)
            except ValueError:
                return self.text(value)
            return json.dumps(self.json(parsed, key, context), ensure_ascii=False)
        return self.text(value)


def scrubber_for(project: Project, key: PseudonymKey, extra: Sequence[Detector] = ()) -> Scrubber:
    """The scrubber a project's config describes: built-in detectors, its id patterns, its fields.

    Raises:
        ConfigError: An id pattern or a known-field kind is invalid.
    """
    cfg = project.config.privacy
    where = project.relative(project.config_path)
    detectors: list[Detector] = [
        *id_pattern_detectors(cfg.id_patterns, where),
        *builtin_detectors(cfg.phone_regions),
        *extra,
    ]
    return Scrubber(key, detectors, FieldKinds(cfg.known_fields, where), cfg.phone_regions)
