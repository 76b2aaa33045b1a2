"""The `export` group: verdicts and cases out to other tools (JUnit, OTel, OpenInference, Inspect, ADK)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from casework.cli._output import emit
from casework.cli.context import FORMAT, console, example, pass_project
from casework.interop import VerdictFormat, export_verdicts
from casework.interop.adk import export_adk
from casework.interop.inspect import export_inspect_samples
from casework.project import Project
from casework.schema import SPLITS

__all__ = ["COMMANDS", "export_adk_cmd"]


@click.group("export")
def export_group() -> None:
    """Send verdicts and cases to other tools: JUnit XML, OpenTelemetry, OpenInference, Inspect, ADK.

    See docs/interop.md.
    """


def _export_command(
    name: VerdictFormat, doc: str, default_out: str, *examples: str
) -> click.Command:
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
        report = export_verdicts(
            project,
            run,
            name,
            out,
            endpoint=extra.get("endpoint"),
            project_name=extra.get("project_name", "default"),
        )
        if fmt == "json":
            from casework.interop.outputs import VerdictExport  # here: only JSON output needs it

            emit(VerdictExport.model_validate(asdict(report)))
            return
        what = "test case(s)" if name == "junit" else "evaluation(s)"
        console.print(f"{report.run_id}: wrote {report.records} {what} to {report.out}")
        if report.posted and report.sent is not None:
            console.print(
                f"sent {report.sent} annotation(s) to Phoenix {report.posted}: HTTP {report.status}"
            )
        elif report.posted:
            console.print(f"posted to {report.posted}: HTTP {report.status}")
        for s in report.skipped:
            console.print(
                f"skipped {s.evaluations} annotation(s) of {s.case_id} trial {s.trial}: {s.reason}",
                markup=False,
            )

    command.__doc__ = doc
    if name == "otel":
        command = click.option(
            "--endpoint",
            default=None,
            help="Also POST the events to this OTLP/HTTP endpoint (`/v1/logs` is appended). "
            "Credentials: `user:password@` in it (sent as Basic auth) or the headers in "
            "OTEL_EXPORTER_OTLP_HEADERS; never printed.",
        )(command)
    if name == "openinference":
        command = click.option(
            "--endpoint",
            default=None,
            help="Also send the annotations to this Phoenix server (its URL, e.g. "
            "http://localhost:6006), only for spans it holds; the others are listed with the "
            "reason. API key: PHOENIX_API_KEY; never printed.",
        )(command)
        command = click.option(
            "--phoenix-project",
            "project_name",
            default="default",
            show_default=True,
            help="The Phoenix project whose spans are annotated (with --endpoint).",
        )(command)
    made = example(*examples)(click.command(name)(command))
    export_group.add_command(made)
    return made


_export_command(
    "junit",
    """Write RUN's verdicts as JUnit XML: one test case per case, trials as properties.

    A case fails when any trial failed; each failing check is a line of its failure message.
    """,
    "casework-junit.xml",
    "casework export junit latest -o reports/casework-junit.xml",
)
_export_command(
    "otel",
    """Write RUN's verdicts as OpenTelemetry `gen_ai.evaluation.result` events (OTLP/JSON logs).

    One event per trial verdict and per check, on the trial's trace and span.
    """,
    "casework-otel.json",
    "casework export otel latest --endpoint http://localhost:4318",
)
_export_command(
    "openinference",
    """Write RUN's verdicts as OpenInference span annotations (name, score, label, explanation).

    The file is the body of Phoenix's `POST /v1/span_annotations`. With --endpoint, only
    annotations of spans the Phoenix project holds are sent (the agent must report its span in
    trajectory.metadata); each other trial is listed with the reason.
    """,
    "casework-openinference.json",
    "casework export openinference latest -o phoenix-annotations.json",
    "casework export openinference latest --endpoint http://localhost:6006 --phoenix-project my-agent",
)


@example("casework export inspect-samples refunds@3 -o samples.jsonl --split holdout")
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


@example("casework export adk refunds@latest --out my_agent/refunds.evalset.json --split dev")
@export_group.command("adk")
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
        from casework.interop.outputs import AdkExport  # here: only JSON output needs it

        emit(AdkExport.model_validate(asdict(report)))
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


COMMANDS: list[click.Command] = [export_group]
