"""Names from the configured LLM (the scripted client): one sentence, else the offline name."""

from __future__ import annotations

from pathlib import Path

from casework.project import load_project
from casework.shapes import BuildOptions, build_shapes
from casework.shapes._names import offline_name
from tests.authoring.conftest import ENV, new_project

NAMER = """
def reply(messages):
    prompt = messages[-1].content
    terms = prompt.splitlines()[0].removeprefix("Distinctive terms: ")
    if "gift" in terms:
        return "Two sentences. Not allowed."
    return f"The agent fails the customer over {terms.split(', ')[0]}."
"""


def test_llm_names_each_shape_in_one_sentence(
    tmp_path: Path, weeks: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    root = tmp_path / "proj"
    new_project(root)
    (root / "namer.py").write_text(NAMER, encoding="utf-8")
    with (root / "casework.toml").open("a", encoding="utf-8") as handle:
        handle.write(
            '\n[models.generator]\nprovider = "scripted"\nmodel = "scripted"\n'
            'script = "python:namer:reply"\n'
        )
    project = load_project(root)
    build = build_shapes(
        project, [weeks["w1"][0]], "refunds", BuildOptions(environ=ENV, names="llm")
    )
    gift = [s for s in build.shapes if "gift" in s.terms]
    assert len(gift) == 1 and build.llm_fallbacks == 1
    assert gift[0].named_by == "offline"
    assert gift[0].name == offline_name(gift[0].terms, gift[0].situation["turns"][0]["content"])
    for shape in build.shapes:
        if shape is not gift[0]:
            assert shape.named_by == "llm"
            assert shape.name == f"The agent fails the customer over {shape.terms[0]}."
