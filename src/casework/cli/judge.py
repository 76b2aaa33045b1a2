"""The `judge` group: `labeller-check`, `sample`, `certify`, `tune add`.

People's verdicts come back through the review queue; `judge verdicts import` and `judge
calibrate` (the labeller check's old name) stay hidden for one release.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from casework.cli._moved import note_moved
from casework.cli._output import emit
from casework.cli.context import FORMAT, SLICES, console, example, pass_project
from casework.dataset import load_dataset
from casework.errors import UsageError
from casework.grading import (
    PROMPT_VERSION,
    CertificationResult,
    calibrate_judge,
    certify_judge,
    load_judge,
    rubric_digests,
)
from casework.project import Project
from casework.review import TUNING_FILE, add_tuning, import_verdicts, sample_verdicts
from casework.schema import SPLITS


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _dataset(project: Project, dataset: str | None, command: str) -> str:
    if dataset is not None:
        return dataset
    names = project.dataset_names()
    if len(names) != 1:
        raise UsageError(
            f"{command}: pass --dataset (datasets here: {', '.join(names) or 'none'})."
        )
    return names[0]


@click.group("judge")
def judge_group() -> None:
    """The LLM judge: certified on people's verdicts of its verdicts.

    See docs/judge.md.
    """


def _labeller_check(
    project: Project,
    slice_name: str,
    dataset: str | None,
    splits: tuple[str, ...],
    fmt: str,
    command: str,
) -> None:
    dataset = _dataset(project, dataset, command)
    report = calibrate_judge(project, dataset, slice_name, splits=splits, command=command)
    if fmt == "json":
        from casework.grading.outputs import JudgeLabellerCheck  # here: only JSON output needs it

        emit(JudgeLabellerCheck.model_validate(report.as_json()))
        return
    cal = report.calibration
    verdict = "[green]reached[/]" if cal.admissible else "[red]not reached[/]"
    console.print(
        f"judge {cal.judge_model} as a labeller on slice {cal.slice}: kappa {_f(cal.kappa)}, "
        f"accuracy {cal.accuracy:.3f} on {cal.n} cases (threshold {cal.threshold:g}) — {verdict}. "
        "This does not make its verdicts admissible: `casework judge certify` does."
    )
    table = Table("human \\ judge", *report.categories)
    for cat, row in zip(report.categories, report.confusion, strict=True):
        table.add_row(cat, *(str(x) for x in row))
    console.print(table)
    if report.disagreements:
        console.print("disagreements: " + ", ".join(d.case_id for d in report.disagreements))
    if report.failed:
        console.print(
            f"[yellow]no usable judge answer for {len(report.failed)} case(s)[/]: "
            + ", ".join(report.failed)
        )


def _labeller_options(fn: click.decorators.FC) -> click.decorators.FC:
    fn = click.option(
        "--split",
        "splits",
        multiple=True,
        type=click.Choice(SPLITS),
        help="Only cases of this split.",
    )(fn)
    fn = click.option(
        "--dataset", "dataset", default=None, help="DATASET[@VERSION] (default: the only dataset)."
    )(fn)
    return click.option("--slice", "slice_name", required=True, help="Slice to check on.")(fn)


@example("casework judge labeller-check --slice refunds --dataset refunds --split dev")
@judge_group.command("labeller-check")
@_labeller_options
@FORMAT
@pass_project
def labeller_check_cmd(
    project: Project, slice_name: str, dataset: str | None, splits: tuple[str, ...], fmt: str
) -> None:
    """The judge as a labeller: its outcome labels of human-labelled cases against people's (kappa).

    Informative only: admissibility rests on `casework judge certify`.
    """
    _labeller_check(project, slice_name, dataset, splits, fmt, "judge labeller-check")


@judge_group.command("calibrate", hidden=True)
@_labeller_options
@FORMAT
@pass_project
def calibrate_cmd(
    project: Project, slice_name: str, dataset: str | None, splits: tuple[str, ...], fmt: str
) -> None:
    """Old name of `judge labeller-check`."""
    _labeller_check(project, slice_name, dataset, splits, fmt, "judge calibrate")


@example(
    "casework judge sample run-a run-b -n 40 --reviewers ana,ben --out verdict-sheets/",
)
@judge_group.command("sample")
@click.argument("runs", nargs=-1, required=True)
@SLICES
@click.option("-n", "n", type=int, required=True, help="Items to draw.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draw.")
@click.option(
    "--overlap", type=float, default=0.2, show_default=True, help="Share given to two reviewers."
)
@click.option("--reviewers", required=True, help="Comma-separated reviewer names.")
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Sheet folder."
)
@click.option(
    "--sheet-format",
    "sheet_format",
    type=click.Choice(["jsonl", "csv"]),
    default="jsonl",
    show_default=True,
    help="Sheet format.",
)
@FORMAT
@pass_project
def sample_cmd(
    project: Project,
    runs: tuple[str, ...],
    slices: tuple[str, ...],
    n: int,
    seed: int,
    overlap: float,
    reviewers: str,
    out: Path,
    sheet_format: str,
    fmt: str,
) -> None:
    """Draw judge verdicts from RUN... onto blind sheets, one per reviewer.

    Stratified by slice, check kind and the judge's verdict; never an item listed in
    judge/tuning.jsonl or sampled before. Sheets never show the judge's verdict or reason.
    """
    names = [r.strip() for r in reviewers.split(",") if r.strip()]
    report = sample_verdicts(
        project,
        runs,
        n=n,
        reviewers=names,
        out=out,
        slices=slices,
        seed=seed,
        overlap=overlap,
        sheet_format="csv" if sheet_format == "csv" else "jsonl",
    )
    if fmt == "json":
        from casework.review.outputs import JudgeSample  # here: only JSON output needs it

        emit(JudgeSample.model_validate(report.as_json()))
        return
    data = report.as_json()
    console.print(
        f"sampled {data['sampled']} of {report.candidates} judge verdict(s) "
        f"({report.excluded} excluded: tuning or sampled before), {data['overlapped']} to two reviewers"
    )
    for stratum, count in sorted(report.strata.items()):
        console.print(f"  {stratum}: {count}")
    for name, path in report.sheets.items():
        console.print(f"wrote {project.relative(path)} ({name})")


@judge_group.group("verdicts")
def verdicts_group() -> None:
    """People's verdicts on sampled judge verdicts."""


@verdicts_group.command("import")
@click.argument("sheets", nargs=-1, required=True, type=click.Path(path_type=Path))
@FORMAT
@pass_project
def verdicts_import_cmd(project: Project, sheets: tuple[Path, ...], fmt: str) -> None:
    """Store the answers of returned verdict SHEET... (all or none) and human–human agreement."""
    report = import_verdicts(project, sheets)
    if fmt == "json":
        from casework.review.outputs import JudgeVerdictsImport  # here: only JSON needs it

        emit(JudgeVerdictsImport.model_validate(report.as_json()))
        return
    agree = report.agreement
    console.print(
        f"stored {report.stored} verdict(s) ({report.replaced} replacing earlier answers), "
        f"{report.unanswered} left blank"
    )
    if agree.items:
        console.print(
            f"human–human agreement on {agree.items} item(s) graded by two people: "
            f"{agree.agreeing}/{agree.items} agree, kappa {_f(agree.kappa)}"
            + (
                f" [{_f(agree.low)}, {_f(agree.high)}] ({agree.method.split(':')[0]})"
                if agree.method and agree.low is not None
                else ""
            )
        )


def _cert_line(r: CertificationResult) -> str:
    p = r.pin
    state = "current" if r.current else "stale"
    ok = "[green]admissible[/]" if r.admissible else "[red]not admissible[/]"
    k, klow, khigh = r.kappa
    text = (
        f"{p.slice} / {p.kind} ({state}: {p.judge_model}, {p.prompt_version}, {p.rubric_digest}): "
        f"TPR {_f(r.tpr.estimate)} [{_f(r.tpr.low)}, {_f(r.tpr.high)}] on {r.tp + r.fn} pass, "
        f"TNR {_f(r.tnr.estimate)} [{_f(r.tnr.low)}, {_f(r.tnr.high)}] on {r.tn + r.fp} fail, "
        f"kappa {_f(k)} [{_f(klow)}, {_f(khigh)}]"
    )
    if r.cases:  # several trials of one case: say what the interval counts
        text += f" ({r.kappa_method.split(':')[0]})"
    if r.flip is not None:
        f = r.flip
        text += f", flip rate {f.rate:.3f} ({f.flipped} of {f.items} items, {f.samples} samples)"
    text += f" — {ok}"
    more = r.more_needed()
    if not r.admissible:
        needs = [
            f"{cls}: " + (str(m) if m is not None else "never at this agreement")
            for cls, m in more.items()
            if m != 0
        ]
        if needs:
            text += "; more reviewed cases needed — " + ", ".join(needs)
        if r.flip is not None and r.flips_too_often:
            text += (
                f"; its verdicts flip on {r.flip.rate:.0%} of the items asked again, above "
                f"\\[thresholds] judge_max_flip {r.settings.max_flip:g}"
            )
    return text


@example(
    "casework judge certify --slice refunds --dataset refunds@latest",
    "casework judge certify --samples 3",
)
@judge_group.command("certify")
@SLICES
@click.option("--dataset", default=None, help="DATASET[@VERSION] whose rubrics are current.")
@click.option(
    "--samples",
    type=int,
    default=1,
    show_default=True,
    help="Ask the judge this many times on each reviewed item and measure its flip rate.",
)
@FORMAT
@pass_project
def certify_cmd(
    project: Project, slices: tuple[str, ...], dataset: str | None, samples: int, fmt: str
) -> None:
    """Certify the judge per slice and check kind against people's verdicts; store the result.

    Admissible only when the lower bounds of TPR and TNR reach [thresholds] judge_tpr and
    judge_tnr, and (with --samples N of 2 or more) its verdicts flip on no more than
    [thresholds] judge_max_flip of the items; pinned to the judge model, prompt version and
    rubric digest.
    """
    from casework.runner.judge_samples import judge_resampler  # here: it reads runs

    ref = _dataset(project, dataset, "judge certify")
    judge = load_judge(project)
    report = certify_judge(
        project,
        judge_model=judge.model if judge is not None else None,
        prompt_version=PROMPT_VERSION,
        rubric_digests=rubric_digests(load_dataset(project, ref).cases),
        slices=slices,
        resample=judge_resampler(project, judge, samples) if judge is not None else None,
        samples=samples,
    )
    if fmt == "json":
        from casework.grading.outputs import JudgeCertify  # here: only JSON output needs it

        emit(JudgeCertify.model_validate(report.as_json()))
        return
    st = report.settings
    console.print(
        f"judge {report.judge['model'] or '(none configured)'}, prompt {PROMPT_VERSION}; "
        f"{st.method} {st.confidence:.0%} intervals; admissible when the lower bounds reach "
        f"TPR {st.tpr:g} and TNR {st.tnr:g}"
        + (
            f", and verdicts asked {report.samples} times flip on at most "
            f"{st.max_flip:g} of the items"
            if report.samples >= 2
            else ""
        )
    )
    if not report.results:
        console.print("no reviewed verdicts yet: `casework judge sample`, then `review import`")
    for r in report.results:
        console.print(_cert_line(r))
    if report.contested:
        console.print(
            f"[yellow]{report.contested} item(s) left out: their two reviewers disagree[/] "
            "(adjudicate them, then import the agreed answer)"
        )
    if report.unpinned:
        console.print(f"{report.unpinned} item(s) left out: their run recorded no prompt version")


@judge_group.group("tune")
def tune_group() -> None:
    """Records used to tune the judge's prompt (never sampled for certification).

    See docs/judge.md.
    """


@example("casework judge tune add run-a/r-0007/1 run-a/r-0012/2/fact/0")
@tune_group.command("add")
@click.argument("keys", nargs=-1, required=True)
@pass_project
def tune_add_cmd(project: Project, keys: tuple[str, ...]) -> None:
    """Add ITEM_KEY... (RUN_ID/CASE_ID/TRIAL[/KIND[/FACT_INDEX]]) to judge/tuning.jsonl."""
    listed = add_tuning(project, keys)
    console.print(f"{TUNING_FILE}: {len(listed)} key(s)")


note_moved(judge_group.commands["calibrate"], "judge calibrate", "judge labeller-check")
note_moved(
    judge_group.commands["verdicts"], "judge verdicts", "review", {"import": "review import"}
)

COMMANDS: list[click.Command] = [judge_group]
