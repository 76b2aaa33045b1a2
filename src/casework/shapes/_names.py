"""Naming shapes: distinctive terms (c-TF-IDF), an offline sentence, or one sentence from an LLM."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from casework.llm import Message
from casework.llm.client import Client

_TOKEN = r"(?u)\b[^\W\d_][^\W\d_]+\b"
#: Words every support conversation holds, and the kinds pseudonyms were replaced by.
_FILLER = frozenset(
    {
        "hi", "hello", "hey", "thanks", "thank", "please", "help", "cheers", "morning", "good",
        "team", "tool", "error", "order", "name", "email", "phone", "address", "customer",
        "session", "trace", "account", "url", "card", "person", "id", "ip", "ve", "ll", "don",
        "didn", "doesn", "isn", "wasn", "won", "haven", "aren", "couldn", "wouldn", "shouldn",
    }
)  # fmt: skip
_SENTENCE_END = re.compile(r"[.!?](\s|$)")


def distinctive_terms(texts_by_cluster: Sequence[Sequence[str]], top: int = 5) -> list[list[str]]:
    """The ``top`` most distinctive terms of each cluster by class-based TF-IDF.

    Each cluster's texts are one document; a term weighs ``tf(t, c) * log(1 + A / f(t))`` with
    ``A`` the average number of words per cluster and ``f(t)`` the term's count over all clusters
    (BERTopic's c-TF-IDF). Unigrams and bigrams; stop words and filler words left out.
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    docs = [" ".join(t) for t in texts_by_cluster]
    stop = sorted(ENGLISH_STOP_WORDS | _FILLER)
    vectorizer = CountVectorizer(token_pattern=_TOKEN, stop_words=stop, ngram_range=(1, 2))
    try:
        counts = vectorizer.fit_transform(docs)
    except ValueError:  # no cluster holds a single word
        return [[] for _ in docs]
    tf = np.asarray(counts.toarray(), dtype=np.float64)
    tf = tf / np.maximum(tf.sum(axis=1, keepdims=True), 1.0)
    totals = np.asarray(counts.sum(axis=0), dtype=np.float64).ravel()
    avg = float(counts.sum()) / max(len(docs), 1)
    weight = tf * np.log1p(avg / np.maximum(totals, 1.0))
    vocab = vectorizer.get_feature_names_out()
    out: list[list[str]] = []
    for row in weight:
        chosen: list[str] = []
        for j in np.argsort(-row, kind="stable"):
            term = str(vocab[j])
            if row[j] <= 0 or len(chosen) >= top:
                break
            # A bigram covers its words: keep "tracking number" or "tracking", not both.
            if any(term in c.split() or c in term.split() for c in chosen):
                continue
            chosen.append(term)
        out.append(chosen)
    return out


def offline_name(terms: Sequence[str], opening: str) -> str:
    """One sentence: the terms, and the longest sentence of the central conversation's opening."""
    text = re.sub(r"\b([a-z]+)_[0-9a-f]{12}\b", r"\1", " ".join(opening.split()))
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    goal = max(sentences, key=len) if sentences else text
    if len(goal) > 90:
        goal = goal[:89].rstrip() + "…"
    goal = goal.rstrip(".!?").replace('"', "'")
    about = ", ".join(terms[:3]) if terms else "no distinctive terms"
    return f'Failing conversations about {about}, such as "{goal}".'


NAME_PROMPT = (
    "You name a failure shape of a customer-support agent: a group of failing conversations "
    "that go wrong the same way. Answer with ONE sentence (at most 25 words) saying what goes "
    "wrong, e.g. 'The customer supplied an order number that belongs to a different account.' "
    "No preamble, no quotes, no list."
)


def one_sentence(text: str) -> str | None:
    """``text`` as one sentence, or ``None`` when it is empty, several sentences or over 40 words."""
    line = " ".join(text.strip().strip('"').split())
    if not line or len(line.split()) > 40:
        return None
    ends = [m.start() for m in _SENTENCE_END.finditer(line)]
    if len(ends) > 1 or (ends and ends[0] != len(line) - 1):
        return None
    return line if ends else line + "."


def llm_name(client: Client, terms: Sequence[str], examples: Sequence[str]) -> str | None:
    """One sentence from the LLM for a shape, or ``None`` when its answer is not one sentence.

    Raises:
        LLMError: The model could not be reached.
    """
    shown = "\n\n".join(f"Conversation {i + 1}:\n{t[:1200]}" for i, t in enumerate(examples[:3]))
    prompt = f"Distinctive terms: {', '.join(terms)}\n\n{shown}\n\nName this failure shape."
    reply = client.complete([Message("system", NAME_PROMPT), Message("user", prompt)])
    return one_sentence(reply.text)
