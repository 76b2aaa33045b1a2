"""The pseudonym key: read from `CASEWORK_PSEUDONYM_KEY` or a key file outside the repository.

Entry point: :func:`load_key`, which refuses a missing key, a key shorter than 32 bytes and a key
file inside the project's git work tree. Rows record :attr:`PseudonymKey.fingerprint`, never the key.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from casework.errors import ConfigError
from casework.project import CONFIG_NAME, Project

__all__ = ["KEY_ENV", "MIN_KEY_BYTES", "PseudonymKey", "load_key"]

#: Environment variable holding the key (wins over `privacy.key_file`).
KEY_ENV = "CASEWORK_PSEUDONYM_KEY"
#: Shortest key accepted, in bytes (HMAC-SHA256 gains nothing above 64, loses below 32).
MIN_KEY_BYTES = 32

_HOW = (
    'generate one with `python -c "import secrets; print(secrets.token_hex(32))"` and keep it '
    "outside the repository"
)


@dataclass(frozen=True)
class PseudonymKey:
    """Key material for keyed pseudonyms; ``repr`` never shows the secret.

    Attributes:
        secret: The key bytes.
        source: Where it came from (the variable name or the file path), for messages.
    """

    secret: bytes = field(repr=False)
    source: str

    @property
    def fingerprint(self) -> str:
        """A non-reversible fingerprint (`sha256:` + 16 hex) recorded on mined rows."""
        digest = hashlib.sha256(b"casework-pseudonym-key\0" + self.secret).hexdigest()
        return f"sha256:{digest[:16]}"


def _work_tree(start: Path) -> Path | None:
    """The git work tree holding ``start`` (the folder with `.git`), if any."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def _check_length(secret: bytes, where: str, field: str | None) -> None:
    if len(secret) < MIN_KEY_BYTES:
        raise ConfigError(
            where,
            None,
            field,
            f"the pseudonym key is too short ({len(secret)} bytes; at least "
            f"{MIN_KEY_BYTES} are needed): {_HOW}",
        )


def load_key(project: Project, environ: Mapping[str, str] | None = None) -> PseudonymKey:
    """Load the pseudonym key for ``project``.

    `CASEWORK_PSEUDONYM_KEY` (its UTF-8 bytes, surrounding whitespace removed) wins; otherwise
    `privacy.key_file` (its bytes, trailing whitespace removed), relative to the project root.

    Raises:
        ConfigError: No key is configured, the key file is missing or inside the git work tree
            (or the project folder), or the key is shorter than :data:`MIN_KEY_BYTES`.
    """
    env = os.environ if environ is None else environ
    value = env.get(KEY_ENV)
    if value is not None and value.strip():
        secret = value.strip().encode("utf-8")
        _check_length(secret, KEY_ENV, None)
        return PseudonymKey(secret, KEY_ENV)
    key_file = project.config.privacy.key_file
    if not key_file:
        raise ConfigError(
            CONFIG_NAME,
            None,
            "privacy.key_file",
            f"no pseudonym key: set {KEY_ENV} or privacy.key_file "
            f"(a file of at least {MIN_KEY_BYTES} random bytes); {_HOW}",
        )
    path = Path(key_file).expanduser()
    path = (project.root / path if not path.is_absolute() else path).resolve()
    where, field = project.relative(project.config_path), "privacy.key_file"
    root = project.root.resolve()
    for folder in {root, _work_tree(root), _work_tree(path.parent)}:
        if folder is not None and _inside(path, folder):
            raise ConfigError(
                where,
                None,
                field,
                f"the key file is inside the git work tree or project folder {folder}; "
                "move it outside the repository so it can never be committed",
                key_file,
            )
    if not path.is_file():
        raise ConfigError(where, None, field, "key file not found", key_file)
    secret = path.read_bytes().rstrip()
    _check_length(secret, where, field)
    return PseudonymKey(secret, str(path))
