"""The `import` group: cases, ADK eval sets, other tools' runs and tool declarations come in."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from casework.cli._moved import moved
from casework.cli._output import emit, emit_document
from casework.cli.context import FORMAT, console, example, pass_project
from casework.cli.export import export_adk_cmd
from casework.interop import RESULT_FORMATS, RunImportOptions, import_run, suggest_tools
from casework.interop.adk import ImportOptions, import_adk
from casework.interop.fncall import FNCALL_STYLES, FncallOptions, import_fncall
from casework.interop.generic import CaseDefaults, import_cases
from casework.interop.tau2 import Tau2Options, import_tau2
from casework.project import Project
from casework.schema import SPLITS

__all__ = ["COMMANDS"]

_FORMAT_NAMES = {
    "eval_set": "EvalSet",
    "query_list": "legacy query list",
    "named_list": "legacy named list",
}


@click.group("import")
def import_group() -> None:
    """Bring in what other tools hold: cases, ADK eval sets, runs, tool declarations.

    Cases: JSONL with --map, Inspect samples, τ²-bench domains, function-calling rows, ADK eval
    sets; per-trial results of another tool as a run; tool declarations to review. See
    docs/interop.md.
    """


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
        from casework.interop.outputs import CasesImport  # here: only JSON output needs it

        emit(CasesImport.model_validate(asdict(report)))
        return
    console.print(f"read {len(report.imported)} case(s) from {report.file}")
    if report.version is None:
        console.print(f"{report.dataset}: content unchanged; no release.")
    else:
        v = report.version
        console.print(
            f"{report.dataset}@{v.number} released: {v.hash[:12]} ({v.counts.cases} cases)"
        )
    console.print(f"next: run `casework dataset check {report.dataset}`")


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


@example(
    "casework import jsonl rows.jsonl --dataset refunds --map situation.goal=question",
)
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


@example("casework import inspect-samples samples.jsonl --dataset refunds --slice refunds")
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


@example(
    "casework import tau2 --domain airline --dataset airline",
    "casework import tau2 --domain telecom --tasks tasks_small.json --dataset telecom",
    "casework import tau2 tau2-bench/data/tau2/domains/airline --dataset airline",
)
@import_group.command("tau2")
@click.argument("domain_dir", type=click.Path(path_type=Path), required=False)
@click.option(
    "--domain",
    default=None,
    help="A domain of the installed τ²-bench (airline, retail, telecom), instead of DOMAIN_DIR.",
)
@click.option("--dataset", required=True, help="Dataset the domain's tasks go to.")
@click.option(
    "--tasks",
    "tasks_file",
    default="tasks.json",
    show_default=True,
    help="Tasks file in the domain's folder (telecom also has tasks_small.json).",
)
@click.option(
    "--tools",
    "tools_file",
    type=click.Path(path_type=Path),
    default=None,
    help="tools.json or tools.py of the domain, for a layout where it is not beside the data.",
)
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
    domain_dir: Path | None,
    domain: str | None,
    dataset: str,
    tasks_file: str,
    tools_file: Path | None,
    split_file: Path | None,
    slice_: str | None,
    split: Any,
    id_prefix: str | None,
    message: str | None,
    fmt: str,
) -> None:
    """Import a τ²-bench domain (tasks, split file, database, tools) as a slice of cases.

    Give --domain for the installed τ²-bench, or the domain's data folder. One case per task:
    the user scenario, the database as shared state (copied into states/), golden actions for
    the golden-replay oracle, communicate_info as matched facts, nl_assertions as rubric items,
    and τ²'s own scoring as published (reward basis, env_assertions, initialization actions:
    `oracle.tau2`). The tools are τ²'s own declarations (or tools.json / tools.py read without
    running it); telecom's user tools become the simulated user's catalogue. Ids the name rule
    refuses become safe ids; the original stays in `provenance.original_id`. A task whose reward
    basis cannot be scored is named and fails `dataset check`. The slice is replaced as a whole.
    """
    options = Tau2Options(slice_, split, id_prefix)
    report = import_tau2(
        project,
        domain_dir,
        dataset,
        options,
        split_file,
        message,
        domain=domain,
        tasks_file=tasks_file,
        tools_file=tools_file,
    )
    if fmt == "json":
        from casework.interop.outputs import Tau2Import  # here: only JSON output needs it

        emit(Tau2Import.model_validate(asdict(report)))
        return
    console.print(f"read {len(report.imported)} task(s) into slice {report.slice}")
    if report.renamed:
        console.print(
            f"{len(report.renamed)} task id(s) the name rule refuses got safe ids "
            "(the original is kept as provenance.original_id)"
        )
    if report.state:
        console.print(f"shared state: {report.state}")
    if report.tools:
        console.print(f"tools ({report.tools_source}): {report.tools}")
    else:
        console.print("no tools found (give --tools): the cases offer the declared tools")
    if report.user_tools:
        console.print(f"the user's own tools: {report.user_tools}")
    if report.evaluator:
        console.print(f"scored as τ²'s {report.evaluator} domain scores it (oracle.tau2)")
    for task, parts in report.lost.items():
        console.print(
            f"not gradable: task {task}: {', '.join(parts)} of its reward basis is lost",
            markup=False,
        )
    for what, n in report.not_carried.items():
        console.print(f"not used by casework's own checks: {what} ({n} task(s))")
    _released(report.dataset, report.version)
    console.print(f"next: `casework dataset check {report.dataset}`")


@example("casework import agentdojo workspace --dataset agentdojo")
@import_group.command("agentdojo")
@click.argument("suite")
@click.option("--dataset", required=True, help="Dataset the suite's tasks go to.")
@click.option(
    "--version",
    "benchmark_version",
    default="v1.2.2",
    show_default=True,
    help="AgentDojo benchmark version (its own default).",
)
@click.option(
    "--attack",
    default="important_instructions",
    show_default=True,
    help="AgentDojo attack whose injections make the user × injection security cases; "
    "`none` imports the user tasks only.",
)
@click.option(
    "--target-model",
    default=None,
    help="Model the attack text addresses, as AgentDojo names them (gpt-4o-2024-05-13 → "
    "'GPT-4'). Default: none, the text says 'the AI language model' (AgentDojo's own "
    "important_instructions_no_model_name wording).",
)
@click.option("-m", "--message", default=None, help="Release message.")
@FORMAT
@pass_project
def import_agentdojo_cmd(
    project: Project,
    suite: str,
    dataset: str,
    benchmark_version: str,
    attack: str,
    target_model: str | None,
    message: str | None,
    fmt: str,
) -> None:
    """Import an installed AgentDojo suite (workspace, travel, banking, slack) as a slice.

    One utility case per user task and one security case per user task × injection task (the
    attack's injections planted in the state); the suite's default environment is the shared
    state, its tools the catalogue, and AgentDojo's own utility and security functions the
    programmatic oracle, which brings AgentDojo's tools: `casework run` needs no configuration.
    Needs the `agentdojo` package. See docs/interop.md.
    """
    # Imported here: the agentdojo package is an optional extra, loaded only for this command.
    from casework.interop.agentdojo import AgentDojoOptions, import_agentdojo

    options = AgentDojoOptions(
        benchmark_version, None if attack == "none" else attack, target_model
    )
    report = import_agentdojo(project, suite, dataset, options, message)
    if fmt == "json":
        from casework.interop.outputs import AgentDojoImport  # here: only JSON output needs it

        emit(AgentDojoImport.model_validate(asdict(report)))
        return
    console.print(
        f"read AgentDojo {report.version} {report.suite}: {report.user_tasks} user task(s), "
        f"{report.injection_tasks} injection task(s) → {report.security_cases} security case(s)"
    )
    console.print(f"shared state: {report.state}; tools: {report.tools}")
    _released(report.dataset, report.release)
    console.print(
        f"runs with AgentDojo's own tools ({report.environment}), no configuration: "
        f"`casework run {report.dataset} --agent …`",
        markup=False,
    )


@example(
    "casework import fncall bfcl_simple.jsonl --dataset bfcl --style bfcl --answers answers.jsonl"
)
@import_group.command("fncall")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--dataset", required=True, help="Dataset the cases are added to.")
@click.option(
    "--style",
    type=click.Choice(FNCALL_STYLES),
    default="generic",
    show_default=True,
    help="Default field paths: when2call (uuid, question, tools, answers.tool_call as the "
    "expected call, correct_answer as outcome and slice; target_tool is the tool's declaration "
    "and is not read), bfcl (id, question, function, ground_truth) or generic.",
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
    offered tools forbidden). BFCL's multi-turn rows come in with their per-turn ground truth but
    are not gradable (BFCL executes them on its own classes): the output counts them with the
    reason, and `casework dataset check` fails them. Every bad row is reported by line and
    nothing is written.
    """
    options = FncallOptions(style, slice_, split, id_prefix)
    report = import_fncall(project, file, dataset, options, mapping, message, answers)
    if fmt == "json":
        from casework.interop.outputs import FncallImport  # here: only JSON output needs it

        emit(FncallImport.model_validate(asdict(report)))
        return
    outcomes = ", ".join(f"{n} {k}" for k, n in report.outcomes.items())
    console.print(
        f"read {len(report.imported)} case(s) from {report.file}"
        + (f" ({outcomes})" if outcomes else "")
    )
    console.print(f"tool catalogues: {len(report.catalogues)} file(s) under catalogues/")
    reasons: dict[str, int] = {}
    for reason in report.not_gradable.values():
        reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in sorted(reasons.items()):
        console.print(f"not gradable: {count} case(s): {reason}", markup=False)
    _released(report.dataset, report.version)
    console.print(f"next: run `casework dataset check {report.dataset}`")


@example(
    "casework import adk my_agent/refunds.evalset.json --dataset refunds --slice refunds",
)
@import_group.command("adk")
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
@click.option(
    "--reference",
    type=click.Choice(["response-match", "judge"]),
    default="response-match",
    show_default=True,
    help="How a reference reply is checked: ADK's response_match_score (ROUGE-1 >= 0.8, "
    "offline) or the judge.",
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
    reference: str,
    message: str | None,
    fmt: str,
) -> None:
    """Import Google ADK eval FILES (EvalSet JSON, or the legacy lists) as cases of a dataset.

    Each ADK eval case becomes one hand-written case testing its last invocation: the earlier
    invocations (user text, expected reply and tool calls) are the conversation prefix, the
    session state is the situation's state, and the last invocation's expected tool calls are
    required tools with exact arguments, and their recorded results replay fixtures. Outcome
    `resolve` is assumed; the reference reply is checked by ADK's own response_match_score (or,
    with --reference judge, the judge's rubric). A conversation_scenario becomes a simulated user.
    Nothing is written when any file is bad or an id already exists.
    """
    options = ImportOptions(
        slice=slice_,
        split=split,
        id_prefix=id_prefix,
        reference="judge" if reference == "judge" else "response_match",
    )
    report = import_adk(project, list(files), dataset, options, message)
    if fmt == "json":
        from casework.interop.outputs import AdkImport  # here: only JSON output needs it

        emit(AdkImport.model_validate(asdict(report)))
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
        f"next: run `casework dataset check {report.dataset}` (imported cases may name tools the agent "
        "does not declare) and review the assumed outcome `resolve`."
    )


@example(
    "casework import run inspect-logs/2026-04-02.eval --results-format inspect --dataset refunds",
    "casework import run tau2-results/airline.json --results-format tau2 --dataset airline",
)
@import_group.command("run")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--results-format",
    "results_format",
    type=click.Choice(RESULT_FORMATS),
    required=True,
    help="generic (JSONL, one trial a line), inspect (Inspect AI .eval/.json log), tau "
    "(τ-bench results JSON) or tau2 (τ²-bench results JSON, the simulated user's record kept).",
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
@click.option(
    "--id-map",
    type=click.Path(path_type=Path),
    default=None,
    help="JSON object of task id: case id, for task ids that are neither case ids nor the "
    'original ids kept at import (τ-bench\'s "0" finds τ² airline\'s "airline-0" alone).',
)
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
    id_map: Path | None,
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
        id_map=id_map,
    )
    report = import_run(project, file, options)
    if fmt == "json":
        from casework.interop.outputs import RunImport  # here: only JSON output needs it

        emit(RunImport.model_validate(asdict(report)))
        return
    console.print(
        f"run {report.run_id}: {report.trials} trial(s) of {report.cases} task(s) (k={report.k}), "
        f"{report.passed} passed, on {report.dataset_ref}; wrote {report.path}"
    )
    console.print(f"next: casework results show {report.run_id}")


@example(
    "casework import tools adk_evals/*.test.json --from adk -o tools.patch",
    "casework import tools traces/otel-spans.json --from traces",
)
@import_group.command("tools")
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
def import_tools_cmd(
    project: Project, files: tuple[Path, ...], source: Any, out: Path | None, fmt: str
) -> None:
    """Suggest declarations for the tools FILES use that the agent does not declare.

    Prints a unified diff of the declared tools file to review and apply (`git apply`); the
    parameters of tools seen only in calls are inferred from the arguments, so check them.
    """
    result = suggest_tools(project, list(files), source)
    if fmt == "json":
        from casework.interop.outputs import ToolSuggestions  # here: only JSON output needs it

        emit(ToolSuggestions.model_validate(asdict(result)))
        return
    if not result.suggested:
        console.print(
            "every tool found is declared already" if result.already_declared else "no tool found"
        )
        return
    if result.target is None:
        console.print("the agent declares tools with `tools_from`: add these there")
        emit_document([s.declaration for s in result.suggested])
        return
    if out is not None:
        out.write_text(result.patch, encoding="utf-8")
        names = ", ".join(s.declaration["name"] for s in result.suggested)
        console.print(f"wrote a patch of {result.target} adding {names} to {project.relative(out)}")
        console.print(f"next: review it, then `git apply {project.relative(out)}`")
    else:
        click.echo(result.patch, nl=False)


#: The old spellings, hidden for one release.
_interop = click.Group("interop", help="Import and export Google ADK eval sets.")
_interop.add_command(moved(import_adk_cmd, "interop import-adk", "import adk"))
_interop.add_command(moved(export_adk_cmd, "interop export-adk", "export adk"))
_interop.hidden = True
_tools = click.Group("tools", help="Tool declarations from what a team already has.")
_tools.add_command(moved(import_tools_cmd, "tools suggest", "import tools"))
_tools.hidden = True

COMMANDS: list[click.Command] = [import_group]
ALIASES: list[click.Command] = [
    _interop,
    moved(import_run_cmd, "import-run", "import run"),
    _tools,
]
