"""Command output as data: the one way a command prints JSON, and the table of output models.

Every command with ``--format json`` prints a model of the package that owns its noun through
:func:`emit`; :data:`OUTPUTS` names each model's ``kind``, where it is defined and the commands
that print it (``casework schema output KIND`` prints its JSON Schema; a test walks the command
tree and fails on a command with JSON output and no entry here).
"""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING, Any, NamedTuple

import click

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["OUTPUTS", "OutputEntry", "emit", "emit_document", "output_model"]


class OutputEntry(NamedTuple):
    """One output model: its kind, where it is defined and the commands that print it."""

    kind: str
    #: ``package.module:Class``, loaded on use (the CLI imports a model only to print it).
    target: str
    #: Full command names (``casework gate``) that print this model with ``--format json``.
    commands: tuple[str, ...]


_ENTRIES = [
    OutputEntry("gate-decision", "casework.gate.outputs:GateDecision", ("casework gate",)),
    OutputEntry(
        "dataset-check", "casework.dataset.outputs:DatasetCheck", ("casework dataset check",)
    ),
    OutputEntry(
        "version-list", "casework.dataset.outputs:VersionList", ("casework dataset versions",)
    ),
    OutputEntry("dataset-diff", "casework.dataset.outputs:DatasetDiff", ("casework dataset diff",)),
    OutputEntry("case-id-list", "casework.dataset.outputs:CaseIdList", ("casework dataset cases",)),
    OutputEntry(
        "dataset-retire", "casework.runner.outputs:RetireOutput", ("casework dataset retire",)
    ),
    OutputEntry(
        "erasure",
        "casework.erasure.outputs:ErasureOutput",
        ("casework dataset forget", "casework dataset expire"),
    ),
    OutputEntry("run-summary", "casework.runner.outputs:RunSummary", ("casework run",)),
    OutputEntry("run-listing", "casework.runner.outputs:RunListing", ("casework results list",)),
    OutputEntry(
        "run-results", "casework.runner.outputs:RunResultsOutput", ("casework results show",)
    ),
    OutputEntry(
        "run-comparison", "casework.runner.outputs:RunComparison", ("casework results compare",)
    ),
    OutputEntry(
        "review-item",
        "casework.review.outputs:ReviewItem",
        ("casework review show", "casework review decide"),
    ),
    OutputEntry(
        "review-item-list",
        "casework.review.outputs:ReviewItemList",
        ("casework review list", "casework review decide", "casework author review"),
    ),
    OutputEntry(
        "review-add",
        "casework.review.outputs:ReviewAdd",
        ("casework review add-cases", "casework review add-trials"),
    ),
    OutputEntry(
        "review-agreement",
        "casework.review.outputs:ReviewAgreement",
        ("casework review agreement",),
    ),
    OutputEntry("review-sync", "casework.review.outputs:ReviewSync", ("casework review sync",)),
    OutputEntry(
        "review-sheets", "casework.review.outputs:ReviewSheets", ("casework review export",)
    ),
    OutputEntry(
        "review-import", "casework.review.outputs:ReviewImport", ("casework review import",)
    ),
    OutputEntry(
        "dataset-apply", "casework.review.outputs:DatasetApply", ("casework dataset apply",)
    ),
    OutputEntry("judge-sample", "casework.review.outputs:JudgeSample", ("casework judge sample",)),
    OutputEntry(
        "judge-verdicts-import",
        "casework.review.outputs:JudgeVerdictsImport",
        ("casework judge verdicts import",),
    ),
    OutputEntry(
        "judge-labeller-check",
        "casework.grading.outputs:JudgeLabellerCheck",
        ("casework judge labeller-check", "casework judge calibrate"),
    ),
    OutputEntry(
        "judge-certify", "casework.grading.outputs:JudgeCertify", ("casework judge certify",)
    ),
    OutputEntry("llm-ping", "casework.llm.outputs:LlmPing", ("casework llm ping",)),
    OutputEntry(
        "llm-cache-stats", "casework.llm.outputs:CacheStats", ("casework llm cache stats",)
    ),
    OutputEntry("user-list", "casework.web.outputs:UserList", ("casework serve users list",)),
    OutputEntry(
        "label-assign", "casework.labelling.outputs:LabelAssign", ("casework label assign",)
    ),
    OutputEntry(
        "label-status", "casework.labelling.outputs:LabelStatus", ("casework label status",)
    ),
    OutputEntry(
        "label-dashboard",
        "casework.labelling.outputs:LabelDashboard",
        ("casework label status", "casework label dashboard"),
    ),
    OutputEntry(
        "disagreement-list",
        "casework.labelling.outputs:DisagreementList",
        ("casework adjudicate list",),
    ),
    OutputEntry(
        "adjudication-queue",
        "casework.labelling.outputs:AdjudicationQueue",
        ("casework adjudicate queue",),
    ),
    OutputEntry(
        "adjudication-decided",
        "casework.labelling.outputs:AdjudicationDecided",
        ("casework adjudicate decide",),
    ),
    OutputEntry(
        "guideline-gap-list",
        "casework.labelling.outputs:GuidelineGapList",
        ("casework label guideline gaps",),
    ),
    OutputEntry(
        "guideline-list",
        "casework.labelling.outputs:GuidelineList",
        ("casework label guideline list",),
    ),
    OutputEntry("agreement", "casework.agreement.outputs:Agreement", ("casework agreement",)),
    OutputEntry("leakage-scan", "casework.leakage.outputs:LeakageScan", ("casework leakage scan",)),
    OutputEntry(
        "leakage-prompt", "casework.leakage.outputs:LeakagePrompt", ("casework leakage prompt",)
    ),
    OutputEntry(
        "leakage-corpus", "casework.leakage.outputs:LeakageCorpus", ("casework leakage corpus",)
    ),
    OutputEntry(
        "leakage-flag-list",
        "casework.leakage.outputs:LeakageFlagList",
        ("casework leakage review",),
    ),
    OutputEntry(
        "leakage-flag", "casework.leakage.outputs:LeakageFlag", ("casework leakage decide",)
    ),
    OutputEntry(
        "leakage-resolve", "casework.leakage.outputs:LeakageResolve", ("casework leakage resolve",)
    ),
    OutputEntry("mine", "casework.mining.outputs:MineOutput", ("casework mine",)),
    OutputEntry("synth", "casework.synth.outputs:SynthOutput", ("casework synth",)),
    OutputEntry(
        "shape-set-list", "casework.shapes.outputs:ShapeSetList", ("casework shapes list",)
    ),
    OutputEntry("shape-drift", "casework.shapes.outputs:ShapeDrift", ("casework shapes drift",)),
    OutputEntry(
        "shape-build", "casework.shapes.outputs:ShapeBuildOutput", ("casework shapes build",)
    ),
    OutputEntry("shape-set", "casework.shapes.outputs:ShapeSetOutput", ("casework shapes show",)),
    OutputEntry("shape", "casework.shapes.outputs:ShapeRecord", ("casework shapes show",)),
    OutputEntry(
        "shape-author",
        "casework.authoring.outputs:AuthorOutput",
        ("casework shapes author", "casework author"),
    ),
    OutputEntry(
        "shape-author-report",
        "casework.authoring.outputs:AuthorReportOutput",
        ("casework shapes report",),
    ),
    OutputEntry(
        "cases-import",
        "casework.interop.outputs:CasesImport",
        ("casework import jsonl", "casework import inspect-samples"),
    ),
    OutputEntry(
        "fncall-import", "casework.interop.outputs:FncallImport", ("casework import fncall",)
    ),
    OutputEntry("tau2-import", "casework.interop.outputs:Tau2Import", ("casework import tau2",)),
    OutputEntry(
        "agentdojo-import",
        "casework.interop.outputs:AgentDojoImport",
        ("casework import agentdojo",),
    ),
    OutputEntry("adk-import", "casework.interop.outputs:AdkImport", ("casework import adk",)),
    OutputEntry("run-import", "casework.interop.outputs:RunImport", ("casework import run",)),
    OutputEntry(
        "tool-suggestions", "casework.interop.outputs:ToolSuggestions", ("casework import tools",)
    ),
    OutputEntry("adk-export", "casework.interop.outputs:AdkExport", ("casework export adk",)),
    OutputEntry(
        "verdict-export",
        "casework.interop.outputs:VerdictExport",
        ("casework export junit", "casework export otel", "casework export openinference"),
    ),
]

#: Every output model by kind.
OUTPUTS: dict[str, OutputEntry] = {e.kind: e for e in _ENTRIES}


def output_model(kind: str) -> type[BaseModel]:
    """The model of an output kind (a key of :data:`OUTPUTS`)."""
    module, _, name = OUTPUTS[kind].target.partition(":")
    model: type[BaseModel] = getattr(importlib.import_module(module), name)
    return model


def emit(output: BaseModel) -> None:
    """Print a command's output model as indented JSON on stdout: the one way commands print JSON."""
    data: Any = output.model_dump(mode="json", by_alias=True)
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def emit_document(data: Any) -> None:
    """Print a document of a file format as indented JSON on stdout, as the format holds it.

    For what is not a command's output but a file's content: a JSON Schema (`casework schema`),
    a case record (`dataset show`), tool declarations to paste into the agent's code. Dates and
    other values print through ``str``.
    """
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
