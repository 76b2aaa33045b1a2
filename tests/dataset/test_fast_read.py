"""The fast reading path (orjson, streaming) against today's strict whole-file path (issue 13).

The oracle of each test is a verbatim copy of the code the fast path replaced: the strict
line decoder, the whole-file `_parse`, and the composition of `check_project` over all cases.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casework.dataset import check_dataset, declared_tools, load_dataset, parallel, release
from casework.dataset.jsonl import fast_object, json_objects, nesting_depth, parse_records
from casework.dataset.parallel import scan_dataset_chunks
from casework.dataset.stream import scan_dataset
from casework.dataset.versions import CASES_FILE
from casework.decoding import BadJSON, json_depth_problem, parse_json
from casework.errors import MAX_REPORTED, InputError, InputErrors, Problem
from casework.gate import check_project
from casework.privacy.residual import residual_pii
from casework.project import load_project
from casework.schema import Case, LabelRecord
from casework.synth.cap import synthetic_cap_violations
from tests.factories import case_dict, write_lines

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds"
TODAY = date(2026, 12, 1)


# --- the oracle: today's strict decoder, verbatim ------------------------------------------


def old_json_objects(
    data: bytes, shown: str, problems: list[Problem], *, blank_lines_ok: bool = False
) -> list[tuple[int, Any]]:
    out: list[tuple[int, Any]] = []
    if data.startswith(b"\xef\xbb\xbf"):
        problems.append(
            Problem(shown, 1, None, "file starts with a UTF-8 byte-order mark; save it without one")
        )
        data = data[3:]
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    for number, raw in enumerate(raw_lines, start=1):
        if len(problems) > MAX_REPORTED * 4:
            return out
        raw = raw.removesuffix(b"\r")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(
                Problem(
                    shown,
                    number,
                    None,
                    f"invalid UTF-8 at byte {exc.start + 1}",
                    raw[:40],
                    has_got=True,
                )
            )
            continue
        if not text.strip():
            if not blank_lines_ok:
                problems.append(
                    Problem(shown, number, None, "empty line; every line must hold one record")
                )
            continue
        try:
            obj = parse_json(text)
        except BadJSON as exc:
            problems.append(Problem(shown, number, None, exc.message, text, has_got=True))
            continue
        if not isinstance(obj, dict):
            problems.append(
                Problem(shown, number, None, "line is not a JSON object", obj, has_got=True)
            )
            continue
        out.append((number, obj))
    return out


def both(data: bytes) -> tuple[tuple[str, list[Problem]], tuple[str, list[Problem]]]:
    """(objects, problems) by the old and the new reader; objects by repr (types matter)."""
    old_problems: list[Problem] = []
    old = old_json_objects(data, "f.jsonl", old_problems)
    new_problems: list[Problem] = []
    new = list(json_objects(data, "f.jsonl", new_problems))
    return (repr(old), old_problems), (repr(new), new_problems)


# --- hostile lines ---------------------------------------------------------------------------

HOSTILE = [
    b'{"a": NaN}',
    b'{"a": Infinity}',
    b'{"a": -Infinity}',
    b'{"a": 1e400}',
    b'{"a": "\\ud800"}',
    b'{"a": "\\udc00\\ud800"}',
    b'{"a": "\\ud83d\\ude00"}',
    b'{"a": "\xff\xfe"}',
    b'{"a": "\xed\xa0\x80"}',
    b'{"a": 1, "a": 2}',
    b'{"a": {"b": 1, "b": {"c": 3}}}',
    b'{"a": 18446744073709551615}',
    b'{"a": 18446744073709551616}',
    b'{"a": -9223372036854775809}',
    b'{"a": -9999999999999999999}',
    b'{"a": ' + b"9" * 5000 + b"}",
    b'{"a": 0.1000000000000000055511151231257827}',
    b'{"case": "ab',
    b'{"case": 1,',
    b"[1, 2]",
    b'"just a string"',
    b"",
    b"   ",
    b"\x0c",
    b"\xc2\xa0",
    b'{"a": "tab\tinside"}',
    b'{"a": "\x7f"}',
    b'{"a": 1}\r',
    b'{"a": 1} x',
    b'\xef\xbb\xbf{"a": 1}',
    b'{"a": "\\\\"}',
    b'{"a": "\\"}"}',
    b'{"a": "[[[["}',
    b'{"a": "]]]]}}}}"}',
    b'{"a": ' + b"[" * 100 + b"]" * 100 + b"}",
    b'{"a": ' + b"[" * 99 + b"]" * 99 + b"}",
    b'{"a": ' + b"[" * 2000 + b"]" * 2000 + b"}",
    b'{"a": ' + b'["]]]",' * 60 + b"1" + b"]" * 60 + b"}",
]


@pytest.mark.parametrize("line", HOSTILE)
def test_hostile_line_reads_as_the_strict_decoder_reads_it(line: bytes) -> None:
    old, new = both(line + b"\n" + b'{"ok": true}\n')
    assert new == old


def test_errors_stay_located_through_the_fast_path() -> None:
    data = b"\n".join(
        [
            b'{"a": 1}',
            b'{"a": NaN}',
            b'{"a": "\xff"}',
            b'{"a": "\\ud800"}',
            b'{"case": "trunc',
            b"",
            b'{"a": ' + b"[" * 101 + b"]" * 101 + b"}",
            b'{"a": ' + b"1" * 5000 + b"}",
        ]
    )
    problems: list[Problem] = []
    list(json_objects(data, "cases.jsonl", problems))
    where = [(p.line, p.message.split(" (")[0]) for p in problems]
    assert where == [
        (2, "NaN is not a JSON number"),
        (3, "invalid UTF-8 at byte 8"),
        (4, "holds a lone UTF-16 surrogate"),
        (5, "invalid JSON: Unterminated string starting at column 10"),
        (6, "empty line; every line must hold one record"),
        (7, "nested more than 100 levels deep"),
        (8, f"a number has more than {4300} digits"),
    ]


def test_duplicate_keys_keep_the_last_value_as_before() -> None:
    assert (
        fast_object(b'{"id": "a", "id": "b"}') == {"id": "b"} == parse_json('{"id":"a","id":"b"}')
    )


def test_a_long_integer_is_read_exactly() -> None:
    problems: list[Problem] = []
    [(_, obj)] = json_objects(b'{"n": 123456789012345678901234567890}\n', "f", problems)
    assert obj["n"] == 123456789012345678901234567890 and type(obj["n"]) is int


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1e300, -1e-300, 5e-324, 1e16, 1e-7, 2.0**63, 2.0**64])
    | st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12)
    | st.sampled_from(['"', "\\", "[", "]", "{", "}", '\\"', "\n", "\u2028", "\x00", "é€😀"])
    # strings of JSON's punctuation: brackets inside strings, next to quotes and escapes
    | st.text(alphabet='[]{}"\\,: a', max_size=10)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(max_size=6) | st.sampled_from(['"', "\\", "}"]), inner, max_size=4
        )
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=5), st.booleans())
def test_random_objects_read_as_the_strict_decoder_reads_them(
    value: dict[str, Any], ascii_only: bool
) -> None:
    line = json.dumps(value, ensure_ascii=ascii_only).encode()
    old, new = both(line + b"\n")
    assert new == old


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_nesting_depth_matches_the_decoded_value(value: Any) -> None:
    raw = json.dumps(value, ensure_ascii=False).encode()
    depth = nesting_depth(raw)
    assert (json_depth_problem(value, depth) is None) and (
        depth == 0 or json_depth_problem(value, depth - 1) is not None
    )


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=60))
def test_random_bytes_read_as_the_strict_decoder_reads_them(data: bytes) -> None:
    old, new = both(data)
    assert new == old


# --- whole dataset: streaming against the whole-file path ------------------------------------


def old_parse(
    cases_bytes: bytes, labels_bytes: bytes, shown_dir: str
) -> tuple[list[Case], list[LabelRecord]]:
    """Today's `store._parse`, verbatim (with its helpers inlined)."""
    problems: list[Problem] = []
    cases: list[Case] = []
    labels: list[LabelRecord] = []
    try:
        cases = parse_records(
            cases_bytes, Case, shown=f"{shown_dir}/cases.jsonl", key=lambda c: c.id
        ).records
    except InputError as exc:
        problems.extend(exc.problems)
    try:
        labels = parse_records(labels_bytes, LabelRecord, shown=f"{shown_dir}/labels.jsonl").records
    except InputError as exc:
        problems.extend(exc.problems)
    if cases:
        known = {c.id for c in cases}
        problems.extend(
            Problem(
                f"{shown_dir}/labels.jsonl",
                i + 1,
                "case_id",
                "no case with this id",
                r.case_id,
                has_got=True,
            )
            for i, r in enumerate(labels)
            if r.case_id not in known
        )
    seen: Counter[tuple[str, str, str]] = Counter()
    for line, rec in enumerate(labels, start=1):
        key = (rec.case_id, rec.labeller, rec.guideline_version)
        seen[key] += 1
        if seen[key] == 2:
            problems.append(
                Problem(
                    f"{shown_dir}/labels.jsonl",
                    line,
                    "labeller",
                    f"labelled case '{rec.case_id}' twice under guideline "
                    f"'{rec.guideline_version}'; agreement needs one label per person",
                    rec.labeller,
                    has_got=True,
                )
            )
    InputErrors.raise_if_any(problems)
    return cases, labels


def old_check(root: Path, ref: str) -> tuple[str, int, list[Any], list[str]]:
    """Today's `check_project` (with `--pii`): every case loaded, then each check over all."""
    project = load_project(root)
    dataset = load_dataset(project, ref)
    report = check_dataset(dataset.ref, dataset.cases, declared_tools(project), today=TODAY)
    cap = project.config.thresholds.synthetic_cap
    findings = [
        *report.findings,
        *(v.finding() for v in synthetic_cap_violations(dataset.cases, cap)),
        *residual_pii(dataset.cases),
    ]
    return report.dataset, report.cases, findings, [*report.checks, "synthetic_cap", "residual_pii"]


def _label(case_id: str, labeller: str = "lab-a") -> dict[str, Any]:
    return {
        "case_id": case_id,
        "labeller": labeller,
        "role": "first",
        "outcome": "resolve",
        "guideline_version": "refunds-g7",
        "labelled_at": "2026-11-01T10:00:00Z",
    }


def _planted_cases() -> list[Any]:
    """Cases with one of everything `casework dataset check` finds, in no particular order."""
    expired = case_dict("c-expired")
    expired["provenance"] = {"retain_until": "2026-10-01"}
    contradiction = case_dict("c-contra")
    contradiction["label"] = {
        "outcome": "resolve",
        "required_tools": [{"name": "issue_refund", "arguments": {"amount": {"value": 5}}}],
        "forbidden_tools": [{"name": "issue_refund", "arguments": {"amount": {"value": 5}}}],
    }
    undeclared = case_dict("c-undeclared")
    undeclared["label"] = {"outcome": "resolve", "required_tools": ["launch_rocket"]}
    pii = case_dict("c-pii")
    pii["situation"]["turns"][0]["content"] = "mail me at jane.doe@gmail.com"
    synthetic = [case_dict(f"c-syn-{i}", source="synthetic", slice="status") for i in range(3)]
    return [case_dict("c-ok"), expired, contradiction, undeclared, pii, *synthetic]


@pytest.fixture
def planted(project_dir: Path) -> Path:
    write_lines(project_dir / "datasets" / "refunds" / CASES_FILE, _planted_cases())
    write_lines(project_dir / "datasets" / "refunds" / "labels.jsonl", [_label("c-ok")])
    return project_dir


def _new_check(root: Path, ref: str) -> tuple[str, int, list[Any], list[str]]:
    report = check_project(load_project(root), ref, today=TODAY, pii=True)
    return report.dataset, report.cases, report.findings, report.checks


def test_streaming_check_finds_what_the_whole_file_check_finds(planted: Path) -> None:
    new = _new_check(planted, "refunds")
    assert new == old_check(planted, "refunds")
    kinds = {f.check for f in new[2]}
    assert {"expired", "contradictory_tools", "undeclared_tool", "synthetic_cap"} <= kinds
    assert "residual_pii" in kinds


def _errors(fn: Any, *args: Any, **kwargs: Any) -> list[str]:
    with pytest.raises(InputError) as caught:
        fn(*args, **kwargs)
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize(
    "cases_lines, labels_lines",
    [
        ([case_dict("a"), case_dict("b"), case_dict("a")], []),  # duplicate id
        ([case_dict("a")], [_label("a"), _label("ghost")]),  # dangling label
        ([case_dict("a")], [_label("a"), _label("a")]),  # duplicate raw label
        ([case_dict("a"), '{"id": NaN}', case_dict("b", split="nope")], [_label("ghost")]),
        ([case_dict("a"), "", case_dict("a")], ["{bad"]),
        (
            [
                case_dict(
                    "a",
                    label={"outcome": "resolve", "required_tools": ["x"], "forbidden_tools": ["x"]},
                )
            ],
            [],
        ),
    ],
)
def test_streaming_reports_the_errors_of_the_whole_file_path(
    project_dir: Path, cases_lines: list[Any], labels_lines: list[Any]
) -> None:
    folder = project_dir / "datasets" / "refunds"
    write_lines(folder / CASES_FILE, cases_lines)
    write_lines(folder / "labels.jsonl", labels_lines)
    want = _errors(
        old_parse,
        (folder / CASES_FILE).read_bytes(),
        (folder / "labels.jsonl").read_bytes(),
        "datasets/refunds",
    )
    project = load_project(project_dir)
    assert _errors(load_dataset, project, "refunds") == want
    assert _errors(check_project, project, "refunds") == want
    assert _errors(scan_dataset, project, "refunds", lambda case: None) == want


def test_loading_streams_the_example_to_the_same_cases() -> None:
    folder = EXAMPLE / "datasets" / "refunds"
    cases, labels = old_parse(
        (folder / CASES_FILE).read_bytes(), (folder / "labels.jsonl").read_bytes(), "d"
    )
    loaded = load_dataset(load_project(EXAMPLE), "refunds")
    assert loaded.cases == cases and loaded.labels == labels
    assert [c.model_dump() for c in loaded.cases] == [c.model_dump() for c in cases]


def test_a_released_version_streams_like_the_working_tree(planted: Path, run_cli: Any) -> None:
    write_lines(planted / "datasets" / "refunds" / CASES_FILE, [case_dict("c-1"), case_dict("c-2")])
    write_lines(planted / "datasets" / "refunds" / "labels.jsonl", [_label("c-1")])
    assert run_cli("dataset", "release", "refunds", "-m", "first").exit_code == 0
    assert _new_check(planted, "refunds@1") == old_check(planted, "refunds@1")
    project = load_project(planted)
    assert load_dataset(project, "refunds@1").hash == load_dataset(project, "refunds").hash


# --- parallel chunks against the sequential scan ----------------------------------------------


class _Ids:
    """A picklable job keeping the ids it saw."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def add(self, case: Case) -> None:
        self.ids.append(case.id)


def _sequential(project: Any) -> tuple[Any, list[str]]:
    seen: list[str] = []
    scan = scan_dataset(project, "refunds", lambda case: seen.append(case.id))
    return scan, seen


@pytest.mark.parametrize("workers", [2, 3, 7])
def test_chunks_on_several_workers_scan_as_one_process(planted: Path, workers: int) -> None:
    folder = planted / "datasets" / "refunds"
    write_lines(folder / CASES_FILE, [case_dict(f"c-{i:03d}") for i in range(40)])
    write_lines(folder / "labels.jsonl", [_label("c-001"), _label("c-039")])
    project = load_project(planted)
    scan, jobs = scan_dataset_chunks(project, "refunds", _Ids, workers=workers)
    want_scan, want_ids = _sequential(project)
    assert scan == want_scan
    assert len(jobs) > 1 and [i for job in jobs for i in job.ids] == want_ids


def _bad_lines() -> list[Any]:
    lines: list[Any] = [case_dict(f"c-{i:03d}") for i in range(30)]
    lines[3] = '{"id": NaN}'
    lines[11] = case_dict("c-002")  # duplicate of an earlier chunk's id
    lines[17] = ""
    lines[25] = case_dict("c-019", split="nope")
    lines[29] = case_dict("c-010")  # duplicate, far from its first line
    return lines


@pytest.mark.parametrize(
    "lines",
    [
        _bad_lines(),
        ["\ufeff" + json.dumps(case_dict("c-0")), *[case_dict(f"c-{i}") for i in range(1, 20)]],
        ['{"id": NaN}'] * (MAX_REPORTED * 6),  # cut where a sequential scan stops reading
        [case_dict("a"), *(['{"bad": 1}'] * (MAX_REPORTED * 3)), *(["[]"] * (MAX_REPORTED * 3))],
    ],
)
def test_chunks_report_the_errors_of_one_process(planted: Path, lines: list[Any]) -> None:
    folder = planted / "datasets" / "refunds"
    write_lines(folder / CASES_FILE, lines)
    write_lines(folder / "labels.jsonl", [_label("ghost")])
    project = load_project(planted)
    want = _errors(scan_dataset, project, "refunds", lambda case: None)
    for workers in (2, 3, 5):
        assert _errors(scan_dataset_chunks, project, "refunds", _Ids, workers=workers) == want


def test_check_on_every_core_finds_what_one_process_finds(
    planted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`casework dataset check` of a (here: any) large working tree runs in chunks with the same report."""
    folder = planted / "datasets" / "refunds"
    write_lines(
        folder / CASES_FILE, _planted_cases() + [case_dict(f"c-more-{i}") for i in range(9)]
    )
    want = old_check(planted, "refunds")
    monkeypatch.setattr("casework.gate._dataset_checks.PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr("casework.gate._dataset_checks.parallel_workers", lambda: 3)
    assert _new_check(planted, "refunds") == want


def test_check_on_every_core_hashes_the_tree_only_when_a_release_could_be_it(
    planted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never released: no hash (nothing it could name). Released: the tree is named by release."""
    folder = planted / "datasets" / "refunds"
    write_lines(folder / CASES_FILE, [case_dict(f"c-{i:03d}") for i in range(30)])
    write_lines(folder / "labels.jsonl", [_label("c-001"), _label("c-029")])
    monkeypatch.setattr("casework.gate._dataset_checks.PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr("casework.gate._dataset_checks.parallel_workers", lambda: 3)
    hashed: list[Path] = []
    real = parallel._hash_file

    def counted(path: Path, *rest: Any) -> str:
        hashed.append(path)
        return real(path, *rest)

    monkeypatch.setattr(parallel, "_hash_file", counted)
    project = load_project(planted)
    assert check_project(project, "refunds", today=TODAY).dataset == "refunds@working"
    assert hashed == []
    scan, _ = scan_dataset_chunks(project, "refunds", _Ids, workers=2, need_hash=False)
    assert scan.hash == "" and scan.version is None
    want, _ = _sequential(project)
    assert scan == replace(want, hash="")
    scan, _ = scan_dataset_chunks(project, "refunds", _Ids, workers=2)  # asked for: hashed
    assert scan == want and hashed

    release(project, "refunds", None, "first")
    hashed.clear()
    assert check_project(project, "refunds", today=TODAY).dataset == "refunds@1"
    assert hashed  # a release exists: the tree is hashed to tell whether it is that release
    write_lines(folder / CASES_FILE, [case_dict(f"c-{i:03d}") for i in range(31)])
    assert check_project(project, "refunds", today=TODAY).dataset == "refunds@working"
