"""Java / JavaScript source text read and compared beside BFCL's own converters and checker."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.grading.bfcl_values import (
    JAVA_TYPES,
    JS_TYPES,
    SourceLanguage,
    SourceTypeError,
    read_source,
    source_matches,
)
from casework.grading.matchers import MatcherError, argument_matches
from casework.schema import ArgMatcher

# bfcl-eval is installed with --no-deps: its `constants.model_config` imports every model handler
# and fails. BFCL's checker reads one mapping from it (MODEL_CONFIG_MAPPING[model]
# .underscore_to_dot), so a stand-in module holding that mapping for one model name takes its
# place, as in benchmarks/conformance_fncall.py.
_MODEL = "casework-test"
if "bfcl_eval.constants.model_config" not in sys.modules:
    _stand_in = types.ModuleType("bfcl_eval.constants.model_config")
    _stand_in.MODEL_CONFIG_MAPPING = {  # type: ignore[attr-defined]
        _MODEL: types.SimpleNamespace(underscore_to_dot=False)
    }
    sys.modules["bfcl_eval.constants.model_config"] = _stand_in
else:  # the benchmark's stand-in is there: add this test's model name to it
    sys.modules["bfcl_eval.constants.model_config"].MODEL_CONFIG_MAPPING[_MODEL] = (
        types.SimpleNamespace(underscore_to_dot=False)
    )

from bfcl_eval.constants.enums import Language  # type: ignore[import-untyped]  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import (  # type: ignore[import-untyped]  # noqa: E402
    simple_function_checker,
)
from bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter import (  # type: ignore[import-untyped]  # noqa: E402
    java_type_converter,
)
from bfcl_eval.eval_checker.ast_eval.type_convertor.js_type_converter import (  # type: ignore[import-untyped]  # noqa: E402
    js_type_converter,
)

JAVA_READABLE = [
    "byte", "short", "integer", "long", "float", "double", "boolean", "char", "String", "any",
    "HashMap", "Array<long>", "Array<String>", "Array<integer>", "ArrayList<String>",
    "ArrayList<long>", "ArrayList<integer>", "ArrayList<char>", "Array<any>", "Array<char>",
]  # fmt: skip
JS_READABLE = [
    "String", "any", "integer", "Bigint", "float", "Boolean", "dict", "array<String>",
    "array<float>", "array<integer>",
]  # fmt: skip

#: Fragments source text is made of: literals, collection syntax, quotes, separators.
_TOKENS = [
    "1", "-2", "3.5", "4e3", "5f", "6L", "7n", "true", "false", "'a'", '"b c"', "x", "_",
    ", ", ",", ":", " ", "[", "]", "{", "}", "(", ")", "{{", "}}", "new ", "int[]", "String[]",
    "ArrayList<>", "ArrayList<String>", "(Arrays.asList(", "add(", ");", "HashMap<String, Object>",
    'put("k", ', "Array(", "\n",
]  # fmt: skip
source = st.lists(st.sampled_from(_TOKENS), max_size=12).map("".join)


def _theirs(language: SourceLanguage, source_type: str, text: str) -> Any:
    outer, _, rest = source_type.partition("<")
    items = rest.removesuffix(">") or None
    convert = java_type_converter if language == "java" else js_type_converter
    return convert(text, outer, items) if items else convert(text, outer)


def _same_value(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


@settings(max_examples=400, deadline=None)
@given(text=source, kind=st.sampled_from(JAVA_READABLE))
def test_java_text_reads_as_bfcls_java_converter_reads_it(text: str, kind: str) -> None:
    assert _same_value(read_source("java", kind, text), _theirs("java", kind, text))


@settings(max_examples=400, deadline=None)
@given(text=source, kind=st.sampled_from(JS_READABLE))
def test_js_text_reads_as_bfcls_js_converter_reads_it(text: str, kind: str) -> None:
    try:
        theirs = _theirs("js", kind, text)
    except ValueError:  # BFCL's Bigint reading stops on `7n` followed by a newline
        return
    assert _same_value(read_source("js", kind, text), theirs)


@pytest.mark.parametrize(
    ("language", "kind", "text", "value"),
    [
        ("java", "long", "50L", 50),
        ("java", "long", "50", "50"),  # no L: not a long, the text stays (a variable)
        ("java", "float", "1.5f", 1.5),
        ("java", "boolean", "true", True),
        ("java", "Array<String>", "new String[]{a, b}", ["a", "b"]),
        ("java", "ArrayList<String>", 'new ArrayList<>(Arrays.asList("a", "b"))', ["a", "b"]),
        ("java", "HashMap", 'new HashMap<String, Object>() {{ put("k", 1); }}', {"k": 1}),
        ("js", "Bigint", "12n", 12),
        ("js", "String", "'quoted'", "quoted"),
        ("js", "array<float>", "[1.5, 2]", [1.5, 2.0]),
        ("js", "dict", "{'a': 1, b: 'x'}", {"a": 1, "b": "x"}),
    ],
)
def test_source_text_reads_as_documented(
    language: SourceLanguage, kind: str, text: str, value: Any
) -> None:
    assert _same_value(read_source(language, kind, text), value)


def _bfcl_passes(language: SourceLanguage, kind: str, acceptable: list[Any], text: Any) -> bool:
    outer, _, rest = kind.partition("<")
    param: dict[str, Any] = {"type": outer}
    if rest:
        param["items"] = {"type": rest.removesuffix(">")}
    function = {"name": "f", "parameters": {"properties": {"p": param}, "required": ["p"]}}
    lang = Language.JAVA if language == "java" else Language.JAVASCRIPT
    result = simple_function_checker(
        function, {"f": {"p": text}}, {"f": {"p": acceptable}}, lang, _MODEL
    )
    return bool(result["valid"])


ACCEPTABLE: list[tuple[SourceLanguage, str, list[Any]]] = [
    ("java", "long", [50]),
    ("java", "String", ["New York", ""]),
    ("java", "any", ["mapController"]),
    ("java", "boolean", [True]),
    ("java", "HashMap", [{"limit": [50], "schemaFilter": ["public"]}]),
    ("java", "HashMap", [{"format": "epoch_millis"}]),  # as BFCL v4's simple_java_64 publishes it
    ("java", "Array<String>", [["a", "b"]]),
    ("java", "ArrayList<long>", [[1, 2]]),
    ("js", "float", [0.5]),
    ("js", "array<String>", [["completed", "failed"]]),
    ("js", "dict", [{"a": [1], "b": ["x", ""]}]),
    ("js", "Boolean", [True, ""]),
]


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(ACCEPTABLE), text=source | st.integers() | st.booleans())
def test_verdict_equals_bfcls_checker(
    case: tuple[SourceLanguage, str, list[Any]], text: Any
) -> None:
    language, kind, acceptable = case
    assert source_matches(language, kind, acceptable, text) == _bfcl_passes(
        language, kind, acceptable, text
    )


@pytest.mark.parametrize(
    ("language", "kind", "acceptable", "text", "passes"),
    [
        ("java", "long", [50], "50L", True),
        ("java", "long", [50], "50", False),
        ("java", "HashMap", [{"limit": [50], "schemaFilter": ["public"]}],
         'new HashMap<String, Object>() {{ put("limit", 50); put("schemaFilter", "PUBLIC"); }}', True),
        ("java", "HashMap", [{"format": "epoch_millis"}],
         'new HashMap<String, Object>() {{ put("format", "epoch_millis"); }}', False),
        ("js", "array<String>", [["completed", "failed"]], "['Completed', 'failed']", True),
        ("js", "Boolean", [True], True, False),  # a decoded value, not source text
    ],
)  # fmt: skip
def test_published_answers_pass_and_fail_as_bfcl_says(
    language: SourceLanguage, kind: str, acceptable: list[Any], text: Any, passes: bool
) -> None:
    assert source_matches(language, kind, acceptable, text) is passes
    assert _bfcl_passes(language, kind, acceptable, text) is passes


def test_matcher_reads_source_text_and_names_an_unreadable_type() -> None:
    m = ArgMatcher(match="any_of", value=[50], strings="bfcl-java", source_type="long")
    assert argument_matches(m, True, "50L") and not argument_matches(m, True, 50)
    bad = ArgMatcher(match="any_of", value=[1], strings="bfcl-java", source_type="Set")
    with pytest.raises(MatcherError, match="no reader for Java 'Set'"):
        argument_matches(bad, True, "x")
    with pytest.raises(SourceTypeError, match="not one BFCL reads"):
        read_source("js", "Object", "x")
    with pytest.raises(ValueError, match="needs the parameter's source_type"):
        ArgMatcher(match="any_of", value=[1], strings="bfcl-js")
    with pytest.raises(ValueError, match="source_type goes with"):
        ArgMatcher(match="any_of", value=[1], source_type="long")
    assert set(JAVA_TYPES) >= {"long", "HashMap"} and set(JS_TYPES) >= {"Bigint", "dict"}
