"""A run's verdicts as JUnit XML, parsed back."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import xmlschema

from casework.interop.junit import junit_xml
from tests.interop.sample_run import sample_run
from tests.public_data import JUNIT_XSD


def test_junit_one_testcase_per_case_parsed_back() -> None:
    root = ET.fromstring(junit_xml(sample_run()))
    assert root.tag == "testsuites"
    [suite] = root.findall("testsuite")
    assert {k: suite.get(k) for k in ("name", "tests", "failures", "errors", "skipped")} == {
        "name": "r-7", "tests": "4", "failures": "2", "errors": "0", "skipped": "1",
    }  # fmt: skip
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["dataset"] == "refunds@2" and props["agent_version"] == "v3" and props["k"] == "2"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["a", "b", "c", "d"]
    assert cases["a"].get("classname") == "refunds.refunds" and cases["a"].get("time") == "3.000"
    assert cases["a"].find("failure") is None and cases["a"].find("skipped") is None
    out = cases["b"].findtext("system-out") or ""
    b_props = dict(line.split(": ", 1) for line in out.splitlines())
    assert b_props == {
        "slice": "refunds", "split": "dev", "source": "hand",
        "trial.0": "pass", "trial.1": "fail", "pass_rate": "0.500",
    }  # fmt: skip
    failure = cases["b"].find("failure")
    assert failure is not None
    assert failure.get("message") == "1 of 2 trial(s) failed: outcome, required_tools"
    assert (failure.text or "").splitlines() == [
        "trial 1: required_tools: issue_refund not called",
        "trial 1: outcome: asked instead",
    ]
    skipped = cases["c"].find("skipped")
    assert skipped is not None and "answer_facts: no judge" in (skipped.get("message") or "")
    frozen = cases["d"].find("failure")
    assert frozen is not None and "ORD-1" not in ET.tostring(cases["d"], encoding="unicode")
    assert (frozen.text or "") == "trial 0: state: frozen case: evidence withheld"


def test_junit_validates_against_the_published_junit_10_xsd() -> None:
    schema = xmlschema.XMLSchema(str(JUNIT_XSD))
    errors = [f"{e.path}: {e.reason}" for e in schema.iter_errors(junit_xml(sample_run()).decode())]
    assert errors == []
