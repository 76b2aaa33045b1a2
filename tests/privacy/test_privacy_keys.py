"""The pseudonym key: where it comes from and what is refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from casework.errors import ConfigError
from casework.privacy import PseudonymKey, load_key
from casework.privacy.keys import KEY_ENV
from casework.project import load_project

GOOD = "9f2c71d04be8a6357e1b0c94d28f6a3e"


def _project(root: Path, privacy: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "casework.toml").write_text(f'name = "p"\n{privacy}', encoding="utf-8")
    return root


def test_key_from_environment(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path / "p"))
    key = load_key(project, {KEY_ENV: f"  {GOOD}\n"})
    assert key.secret == GOOD.encode()
    assert key.source == KEY_ENV
    assert GOOD not in repr(key)


def test_missing_key_is_refused(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path / "p"))
    with pytest.raises(ConfigError) as exc:
        load_key(project, {})
    assert str(exc.value).startswith(
        "casework.toml: privacy.key_file: no pseudonym key: set CASEWORK_PSEUDONYM_KEY or "
        "privacy.key_file (a file of at least 32 random bytes)"
    )


def test_short_key_is_refused_without_showing_it(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path / "p"))
    with pytest.raises(ConfigError) as exc:
        load_key(project, {KEY_ENV: "short-secret-31-bytes-long-abcd"})
    message = str(exc.value)
    assert message.startswith(
        "CASEWORK_PSEUDONYM_KEY: the pseudonym key is too short (31 bytes; at least 32 are needed)"
    )
    assert "short-secret" not in message


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("x" * 32, "it repeats a 1-byte block"),
        ("0123456789abcdef" * 2, "it repeats a 16-byte block"),
        ("ab" * 20, "it repeats a 2-byte block"),
        (
            "a" * 31 + "b",
            "2 distinct byte value(s), about 6 bits by its byte frequencies; at least 8 distinct "
            "values and 80 bits are needed",
        ),
    ],
)
def test_low_entropy_keys_are_refused(tmp_path: Path, key: str, why: str) -> None:
    project = load_project(_project(tmp_path / "p"))
    with pytest.raises(ConfigError) as exc:
        load_key(project, {KEY_ENV: key})
    assert str(exc.value).startswith(
        f"CASEWORK_PSEUDONYM_KEY: the pseudonym key has too little entropy ({why}): "
    )
    assert key not in str(exc.value)


def test_random_keys_are_accepted(tmp_path: Path) -> None:
    import secrets

    project = load_project(_project(tmp_path / "p"))
    load_key(project, {KEY_ENV: "aaaabbbbccccddddeeeeffffgggghhhhz"})  # 9 values, about 99 bits
    for _ in range(2000):
        for key in (secrets.token_hex(16), secrets.token_hex(32), secrets.token_urlsafe(32)):
            load_key(project, {KEY_ENV: key})


def test_low_entropy_key_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "k").write_bytes(bytes(32))
    root = _project(tmp_path / "p", f'[privacy]\nkey_file = "{tmp_path / "k"}"\n')
    with pytest.raises(ConfigError, match=r"privacy\.key_file: the pseudonym key has too little"):
        load_key(load_project(root), {})


def test_key_file_outside_the_repository(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "casework.key").write_bytes(GOOD.encode() + b"\n")
    root = _project(tmp_path / "p", f'[privacy]\nkey_file = "{secrets / "casework.key"}"\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    key = load_key(load_project(root), {})
    assert key.secret == GOOD.encode()
    assert key.fingerprint == PseudonymKey(GOOD.encode(), "x").fingerprint
    assert key.fingerprint.startswith("sha256:") and len(key.fingerprint) == 23


def test_key_file_inside_the_git_work_tree_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path / "repo" / "evals", '[privacy]\nkey_file = "../keys/casework.key"\n')
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    (tmp_path / "repo" / "keys").mkdir()
    (tmp_path / "repo" / "keys" / "casework.key").write_text(GOOD, encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_key(load_project(root), {})
    assert "privacy.key_file: the key file is inside the git work tree or project folder" in str(
        exc.value
    )
    assert str(exc.value).endswith("Got '../keys/casework.key'.")


def test_key_file_inside_the_project_folder_is_refused_even_without_git(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", '[privacy]\nkey_file = "casework.key"\n')
    (root / "casework.key").write_text(GOOD, encoding="utf-8")
    with pytest.raises(ConfigError, match="inside the git work tree or project folder"):
        load_key(load_project(root), {})


def test_missing_key_file(tmp_path: Path) -> None:
    # A relative path (outside the project): a long absolute one is shortened in the message.
    root = _project(tmp_path / "p", '[privacy]\nkey_file = "../nope.key"\n')
    with pytest.raises(ConfigError) as exc:
        load_key(load_project(root), {})
    assert str(exc.value).endswith("privacy.key_file: key file not found. Got '../nope.key'.")


def test_short_key_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "k").write_bytes(b"x" * 20)
    root = _project(tmp_path / "p", f'[privacy]\nkey_file = "{tmp_path / "k"}"\n')
    with pytest.raises(ConfigError, match=r"too short \(20 bytes; at least 32 are needed\)"):
        load_key(load_project(root), {})


def test_environment_wins_over_key_file(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", f'[privacy]\nkey_file = "{tmp_path / "missing"}"\n')
    assert load_key(load_project(root), {KEY_ENV: GOOD}).source == KEY_ENV
