"""The pseudonym key: read from `CASEWORK_PSEUDONYM_KEY` or a key file outside the repository.

Entry point: :func:`load_key`, which refuses a missing key, a key shorter than 32 bytes, a
low-entropy key and a key file inside the project's git work tree. Rows record
:attr:`PseudonymKey.fingerprint`, never the key; :func:`check_fingerprints` refuses a key whose
fingerprint is not the one a dataset's rows were mined with.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from casework.errors import ConfigError
from casework.project import CONFIG_NAME, Project

__all__ = [
    "KEY_ENV",
    "MIN_KEY_BITS",
    "MIN_KEY_BYTES",
    "MIN_KEY_DISTINCT",
    "PseudonymKey",
    "check_fingerprints",
    "load_key",
]

#: Environment variable holding the key (wins over `privacy.key_file`).
KEY_ENV = "CASEWORK_PSEUDONYM_KEY"
#: Shortest key accepted, in bytes (HMAC-SHA256 gains nothing above 64, loses below 32).
MIN_KEY_BYTES = 32
#: Fewest distinct byte values a key may hold (a random 32-character hex key has 9 or more).
MIN_KEY_DISTINCT = 8
#: Lowest entropy a key's byte frequencies may show, in bits (length × Shannon entropy per byte;
#: a random 32-character hex key shows 92 or more).
MIN_KEY_BITS = 80

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


def _estimated_bits(secret: bytes) -> float:
    """Length × the Shannon entropy of the key's byte frequencies (an upper bound on its entropy)."""
    n = len(secret)
    return -sum(c * math.log2(c / n) for c in Counter(secret).values())


def _period(secret: bytes) -> int | None:
    """The length of the shortest block the key repeats (``abcdabcd…``), if it is a repetition."""
    n = len(secret)
    for size in range(1, n // 2 + 1):
        if n % size == 0 and secret[:size] * (n // size) == secret:
            return size
    return None


def _check_entropy(secret: bytes, where: str, field: str | None) -> None:
    distinct = len(set(secret))
    bits = _estimated_bits(secret)
    period = _period(secret)
    if distinct < MIN_KEY_DISTINCT or bits < MIN_KEY_BITS or period is not None:
        why = (
            f"it repeats a {period}-byte block"
            if period is not None
            else f"{distinct} distinct byte value(s), about {bits:.0f} bits by its byte frequencies; "
            f"at least {MIN_KEY_DISTINCT} distinct values and {MIN_KEY_BITS} bits are needed"
        )
        raise ConfigError(
            where,
            None,
            field,
            f"the pseudonym key has too little entropy ({why}): a guessable key lets "
            f"anyone recompute pseudonyms from identifiers; {_HOW}",
        )


def _check(secret: bytes, where: str, field: str | None = None) -> None:
    _check_length(secret, where, field)
    _check_entropy(secret, where, field)


def check_fingerprints(
    key: PseudonymKey, fingerprints: Iterable[str | None], where: str, action: str
) -> None:
    """Refuse ``key`` when rows of a dataset were mined under another key.

    Args:
        key: The key loaded for this command.
        fingerprints: ``provenance.scrub.key_fingerprint`` of the dataset's rows (``None`` for
            rows that were not mined).
        where: The dataset, as the user names it (for the message).
        action: What would go wrong under the wrong key, as a clause (for the message).

    Raises:
        ConfigError: Some row carries another fingerprint; the message names both.
    """
    counts = Counter(f for f in fingerprints if f)
    others = sorted(f for f in counts if f != key.fingerprint)
    if not others:
        return
    listed = ", ".join(f"{f} ({counts[f]} row(s))" for f in others)
    raise ConfigError(
        where,
        None,
        None,
        f"rows were mined with pseudonym key {listed}, but the key from {key.source} "
        f"has fingerprint {key.fingerprint}: {action}. Use the key the rows were mined with",
    )


def load_key(project: Project, environ: Mapping[str, str] | None = None) -> PseudonymKey:
    """Load the pseudonym key for ``project``.

    `CASEWORK_PSEUDONYM_KEY` (its UTF-8 bytes, surrounding whitespace removed) wins; otherwise
    `privacy.key_file` (its bytes, trailing whitespace removed), relative to the project root.

    Raises:
        ConfigError: No key is configured, the key file is missing or inside the git work tree
            (or the project folder), the key is shorter than :data:`MIN_KEY_BYTES`, or it has
            too little entropy (fewer than :data:`MIN_KEY_DISTINCT` distinct bytes, less than
            :data:`MIN_KEY_BITS` bits by its byte frequencies, or a repeated block).
    """
    env = os.environ if environ is None else environ
    value = env.get(KEY_ENV)
    if value is not None and value.strip():
        secret = value.strip().encode("utf-8")
        _check(secret, KEY_ENV)
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
    _check(secret, where, field)
    return PseudonymKey(secret, str(path))
