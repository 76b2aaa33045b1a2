"""Identifiers in customer text, and the `drop_identifier` transform (information-changing).

Entry points: :func:`find_identifiers`, :func:`facts_of` (what a label-preserving variant must
keep), :class:`DropIdentifier`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from casework.privacy.pseudonyms import PSEUDONYM_RE
from casework.schema import Case, Situation
from casework.synth.transforms import (
    Skip,
    TransformContext,
    TransformSpec,
    user_texts,
    with_user_turns,
)

__all__ = ["DropIdentifier", "facts_of", "find_identifiers", "inside", "protected_spans"]

_BUILTIN_ID_PATTERNS = (
    PSEUDONYM_RE.pattern,  # casework's own keyed pseudonyms: order_5191d8ede5cc
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",  # email address
    r"\b[A-Z]{2,5}-?\d{3,}\b",  # ORD-104233, CUS-20417, INV12345
    r"#\d{3,}\b",  # #10423
    r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{8,}\b",  # 1Z999AA10123456784
    r"\b\d{6,}\b",  # long numbers: tracking, account
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def find_identifiers(text: str, extra: Mapping[str, str] | None = None) -> list[str]:
    """Identifiers in ``text`` (emails, order/customer ids, long numbers, configured patterns).

    Distinct, in order of first appearance; an identifier inside a longer one is not repeated.
    """
    spans: list[tuple[int, int]] = []
    for pattern in (*(extra or {}).values(), *_BUILTIN_ID_PATTERNS):
        for m in re.finditer(pattern, text):
            if m.end() > m.start():
                spans.append((m.start(), m.end()))
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    kept: list[tuple[int, int]] = []
    for start, end in spans:
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end))
    out: list[str] = []
    for start, end in kept:
        value = text[start:end]
        if value not in out:
            out.append(value)
    return out


_PERSONAL_KINDS = frozenset({"name", "address", "phone", "url", "ip"})


def _task_first(identifiers: list[str]) -> list[str]:
    """Identifiers a task acts on (orders, accounts, emails) before personal details (names)."""

    def personal(ident: str) -> bool:
        m = PSEUDONYM_RE.fullmatch(ident)
        return m is not None and m.group(1) in _PERSONAL_KINDS

    return sorted(identifiers, key=personal)


def facts_of(text: str, extra: Mapping[str, str] | None = None) -> list[str]:
    """Identifiers and numbers a label may depend on: a preserving variant must keep every one."""
    found = find_identifiers(text, extra)
    rest = text
    for ident in found:
        rest = rest.replace(ident, " ")
    for number in _NUMBER.findall(rest):
        if number not in found:
            found.append(number)
    return found


def protected_spans(text: str, extra: Mapping[str, str] | None) -> list[tuple[int, int]]:
    """Character spans of every identifier occurrence in ``text`` (never rewritten)."""
    spans: list[tuple[int, int]] = []
    for ident in find_identifiers(text, extra):
        spans.extend((m.start(), m.end()) for m in re.finditer(re.escape(ident), text))
    return spans


def inside(start: int, end: int, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether ``[start, end)`` overlaps any of ``spans``."""
    return any(start < b and a < end for a, b in spans)


_NOUN_BEFORE = re.compile(
    r"(?i)(?P<det>\b\w+\s+)?\b(?P<noun>order|account|ticket|booking|invoice|tracking|reference|"
    r"parcel|package|shipment|customer(?=\s+(?:id|number)))(?P<suffix>\s+(?:id|number))?"
    r"(?:\s+no\.?)?\s*[:#]?\s*$"
)
_DETERMINERS = {"my", "our", "your", "this", "that", "the", "his", "her", "their"}
_SENTENCE_END = re.compile(r"(?:^|[.!?]\s+)$")


def _predicate_sentence(sentence: str, ident: str) -> bool:
    """True for a sentence that only states the identifier ("My order number is ORD-1.")."""
    stated = r"(?i)(?:^|\b(?:is|are|was|am|i'm)\b|:)\s*(?:(?:customer|client|member)\s+(?:id\s+|number\s+)?)?"
    pattern = stated + re.escape(ident) + r"\s*[.!?]?\s*$"
    return re.search(pattern, sentence.strip()) is not None


def _inline_drop(text: str, ident: str) -> str:
    out, last = [], 0
    for m in re.finditer(re.escape(ident), text):
        before = text[last : m.start()]
        noun = _NOUN_BEFORE.search(before)
        if noun:
            det = (noun.group("det") or "").strip().lower()
            head = (
                before[: noun.start("det")] if noun.group("det") else before[: noun.start("noun")]
            )
            if det and det not in _DETERMINERS and det not in {"a", "an"}:
                head += noun.group("det")
            if det in _DETERMINERS:
                head += noun.group("det")
            else:
                head += "My " if _SENTENCE_END.search(head) else "my "
            phrase = noun.group("noun") + (noun.group("suffix") or "")
            before = head + (phrase.lower() if head.endswith(("my ", "My ")) else phrase)
            replacement = ""
        elif "@" in ident:
            replacement = "my email"
        else:
            replacement = "It" if _SENTENCE_END.search(before) else "it"
        out.append(before)
        out.append(replacement)
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _drop(text: str, ident: str) -> str:
    """``text`` without ``ident``.

    A sentence that only states it ("My email is jane@x.com.") goes; elsewhere the noun stays
    ("for order ORD-1" → "for my order") or a pronoun takes its place ("ORD-1 is late" → "It is late").
    """
    text = re.sub(r"\s*\(\s*" + re.escape(ident) + r"\s*\)", "", text)  # an aside: just drop it
    sentences = re.split(r"(?<=[.!?])\s+", text)
    kept = [
        _inline_drop(sent, ident) if ident in sent else sent
        for sent in sentences
        if not (ident in sent and _predicate_sentence(sent, ident))
    ]
    joined = " ".join(kept)
    joined = re.sub(r"[ \t]{2,}", " ", joined)
    joined = re.sub(r"[ \t]+([,.!?;:])", r"\1", joined)
    joined = re.sub(r"\(\s*\)", "", joined)
    return joined.strip()


class DropIdentifier:
    """Removes one identifier (order id, email, tracking number) from every user message.

    Information-changing: without it the agent may have to ask, so the variant goes back to
    labelling. Variant ``n`` drops the ``n``-th identifier of the conversation, counting those a
    task acts on (orders, accounts, emails) before personal details (names, addresses, phones).
    """

    spec = TransformSpec(
        "drop_identifier",
        False,
        "rule",
        "user_text",
        1,
        "removes one identifier the user gave (the agent may now have to ask)",
    )

    def make(
        self, seed: Case, indices: Sequence[int], ctx: TransformContext
    ) -> list[Situation | Skip]:
        """Variant ``n`` drops the ``n``-th identifier found in the user's messages."""
        texts = user_texts(seed.situation)
        idents = _task_first(find_identifiers("\n".join(texts), ctx.id_patterns))
        others = "\n".join(
            [t.content for t in seed.situation.turns if t.role != "user"]
            + [str(c.arguments) for t in seed.situation.turns for c in t.tool_calls]
        )
        results: list[Situation | Skip] = []
        for n in indices:
            if n > len(idents):
                results.append(
                    Skip(f"only {len(idents)} identifier(s) in the user's messages to drop")
                )
                continue
            ident = idents[n - 1]
            if ident in others:
                results.append(
                    Skip(f"identifier '{ident}' also appears in the conversation's other turns")
                )
                continue
            dropped = [_drop(t, ident) for t in texts]
            if any(t.strip() and not d for t, d in zip(texts, dropped, strict=True)):
                results.append(Skip(f"a user message holds nothing but '{ident}'"))
                continue
            results.append(with_user_turns(seed.situation, dropped))
        return results
