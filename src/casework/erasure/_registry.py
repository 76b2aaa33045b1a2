"""Every store that can hold a customer's data, and what `forget` and `expire` do to each.

One list: each workbench table (:data:`TABLES`) and each kind of file casework writes
(:data:`FILES`) is named here with how it is reached, or why it holds no customer data. The tests
fail when a table of the workbench metadata, or a module writing files, is not named here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from casework.erasure import _files as f
from casework.erasure import _tables as t

Reach = Literal["erased", "released", "listed", "kept", "no customer data"]
"""How a store is reached.

`erased`: its rows or items leave (deleted, redacted, or rewritten without them). `released`: a
new dataset version without the rows is released (and cached old versions holding them deleted).
`listed`: casework cannot change it (it left the project), so `forget` lists it. `kept`: it holds
only what the erasure itself needs, on purpose (said in ``holds``). `no customer data`: the
reason is in ``holds``.
"""


@dataclass(frozen=True)
class TableStore:
    """A workbench table.

    Attributes:
        table: Its name in the workbench metadata.
        holds: What customer data it can hold, or why it holds none.
        reach: How `forget` and `expire` reach it.
        erase: How its rows leave (``None`` unless ``reach`` is `erased`).
    """

    table: str
    holds: str
    reach: Reach
    erase: t.TableEraser | None = None


@dataclass(frozen=True)
class FileKind:
    """A kind of file casework writes.

    Attributes:
        name: What it is (`shape sets`), as the output of `forget` names it.
        where: Where it lies (default folders; `[paths]` may move them).
        holds: What customer data it can hold, or why it holds none.
        reach: How `forget` and `expire` reach it.
        writers: The modules that write it.
        patterns: Glob patterns, relative to the project root, of the files (default folders).
        erase: How its items leave (``None`` unless ``reach`` is `erased` or `listed` by record).
    """

    name: str
    where: str
    holds: str
    reach: Reach
    writers: tuple[str, ...]
    patterns: tuple[str, ...]
    erase: f.FileEraser | None = None


_NONE_AUTH = "sign-in state of staff (labellers, reviewers), never a customer's"

#: Every workbench table, in the order `forget` reaches them.
TABLES: tuple[TableStore, ...] = (
    TableStore(
        "labelling_labels", "raw labels of a case (answer facts quote it)", "erased", t.erase_labels
    ),
    TableStore("labelling_assignments", "who holds which case", "erased", t.erase_assignments),
    TableStore(
        "web_label_views",
        "what the labelling page showed of a case, and the labeller's free-text note",
        "erased",
        t.erase_label_views,
    ),
    TableStore(
        "web_skips", "cases a labeller skipped, with a free-text reason", "erased", t.erase_skips
    ),
    TableStore(
        "guideline_gaps",
        "an adjudicator's note about a case the guideline did not settle",
        "erased",
        t.erase_guideline_gaps,
    ),
    TableStore(
        "leakage_flag", "pairs of rows and the text they share", "erased", t.erase_leakage_flags
    ),
    TableStore(
        "review_items",
        "review items (pairs, generated cases) whose payload holds the texts shown",
        "erased",
        t.erase_review_items,
    ),
    TableStore(
        "judge_review_items",
        "judge verdicts on a case's trial sampled for people to grade",
        "erased",
        t.erase_judge_items,
    ),
    TableStore(
        "judge_review_verdicts",
        "people's verdicts on those items (keyed by run/case/trial)",
        "erased",
        t.erase_judge_verdicts,
    ),
    TableStore(
        "trials",
        "trial records: trajectories, tool calls and final state hold the customer's data",
        "erased",
        t.erase_trials,
    ),
    TableStore(
        "runs", "run headers list the case ids and counts (rewritten)", "erased", t.erase_runs
    ),
    TableStore(
        "judge_calibrations",
        "disagreements name case ids (removed; the statistics stay)",
        "erased",
        t.erase_calibrations,
    ),
    TableStore(
        "llm_response",
        "cached model replies (prompts are stored as hashes only); a reply holding a removed "
        "row's id or pseudonym is deleted",
        "erased",
        t.erase_llm_responses,
    ),
    TableStore(
        "judge_certifications",
        "counts and rates per slice and judge: no case id, no text",
        "no customer data",
    ),
    TableStore("web_users", _NONE_AUTH, "no customer data"),
    TableStore("web_signins", _NONE_AUTH, "no customer data"),
    TableStore("web_sessions", _NONE_AUTH, "no customer data"),
    TableStore(
        "web_served_uses",
        "ids of spent form tokens and when: no case id, no text",
        "no customer data",
    ),
    TableStore(
        "workbench_meta", "facts about the database itself (version, creation)", "no customer data"
    ),
)

_DATASET = "datasets/*/"
_STATE = ".casework/"

#: Every kind of file casework writes, in the order `forget` reaches them.
FILES: tuple[FileKind, ...] = (
    FileKind(
        "datasets",
        "datasets/<name>/cases.jsonl, labels.jsonl, versions.jsonl",
        "the rows and their raw labels (the release log holds counts and hashes only)",
        "released",
        (
            "casework.dataset.jsonl",
            "casework.dataset.versions",
            "casework.dataset._journal",
        ),
        (f"{_DATASET}cases.jsonl", f"{_DATASET}labels.jsonl", f"{_DATASET}versions.jsonl"),
    ),
    FileKind(
        "version store",
        ".casework/versions/",
        "every earlier release's lines: versions holding a removed row are deleted, and lines "
        "no remaining version uses",
        "released",
        ("casework.dataset._objects", "casework.dataset.versions"),
        (f"{_STATE}versions/**",),
    ),
    FileKind(
        "leakage flags",
        "datasets/<name>/leakage.jsonl",
        "pairs of rows and the shingles they share",
        "erased",
        ("casework.leakage.flagfile",),
        (f"{_DATASET}leakage.jsonl",),
        f.erase_flag_files,
    ),
    FileKind(
        "run logs",
        "runs/<run-id>.jsonl (and a killed sharded run's runs/<run-id>.shards/part-NNN.jsonl)",
        "trials: the agent's replies, tool calls and final state (a killed sharded run's too: "
        "its workers' parts, and the log it was merging in .casework/tmp/)",
        "erased",
        (
            "casework.runner.run",
            "casework.runner.redact",
            "casework.runner.shards",
            "casework.interop.run_import",
        ),
        ("runs/*.jsonl", "runs/*.shards/part-*.jsonl"),
        f.erase_run_logs,
    ),
    FileKind(
        "reports",
        "runs/<run-id>.html",
        "trials shown in the report (regenerated from the redacted run; others deleted)",
        "erased",
        ("casework.report.html",),
        ("runs/*.html",),
        f.erase_reports,
    ),
    FileKind(
        "shape sets",
        "shapes/<set>.jsonl, shapes/<set>.versions.jsonl",
        "member ids, session pseudonyms and scrubbed conversation text of failing traces",
        "erased",
        ("casework.shapes._store",),
        ("shapes/*.jsonl",),
        f.erase_shapes,
    ),
    FileKind(
        "authoring log",
        "shapes/<set>.authored.jsonl",
        "ids of generated candidates and counts (their texts are review items)",
        "no customer data",
        ("casework.authoring._generate",),
        ("shapes/*.authored.jsonl",),
    ),
    FileKind(
        "judge tuning keys",
        "judge/tuning.jsonl",
        "keys run/case/trial of verdicts kept for tuning the judge",
        "erased",
        ("casework.review._sample", "casework.erasure._files"),
        ("judge/tuning.jsonl",),
        f.erase_tuning,
    ),
    FileKind(
        "exported copies",
        "labelling sheets (`label export`), judge verdict sheets (`judge sample`, `review export`), ADK eval sets "
        "(`interop export-adk`), recorded in .casework/copies.jsonl",
        "the rows' text, sent to people or tools outside casework",
        "listed",
        (
            "casework.labelling.exchange",
            "casework.review._sample",
            "casework.review._judge_verdict",
            "casework.interop.adk._project",
            "casework.dataset.copies",
        ),
        (f"{_STATE}copies.jsonl",),
        f.erase_copies,
    ),
    FileKind(
        "judge verdict sheets",
        "verdicts-<reviewer>.jsonl or .csv in the folder `judge sample --out` or `review export --out` named",
        "agent replies to sampled trials; listed by path (as exported copies) and by reviewer from "
        "the workbench's sampled items",
        "listed",
        ("casework.review._sample", "casework.review._judge_verdict"),
        (),
    ),
    FileKind(
        "other exports",
        "τ², BFCL and Inspect exports, verdict exports (JUnit…), reports written with `report -o`",
        "the rows' text or ids; listed when they lie in the project folder",
        "listed",
        (
            "casework.interop.tau2._domains",
            "casework.interop.fncall._rows",
            "casework.interop.agentdojo._import",
            "casework.interop.inspect._samples",
            "casework.interop.verdicts_out",
            "casework.report.html",
        ),
        (),
    ),
    FileKind(
        "purge expressions",
        ".casework/purge/forget-<time>.txt, expire-<time>.txt",
        "ids of removed rows only, kept on purpose: `git filter-repo` needs them to purge history",
        "kept",
        ("casework.privacy.retention",),
        (f"{_STATE}purge/*.txt",),
    ),
    FileKind(
        "workbench database",
        ".casework/workbench.db",
        "the workbench tables above",
        "erased",
        ("casework.workbench.db",),
        (f"{_STATE}workbench.db",),
    ),
    FileKind(
        "transient state",
        ".casework/journal/, tmp/, restore/, locks/",
        "staging of a release in progress, temp copies and a leakage scan's scratch (hashed "
        "shingles and one byte of each MinHash value, no text), removed when the command ends or "
        "by the next scan after a kill",
        "no customer data",
        (
            "casework.dataset._journal",
            "casework.dataset._ondisk",
            "casework.dataset.lock",
            "casework.leakage.streamed",
        ),
        (f"{_STATE}journal/**", f"{_STATE}tmp/**", f"{_STATE}restore/**", f"{_STATE}locks/*"),
    ),
    FileKind(
        "project files",
        "casework.toml, agent/, guidelines/, renames.toml, tool-suggestion patches",
        "configuration, declared tools and guidelines written by people",
        "no customer data",
        ("casework.scaffold", "casework.labelling.guidelines", "casework.cli.import_"),
        ("casework.toml", "agent/*", "guidelines/*.md", "renames.toml", ".gitignore"),
    ),
)
