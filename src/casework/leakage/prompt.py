"""Prompt containment: which rows have been copied into the agent's instruction or few-shot files.

Plain 3-shingle containment flags many unrelated rows of templated support text, so two more
signals are shown and decide: IDF-weighted containment (shingles common across the dataset weigh
little) and long n-gram containment (8 words in a row). A holdout or smoke row above the threshold
on either is a violation; a frozen row is a violation in any split. Entry points:
:func:`prompt_scores` (pure) and :func:`check_prompts` (the `casework leakage prompt` check).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from casework.dataset import load_dataset, read_cases
from casework.decoding import decode_utf8
from casework.errors import InputErrors, Problem, UsageError
from casework.leakage.text import compared_text
from casework.project import Project
from casework.schema import Case
from casework.shingling._sets import ShingleSets, segment_ids
from casework.shingling._shingles import shingle_sets, tokenize_batch

__all__ = ["LONG_N", "PromptHit", "PromptReport", "PromptScores", "check_prompts", "prompt_scores"]

LONG_N = 8
"""Words per long n-gram, the second signal."""

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PromptScores:
    """Per-row containment of rows in one prompt text (three signals)."""

    plain: F64
    """Share of the row's 3-shingles found in the prompt."""
    weighted: F64
    """Same, each shingle weighted by its IDF across the rows, ``ln((N + 1) / (df + 1))``."""
    long: F64
    """Share of the row's ``LONG_N``-word shingles found in the prompt (whole row if shorter)."""


def _contained(rows: ShingleSets, target: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
    return np.isin(rows.hashes, target)


def _row_sums(values: F64, rows: ShingleSets) -> F64:
    return np.bincount(segment_ids(rows.offsets), weights=values, minlength=len(rows)).astype(
        np.float64
    )


def _ratio(num: F64, den: F64) -> F64:
    return np.divide(num, den, out=np.zeros(len(num), dtype=np.float64), where=den > 0)


def prompt_scores(
    texts: Sequence[str], prompt: str, *, k: int = 3, long_n: int = LONG_N
) -> PromptScores:
    """Containment of each text in ``prompt``: plain, IDF-weighted (IDF over ``texts``) and long.

    IDF follows Spärck Jones, "A statistical interpretation of term specificity" (1972):
    a shingle found in every row carries no weight, so template phrases stop counting.

    >>> s = prompt_scores(["where is my refund for order 123", "where is my refund for order 456"],
    ...                   "Example: where is my refund for order 123")
    >>> [round(x, 2) for x in s.plain], [round(x, 2) for x in s.weighted]
    ([1.0, 0.8], [1.0, 0.0])
    """
    rows = shingle_sets(list(texts), k)
    target = shingle_sets([prompt], k).hashes
    _, inverse, df = np.unique(rows.hashes, return_inverse=True, return_counts=True)
    idf = np.log((len(texts) + 1) / (df[inverse.reshape(-1)] + 1))
    inside = _contained(rows, target)
    sizes = rows.sizes().astype(np.float64)
    plain = _ratio(_row_sums(inside.astype(np.float64), rows), sizes)
    weighted = _ratio(_row_sums(idf * inside, rows), _row_sums(idf, rows))
    # Long signal: rows of at least long_n words use long_n-grams; shorter rows look for their whole
    # word sequence in the prompt (an n-gram with n = the row's length).
    lengths = np.diff(tokenize_batch(list(texts)).offsets)
    long = np.zeros(len(texts), dtype=np.float64)
    widths = np.minimum(lengths, long_n)
    for width in sorted({int(w) for w in widths if w > 0}):
        members = np.flatnonzero(widths == width)
        sub = shingle_sets([texts[i] for i in members], width)
        found = _contained(sub, shingle_sets([prompt], width).hashes)
        long[members] = _ratio(
            _row_sums(found.astype(np.float64), sub), sub.sizes().astype(np.float64)
        )
    return PromptScores(plain, weighted, long)


@dataclass(frozen=True)
class PromptHit:
    """A row found in a prompt file (above the threshold on the weighted or the long signal)."""

    dataset: str
    case_id: str
    split: str
    frozen: bool
    file: str
    """Prompt file with the highest score for this row."""
    plain: float
    weighted: float
    long: float
    violation: bool
    """True for holdout, smoke and frozen rows; dev rows in few-shot examples are allowed."""


@dataclass(frozen=True)
class PromptReport:
    """Result of the prompt containment check."""

    files: list[str]
    threshold: float
    rows: int
    hits: list[PromptHit] = field(default_factory=list)

    @property
    def violations(self) -> list[PromptHit]:
        """Hits that fail the check."""
        return [h for h in self.hits if h.violation]


def _frozen_cases(project: Project) -> list[tuple[str, Case]]:
    folder_name = project.config.paths.frozen
    if not folder_name:
        return []
    folder = project.path(folder_name)
    out: list[tuple[str, Case]] = []
    for path in sorted(folder.glob("**/cases.jsonl")):
        dataset = path.parent.name if path.parent != folder else "frozen"
        out.extend(
            (dataset, c.model_copy(update={"frozen": True}))
            for c in read_cases(path, shown=project.relative(path))
        )
    return out


def _prompt_texts(project: Project) -> list[tuple[str, str]]:
    names = project.config.agent.prompt_files
    if not names:
        raise UsageError(
            f"{project.relative(project.config_path)}: agent.prompt_files is empty; name the "
            "instruction and few-shot files the check should read."
        )
    problems = []
    texts = []
    for name in names:
        path = project.path(name)
        if not path.is_file():
            problems.append(
                Problem(
                    project.relative(project.config_path),
                    None,
                    "agent.prompt_files",
                    "file not found",
                    name,
                    has_got=True,
                )
            )
            continue
        texts.append((name, decode_utf8(path.read_bytes(), project.relative(path))))
    InputErrors.raise_if_any(problems)
    return texts


def check_prompts(project: Project, datasets: Sequence[str] = ()) -> PromptReport:
    """Containment of every row of ``datasets`` in the prompt files (``agent.prompt_files``).

    ``datasets`` default to all; rows of the frozen folder (``paths.frozen``) are always checked.

    Raises:
        UsageError: No prompt files are configured.
        InputErrors: A configured prompt file does not exist.
    """
    prompts = _prompt_texts(project)
    threshold = project.config.thresholds.prompt_containment
    k = project.config.leakage.shingle_k
    rows: list[tuple[str, Case]] = []
    for ref in datasets or project.dataset_names():
        ds = load_dataset(project, ref)
        rows.extend((ds.name, c) for c in ds.cases)
    rows.extend(_frozen_cases(project))
    hits: list[PromptHit] = []
    by_dataset: dict[str, list[Case]] = {}
    for name, case in rows:
        by_dataset.setdefault(name, []).append(case)
    for name, cases in by_dataset.items():
        texts = [compared_text(c.situation) for c in cases]
        scores = [(file, prompt_scores(texts, text, k=k)) for file, text in prompts]
        for i, case in enumerate(cases):
            file, best = max(scores, key=lambda fs: max(fs[1].weighted[i], fs[1].long[i]))
            weighted, long = float(best.weighted[i]), float(best.long[i])
            if weighted <= threshold and long <= threshold:
                continue
            hits.append(
                PromptHit(
                    dataset=name,
                    case_id=case.id,
                    split=case.split,
                    frozen=case.frozen,
                    file=file,
                    plain=round(float(best.plain[i]), 4),
                    weighted=round(weighted, 4),
                    long=round(long, 4),
                    violation=case.frozen or case.split != "dev",
                )
            )
    hits.sort(key=lambda h: (not h.violation, h.dataset, h.case_id))
    return PromptReport([name for name, _ in prompts], threshold, len(rows), hits)
