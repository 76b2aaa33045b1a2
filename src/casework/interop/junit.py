"""A run's verdicts as JUnit XML, for any CI: one ``testcase`` per case.

Entry point: :func:`junit_xml` (pure; `casework export junit` writes it through
:func:`casework.interop.verdicts_out.export_verdicts`). The output validates against the JUnit
schema CI servers check (`junit-10.xsd`, as Jenkins' xUnit plugin publishes it): a ``testcase``
holds no ``properties`` there, so a case's slice, split, source, trials and pass rate are
``key: value`` lines of its ``system-out``; ``testsuites`` carries no ``skipped`` count (its
``testsuite`` does).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from casework.interop.evaluations import WITHHELD, verdict_label
from casework.runner import TrialRecord
from casework.runner.records import LoadedRun


def _by_case(run: LoadedRun) -> dict[str, list[TrialRecord]]:
    cases: dict[str, list[TrialRecord]] = {}
    for t in sorted(run.trials, key=lambda t: (t.case_id, t.trial)):
        cases.setdefault(t.case_id, []).append(t)
    return cases


def _testcase(suite: ET.Element, case_id: str, trials: list[TrialRecord], ref: str) -> str:
    first = trials[0]
    case = ET.SubElement(
        suite,
        "testcase",
        classname=f"{ref}.{first.slice}",
        name=case_id,
        time=f"{sum(t.duration_s for t in trials):.3f}",
    )
    details = [("slice", first.slice), ("split", first.split), ("source", first.source)]
    details += [(f"trial.{t.trial}", verdict_label(t.verdict.passed)) for t in trials]
    decided = [t for t in trials if t.verdict.passed is not None]
    if decided:
        rate = sum(1 for t in decided if t.verdict.passed) / len(decided)
        details.append(("pass_rate", f"{rate:.3f}"))
    failed = [t for t in trials if t.verdict.passed is False]
    if failed:
        lines = []
        for t in failed:
            checks = t.verdict.failures()
            for c in checks:
                lines.append(f"trial {t.trial}: {c.name}: {WITHHELD if t.frozen else c.evidence}")
            if not checks:
                lines.append(f"trial {t.trial}: {WITHHELD if t.frozen else t.verdict.summary()}")
        names = sorted({c.name for t in failed for c in t.verdict.failures()})
        message = f"{len(failed)} of {len(trials)} trial(s) failed" + (
            f": {', '.join(names)}" if names else ""
        )
        failure = ET.SubElement(case, "failure", message=message, type="casework.check")
        failure.text = "\n".join(lines)
        outcome = "failure"
    elif not decided:
        ET.SubElement(
            case, "skipped", message="every trial undetermined: " + trials[0].verdict.summary()
        )
        outcome = "skipped"
    else:
        outcome = "pass"
    ET.SubElement(case, "system-out").text = "\n".join(f"{k}: {v}" for k, v in details)
    return outcome


def junit_xml(run: LoadedRun) -> bytes:
    """The run as JUnit XML: one ``testcase`` per case.

    A case fails when any trial failed; each failing check is a line of the ``failure``. A case with only undetermined trials is
    ``skipped``. Its slice, split, source, trial verdicts and pass rate are ``key: value`` lines
    of its ``system-out``. Frozen cases keep their ids but not their evidence.
    """
    h = run.header
    root = ET.Element("testsuites", name="casework")
    suite = ET.SubElement(root, "testsuite", name=h.run_id, timestamp=h.started_at.isoformat())
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("dataset", h.dataset_ref),
        ("dataset_hash", h.dataset_hash),
        ("agent", h.agent_spec),
        ("agent_version", h.agent_version or ""),
        ("k", str(h.k)),
    ):
        ET.SubElement(props, "property", name=key, value=value)
    outcomes = [_testcase(suite, cid, ts, h.dataset) for cid, ts in _by_case(run).items()]
    counts = {
        "tests": str(len(outcomes)),
        "failures": str(outcomes.count("failure")),
        "errors": "0",
        "skipped": str(outcomes.count("skipped")),
    }
    suite.attrib.update(counts)
    root.attrib.update({k: v for k, v in counts.items() if k != "skipped"})
    seconds = f"{sum(t.duration_s for t in run.trials):.3f}"
    suite.set("time", seconds)
    root.set("time", seconds)
    ET.indent(root)
    text: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return text + b"\n"
