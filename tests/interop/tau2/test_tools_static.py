"""A τ²-bench ``tools.py`` outside the installed package, read statically (never imported).

The evidence is τ²'s own code as published: each toolkit module of the installed wheel, read
with :mod:`ast`, must declare what τ² itself declares to its agents (tool descriptions, argument
descriptions from the docstrings' ``Args:`` sections, enums from ``Literal`` annotations).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from casework.interop.tau2._tools import tools_from_package, tools_from_python_file

tau2 = pytest.importorskip("tau2")

Run = Callable[..., Result]
CODE = Path(tau2.__file__).parent / "domains"


@pytest.mark.parametrize(
    "module", ["airline.tools", "retail.tools", "telecom.tools", "telecom.user_tools"]
)
def test_a_static_read_declares_what_tau2_declares(tmp_path: Path, module: str) -> None:
    # Before: 21 tool descriptions differed, 100 of 104 arguments had no description and the
    # airline's 4 cabin/flight-type/insurance arguments no enum.
    domain, name = module.split(".")
    copy = tmp_path / domain  # a checkout of τ²'s code, not the installed package
    shutil.copytree(CODE / domain, copy, ignore=shutil.ignore_patterns("__pycache__"))
    ours = tools_from_python_file(copy / f"{name}.py", f"{domain}/{name}.py")
    theirs = tools_from_package(f"tau2.domains.{module}", module)
    assert sorted(ours) == sorted(theirs)
    for tool, decl in theirs.items():
        mine = ours[tool]
        assert mine.kind == decl.kind
        assert mine.declaration["description"] == decl.declaration["description"]
        params = decl.declaration["parameters"]
        assert mine.declaration["parameters"]["required"] == params.get("required", [])
        for arg, schema in params["properties"].items():
            got = mine.declaration["parameters"]["properties"][arg]
            assert got.get("description") == schema.get("description"), (tool, arg)
            assert got.get("enum") == schema.get("enum"), (tool, arg)


def test_an_inline_literal_and_a_non_google_docstring(tmp_path: Path) -> None:
    # An edge τ²'s own modules do not hold: Literal written in the signature, a docstring with
    # no Args section, and an alias that is not a Literal.
    source = '''
from typing import Literal
Mode = str

@is_tool(ToolType.WRITE)
def lock(self, mode: Literal["pin", "puk"], other: Mode, tries: int = 3) -> str:
    """Lock the SIM.

    It cannot be undone by a tool.
    """
'''
    path = tmp_path / "tools.py"
    path.write_text(source, "utf-8")
    lock = tools_from_python_file(path, "tools.py")["lock"].declaration
    assert lock["description"] == "Lock the SIM.\n\nIt cannot be undone by a tool."
    assert lock["parameters"] == {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["pin", "puk"]},
            "other": {},
            "tries": {"type": "integer"},
        },
        "required": ["mode", "other"],
    }


def test_import_with_tools_py_writes_taus_argument_descriptions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = tmp_path / "p"
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", encoding="utf-8")
    (root / "casework.toml").write_text(
        'name = "t"\n[agent]\ntools = "agent/tools.json"\n', "utf-8"
    )
    code = tmp_path / "airline"
    shutil.copytree(CODE / "airline", code, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(root)
    out = run_cli("import", "tau2", "--domain", "airline", "--tools", str(code / "tools.py"),
                  "--dataset", "air")  # fmt: skip
    assert out.exit_code == 0, out.output + out.stderr
    written = json.loads((root / "catalogues/air/airline.tools.json").read_text("utf-8"))
    cabin = {t["name"]: t for t in written}["update_reservation_flights"]["parameters"]
    assert cabin["properties"]["cabin"] == {
        "type": "string",
        "enum": ["business", "economy", "basic_economy"],
        "description": "The cabin class of the reservation",
    }
