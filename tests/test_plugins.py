from __future__ import annotations

from pathlib import Path

import pytest

from casework.errors import ConfigError, UsageError
from casework.plugins import load_object


def test_loads_a_dotted_attribute_from_the_project_root(tmp_path: Path) -> None:
    (tmp_path / "proj_plugin_mod_a.py").write_text("class Box:\n    value = 41\n")
    assert load_object("proj_plugin_mod_a:Box.value", root=tmp_path, where="x") == 41


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_colon", "casework.toml: agent.tools_from: expected pkg.module:attr. Got 'no_colon'."),
        (
            "proj_plugin_missing_xyz:f",
            "casework.toml: agent.tools_from: cannot import 'proj_plugin_missing_xyz': "
            "No module named 'proj_plugin_missing_xyz'.",
        ),
        (
            "proj_plugin_mod_b:nope",
            "casework.toml: agent.tools_from: module 'proj_plugin_mod_b' has no attribute 'nope'.",
        ),
    ],
)
def test_bad_targets_say_what_named_them(tmp_path: Path, target: str, message: str) -> None:
    (tmp_path / "proj_plugin_mod_b.py").write_text("x = 1\n")
    with pytest.raises(ConfigError) as info:
        load_object(target, root=tmp_path, where="agent.tools_from")
    assert str(info.value) == message


def test_error_class_is_the_callers(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        load_object("nope", root=tmp_path, where="--agent", error=UsageError)
