"""Other eval tools' formats: `interop` (ADK eval sets), `import-run`, `import`, `export`."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from casework.cli.context import FORMAT, console, emit_json, pass_project
from casework.interop import (
    FNCALL_STYLES,
    RESULT_FORMATS,
    CaseDefaults,
    FncallOptions,
    ImportOptions,
    RunImportOptions,
    Tau2Options,
    VerdictFormat,
    export_adk,
    export_inspect_samples,
    export_verdicts,
    import_adk,
    import_cases,
    import_fncall,
    import_run,
    import_tau2,
    suggest_tools,
)
from casework.project import Project
from casework.schema import SPLITS

__all__ = ["COMMANDS"]

_FORMAT_NAMES = {
    "eval_set": "EvalSet",
    "query_list": "legacy query list",
    "named_list": "legacy named list",
}


@click.group("interop")
def interop_group() -> None:
    """Import and export other eval tools' formats (Google ADK eval sets)."""


@interop_group.command("import-adk")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--dataset", required=True, help="Dataset the cases are added to (created if new).")
@click.option("--slice", "slice_", required=True, help="Slice of the imported cases.")
@click.option(
    "--split",
    # Not smoke: that split holds retired cases, and nothing is imported retired.
    type=click.Choice([s for s in SPLITS if s != "smoke"]),
    default="dev",
    show_default=True,
    help="Split of the imported cases.",
)
@click.option(
    "--id-prefix",
    default="",
    help="Put before every imported id (the eval id, sanitised), e.g. `adk-`.",
)
@click.option("-m", "--message", default=None, help="Release message.")
@FORMAT
@pass_project
def import_adk_cmd(
    project: Project,
    files: tuple[Path, ...],
    dataset: str,
    slice_: str,
    split: Any,
    id_prefix: str,
    message: str | None,
    fmt: str,
) -> None:
    """Import Google ADK eval FILES (EvalSet JSON, or the legacy lists) as cases of a dataset.

    Each ADK eval case becomes one hand-written case testing its last invocation: the earlier
    invocations (user text, expected reply and tool calls) are the conversation prefix, the
    session state is the situation's state, and the last invocation's expected tool calls are
    required tools with exact arguments. Outcome `resolve` is assumed; the reference reply becomes
    the judge's rubric. Nothing is written when any file is bad or an id already exists.
    """
    options = ImportOptions(slice=slice_, split=split, id_prefix=id_prefix)
    report = import_adk(project, list(files), dataset, options, message)
    if fmt == "json":
        data = asdict(report)
        data["version"] = report.version.model_dump(mode="json") if report.version else None
        emit_json(data)
        return
    formats = ", ".join(f"{n} {_FORMAT_NAMES[k]}" for k, n in sorted(report.formats.items()))
    console.print(
        f"read {len(report.imported)} eval case(s) from {len(report.files)} file(s) ({formats})"
    )
    console.print(f"imported: {', '.join(report.imported)}")
    for note in report.notes:
        console.print(f"note: {note}")
    if report.version is None:
        console.print(f"{report.dataset}: content unchanged; no release.")
    else:
        v = report.version
        console.print(
            f"{report.dataset}@{v.number} released: {v.hash[:12]} ({v.counts.cases} cases)"
        )
    if report.undeclared_tools:
        console.print(f"tools not declared by the agent: {', '.join(report.undeclared_tools)}")
    console.print(
        f"next: run `casework check {report.dataset}` (imported cases may name tools the agent "
        "does not declare) and review the assumed outcome `resolve`."
    )


@interop_group.command("export-adk")
@click.argument("ref", metavar="DATASET[@VERSION]")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="EvalSet JSON file to write (e.g. `my_agent/refunds.evalset.json`).",
)
@click.option("--slice", "slices", multiple=True, help="Export only this slice (repeatable).")
@click.option(
    "--split",
    "splits",
    multiple=True,
    type=click.Choice(SPLITS),
    help="Export only this split (repeatable).",
)
@FORMAT
@pass_project
def export_adk_cmd(
    project: Project,
    ref: str,
    out: Path,
    slices: tuple[str, ...],
    splits: tuple[Any, ...],
    fmt: str,
) -> None:
    """Write a dataset version as a Google ADK EvalSet JSON file.

    One eval case per case: the conversation's turns become invocations and the last one expects
    the label's required tools (exact arguments), with no reference reply. Frozen cases are never
    exported; unlabelled cases are skipped. Both are counted.
    """
    report = export_adk(project, ref, out, slices=slices, splits=splits)
    if fmt == "json":
        emit_json(asdict(report))
        return
    console.print(
        f"{report.ref}: wrote {len(report.exported)} eval case(s) to {report.out} "
        f"(eval_set_id {report.eval_set_id})"
    )
    if report.frozen:
        console.print(f"skipped {report.frozen} frozen case(s): frozen cases are never exported")
    if report.unlabelled:
        console.print(f"skipped {report.unlabelled} unlabelled case(s)")
    if report.unshaped:
        console.print(
            f"skipped {len(report.unshaped)} case(s) not starting and ending with a user turn: "
            + ", ".join(report.unshaped)
        )
    for what, n in report.left_out.items():
        console.print(f"left out (ADK cannot express them): {what} of {n} case(s)")


@click.command("import-run")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--results-format",
    "results_format",
    type=click.Choice(RESULT_FORMATS),
    required=True,
    help="generic (JSONL, one trial a line), inspect (Inspect AI .eval/.json log) or tau "
    "(τ-bench results JSON).",
)
@click.option(
    "--map",
    "mapping",
    multiple=True,
    metavar="DST=SRC.PATH",
    help="Read field DST from SRC.PATH (generic; `scorer=NAME` picks an Inspect scorer). Repeatable.",
)
@click.option("--dataset", default=None, help="Dataset whose case ids the task ids are.")
@click.option("--version", "version", type=int, default=None, help="Release the run was on.")
@click.option(
    "--dataset-hash", default=None, help="Content hash (8+ hex) of the release the run was on."
)
@click.option(
    "--threshold",
    type=float,
    default=1.0,
    show_default=True,
    help="A trial passes when its reward is at least this.",
)
@click.option("--run-id", default=None, help="Id of the imported run (default: from the file).")
@click.option("--agent-version", default=None, help="Version label of the agent that was run.")
@FORMAT
@pass_project
def import_run_cmd(
    project: Project,
    file: Path,
    results_format: Any,
    mapping: tuple[str, ...],
    dataset: str | None,
    version: int | None,
    dataset_hash: str | None,
    threshold: float,
    run_id: str | None,
    agent_version: str | None,
    fmt: str,
) -> None:
    """Import another tool's per-trial results FILE as a casework run log in runs/.

    Pinned to a release of `--dataset` (task ids are case ids) or standing alone. `results`,
    `compare` and `report` then read it; `gate` fails it (no per-check evidence). Nothing is
    written when any line is bad.
    """
    options = RunImportOptions(
        format=results_format,
        mapping=mapping,
        dataset=dataset,
        version=version,
        dataset_hash=dataset_hash,
        threshold=threshold,
        run_id=run_id,
        agent_version=agent_version,
    )
    report = import_run(project, file, options)
    if fmt == "json":
        emit_json(asdict(report))
        return
    console.print(
        f"run {report.run_id}: {report.trials} trial(s) of {report.cases} task(s) (k={report.k}), "
        f"{report.passed} passed, on {report.dataset_ref}; wrote {report.path}"
    )
    console.print(f"next: casework results show {report.run_id}")


@click.group("export")
def export_group() -> None:
    """Send verdicts and cases to other tools: JUnit XML, OpenTelemetry, OpenInference, Inspect."""


def _export_command(name: VerdictFormat, doc: str, default_out: str) -> click.Command:
    @click.argument("run")
    @click.option(
        "-o",
        "--out",
        type=click.Path(dir_okay=False, path_type=Path),
        default=default_out,
        show_default=True,
        help="File to write.",
    )
    @FORMAT
    @pass_project
    def command(project: Project, run: str, out: Path, fmt: str, **extra: Any) -> None:
        report = export_verdicts(project, run, name, out, endpoint=extra.get("endpoint"))
        if fmt == "json":
            emit_json(asdict(report))
            return
        what = "test case(s)" if name == "junit" else "evaluation(s)"
        console.print(f"{report.run_id}: wrote {report.records} {what} to {report.out}")
        if report.posted:
            console.print(f"posted to {report.posted}: HTTP {report.status}")

    command.__doc__ = doc
    if name == "otel":
        command = click.option(
            "--endpoint",
            default=None,
            help="Also POST the events to this OTLP/HTTP endpoint (`/v1/logs` is appended). "
            "Credentials: `user:password@` in it (sent as Basic auth) or the headers in "
            "OTEL_EXPORTER_OTLP_HEADERS; never printed.",
        )(command)
    return export_group.command(name)(command)


_export_command(
    "junit",
    """Write RUN's verdicts as JUnit XML: one test case per case, trials as properties.

    A case fails when any trial failed; each failing check is a line of its failure message.
    """,
    "casework-junit.xml",
)
_export_command(
    "otel",
    """Write RUN's verdicts as OpenTelemetry `gen_ai.evaluation.result` events (OTLP/JSON logs).

    One event per trial verdict and per check, on the trial's trace and span.
    """,
    "casework-otel.json",
)
_export_command(
    "openinference",
    """Write RUN's verdicts as OpenInference span annotations (name, score, label, explanation).

    The file is the body of Phoenix's `POST /v1/span_annotations`.
    """,
    "casework-openinference.json",
)


@click.group("import")
def import_group() -> None:
    """Import labelled cases: JSONL with --map, Inspect samples, τ²-bench, function-calling rows."""


def _import_cases(
    project: Project,
    file: Path,
    dataset: str,
    defaults: CaseDefaults,
    mapping: tuple[str, ...],
    message: str | None,
    fmt: str,
) -> None:
    report = import_cases(project, file, dataset, defaults, mapping, message)
    if fmt == "json":
        data = asdict(report)
        data["version"] = report.version.model_dump(mode="json") if report.version else None
        emit_json(data)
        return
    console.print(f"read {len(report.imported)} case(s) from {report.file}")
    if report.version is None:
        console.print(f"{report.dataset}: content unchanged; no release.")
    else:
        v = report.version
        console.print(
            f"{report.dataset}@{v.number} released: {v.hash[:12]} ({v.counts.cases} cases)"
        )
    console.print(f"next: run `casework check {report.dataset}`")


def _case_options(command: Any) -> Any:
    for option in reversed(
        [
            click.argument("file", type=click.Path(path_type=Path)),
            click.option("--dataset", required=True, help="Dataset the cases are added to."),
            click.option(
                "--slice",
                "slice_",
                default="imported",
                show_default=True,
                help="Slice of rows that name none.",
            ),
            click.option(
                "--split",
                type=click.Choice([s for s in SPLITS if s != "smoke"]),
                default="dev",
                show_default=True,
                help="Split of rows that name none.",
            ),
            click.option(
                "--map",
                "mapping",
                multiple=True,
                metavar="DST=SRC.PATH",
                help="Read case field DST from SRC.PATH (repeatable).",
            ),
            click.option("-m", "--message", default=None, help="Release message."),
            FORMAT,
            pass_project,
        ]
    ):
        command = option(command)
    return command


@import_group.command("jsonl")
@_case_options
def import_jsonl_cmd(
    project: Project,
    file: Path,
    dataset: str,
    slice_: str,
    split: Any,
    mapping: tuple[str, ...],
    message: str | None,
    fmt: str,
) -> None:
    """Import labelled cases from FILE (JSONL, a JSON list, or CSV), fields found by --map.

    Each row needs an id, an input (text or messages) and an outcome; required and forbidden
    tools, answer facts, state, slice and split are read when present. Every bad row is
    reported by line and nothing is written.
    """
    defaults = CaseDefaults("jsonl", slice_, split)
    _import_cases(project, file, dataset, defaults, mapping, message, fmt)


@import_group.command("inspect-samples")
@_case_options
def import_inspect_cmd(
    project: Project,
    file: Path,
    dataset: str,
    slice_: str,
    split: Any,
    mapping: tuple[str, ...],
    message: str | None,
    fmt: str,
) -> None:
    """Import Inspect AI samples (JSONL or CSV: input, target, id, metadata) as cases.

    `target` becomes the answer facts; `metadata` may carry slice, split, outcome (default
    `resolve`) and required tools. Nothing is written when any row is bad.
    """
    defaults = CaseDefaults("inspect", slice_, split)
    _import_cases(project, file, dataset, defaults, mapping, message, fmt)


def _released(dataset: str, version: Any) -> None:
    if version is None:
        console.print(f"{dataset}: content unchanged; no release.")
    else:
        console.print(
            f"{dataset}@{version.number} released: {version.hash[:12]} "
            f"({version.counts.cases} cases)"
        )


@import_group.command("tau2")
@click.argument("domain_dir", type=click.Path(path_type=Path))
@click.option("--dataset", required=True, help="Dataset the domain's tasks go to.")
@click.option(
    "--split-file",
    type=click.Path(path_type=Path),
    default=None,
    help="τ²-bench split file (default: split_tasks.json in DOMAIN_DIR); train → dev, test → "
    "holdout.",
)
@click.option("--slice", "slice_", default=None, help="Slice of the cases (default: the folder).")
@click.option(
    "--split",
    type=click.Choice([s for s in SPLITS if s != "smoke"]),
    default="dev",
    show_default=True,
    help="Split of tasks the split file does not place.",
)
@click.option("--id-prefix", default=None, help="Prepended to task ids (default: `<folder>-`).")
@click.option("-m", "--message", default=None, help="Release message.")
@FORMAT
@pass_project
def import_tau2_cmd(
    project: Project,
    domain_dir: Path,
    dataset: str,
    split_file: Path | None,
    slice_: str | None,
    split: Any,
    id_prefix: str | None,
    message: str | None,
    fmt: str,
) -> None:
    """Import a τ²-bench domain (tasks.json, split file, db.json, tools) as a slice of cases.

    One case per task: the user scenario, the database as shared state (copied into states/,
    agent_data as a state patch), golden actions for the golden-replay oracle, communicate_info
    as matched facts and nl_assertions as rubric items; the tools (tools.json, or tools.py read
    without running it) become the cases' catalogue. The slice is replaced as a whole, so a
    later revision of the task file releases exactly the changed tasks.
    """
    options = Tau2Options(slice_, split, id_prefix)
    report = import_tau2(project, domain_dir, dataset, options, split_file, message)
    if fmt == "json":
        data = asdict(report)
        data["version"] = report.version.model_dump(mode="json") if report.version else None
        emit_json(data)
        return
    console.print(f"read {len(report.imported)} task(s) into slice {report.slice}")
    if report.state:
        console.print(f"shared state: {report.state}")
    if report.tools:
        console.print(f"tools ({report.tools_source}): {report.tools}")
    else:
        console.print("no tools.json or tools.py found: the cases offer the declared tools")
    for what, n in report.not_carried.items():
        console.print(f"not carried: {what} ({n} task(s))")
    _released(report.dataset, report.version)
    console.print(
        f"next: `casework check {report.dataset}`; running needs a tool environment for the "
        "domain's tools (`\\[run] environment`)"
    )


@import_group.command("fncall")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--dataset", required=True, help="Dataset the cases are added to.")
@click.option(
    "--style",
    type=click.Choice(FNCALL_STYLES),
    default="generic",
    show_default=True,
    help="Default field paths: when2call (uuid, question, tools, target_tool, correct_answer), "
    "bfcl (id, question, function, ground_truth) or generic.",
)
@click.option(
    "--map",
    "mapping",
    multiple=True,
    metavar="DST=SRC.PATH",
    help="Read field DST (id, input, tools, expected, outcome, slice, split) from SRC.PATH.",
)
@click.option("--slice", "slice_", default="fncall", show_default=True, help="Default slice.")
@click.option(
    "--split",
    type=click.Choice([s for s in SPLITS if s != "smoke"]),
    default="dev",
    show_default=True,
    help="Split of rows that name none.",
)
@click.option("--id-prefix", default="", help="Prepended to each row's id.")
@click.option(
    "--answers",
    type=click.Path(path_type=Path),
    default=None,
    help="BFCL's possible_answer JSONL ({id, ground_truth}), joined into the rows by id.",
)
@click.option("-m", "--message", default=None, help="Release message.")
@FORMAT
@pass_project
def import_fncall_cmd(
    project: Project,
    file: Path,
    dataset: str,
    style: Any,
    mapping: tuple[str, ...],
    slice_: str,
    split: Any,
    id_prefix: str,
    answers: Path | None,
    message: str | None,
    fmt: str,
) -> None:
    """Import function-calling rows (When2Call, BFCL, similar JSONL) with their offered tools.

    Each row's tools become its own catalogue; an expected call → resolve with that call
    required, an ask for a missing parameter → clarify, no suitable tool → refuse (both with the
    offered tools forbidden). Every bad row is reported by line and nothing is written.
    """
    options = FncallOptions(style, slice_, split, id_prefix)
    report = import_fncall(project, file, dataset, options, mapping, message, answers)
    if fmt == "json":
        data = asdict(report)
        data["version"] = report.version.model_dump(mode="json") if report.version else None
        emit_json(data)
        return
    outcomes = ", ".join(f"{n} {k}" for k, n in report.outcomes.items())
    console.print(f"read {len(report.imported)} case(s) from {report.file} ({outcomes})")
    console.print(f"tool catalogues: {len(report.catalogues)} file(s) under catalogues/")
    _released(report.dataset, report.version)
    console.print(f"next: run `casework check {report.dataset}`")


@export_group.command("inspect-samples")
@click.argument("ref", metavar="DATASET[@VERSION]")
@click.option(
    "-o", "--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
    help="JSONL file to write.",
)  # fmt: skip
@click.option("--slice", "slices", multiple=True, help="Export only this slice (repeatable).")
@click.option(
    "--split", "splits", multiple=True, type=click.Choice(SPLITS), help="Export only this split."
)
@pass_project
def export_inspect_cmd(
    project: Project, ref: str, out: Path, slices: tuple[str, ...], splits: tuple[str, ...]
) -> None:
    """Write DATASET[@VERSION]'s cases as Inspect AI samples (JSONL); frozen cases never."""
    n = export_inspect_samples(project, ref, out, slices=slices, splits=splits)
    console.print(f"{ref}: wrote {n} sample(s) to {project.relative(out)}")


@click.group("tools")
def tools_group() -> None:
    """Tool declarations from what a team already has: ADK tool uses, trace tool definitions."""


@tools_group.command("suggest")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--from",
    "source",
    type=click.Choice(["adk", "traces"]),
    required=True,
    help="adk (ADK eval files: tools their invocations use) or traces (OTLP JSON spans with "
    "gen_ai.tool.definitions or OpenInference llm.tools).",
)
@click.option(
    "-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Write the patch here (default: print it).",
)  # fmt: skip
@FORMAT
@pass_project
def tools_suggest_cmd(
    project: Project, files: tuple[Path, ...], source: Any, out: Path | None, fmt: str
) -> None:
    """Suggest declarations for the tools FILES use that the agent does not declare.

    Prints a unified diff of the declared tools file to review and apply (`git apply`); the
    parameters of tools seen only in calls are inferred from the arguments, so check them.
    """
    result = suggest_tools(project, list(files), source)
    if fmt == "json":
        emit_json(asdict(result))
        return
    if not result.suggested:
        console.print(
            "every tool found is declared already" if result.already_declared else "no tool found"
        )
        return
    if result.target is None:
        console.print("the agent declares tools with `tools_from`: add these there")
        emit_json([s.declaration for s in result.suggested])
        return
    if out is not None:
        out.write_text(result.patch, encoding="utf-8")
        names = ", ".join(s.declaration["name"] for s in result.suggested)
        console.print(f"wrote a patch of {result.target} adding {names} to {project.relative(out)}")
        console.print(f"next: review it, then `git apply {project.relative(out)}`")
    else:
        click.echo(result.patch, nl=False)


COMMANDS: list[click.Command] = [
    interop_group,
    import_run_cmd,
    import_group,
    export_group,
    tools_group,
]
