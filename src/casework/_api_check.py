"""The public-API contract: every export is used by a client or reviewed for users, and written once.

A package's ``__init__`` ``__all__`` is its public API. This module reads the source tree (no
import of casework itself, so it runs in ``make check`` beside ``lint-imports``) and reports:

- an export that neither the CLI (``casework.cli``), the web app (``casework.web``), the
  examples nor the benchmarks use, and that ``docs/api.md`` does not mark as for ``users``;
- a name exported by two packages (a re-export of another package's name);
- a name ``docs/api.md`` lists that its package does not export, an export the page does not
  list, or a use the page claims (``cli``, ``web``, ``examples``, ``benchmarks``) that the code
  does not make;
- more exports than the reviewed ceiling.

Run ``python -m casework._api_check [ROOT]`` from the repository; it exits 1 and prints one line per
problem, or prints the counts per package and exits 0.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# The reviewed size of the public API (docs/api.md); raising it is a reviewed decision.
CEILING = 318

# Who may justify an export: the two clients, the examples and the benchmarks read the code;
# `users` is a reviewed claim written in docs/api.md.
CLIENTS = ("cli", "web", "examples", "benchmarks")
CLAIMS = (*CLIENTS, "users")


@dataclass(frozen=True)
class Export:
    """One name in a package's ``__all__``, with where the package takes it from."""

    package: str
    name: str
    source: str | None
    """The module the ``__init__`` imports the name from (None: defined in the ``__init__``)."""
    path: Path
    line: int


@dataclass
class Uses:
    """Who uses each ``(package, name)`` through the package (not through its submodule)."""

    by: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    where: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    """Files that do not parse (their uses are unknown, so the check cannot pass)."""

    def add(self, package: str, name: str, who: str, at: str) -> None:
        """Record that ``who`` (a client, ``tests`` or a package) uses ``package.name`` at ``at``."""
        self.by.setdefault((package, name), set()).add(who)
        self.where.setdefault((package, name), []).append(at)


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _packages(src: Path) -> dict[str, Path]:
    return {
        _module_name(init, src): init for init in sorted((src / "casework").rglob("__init__.py"))
    }


def _all_of(tree: ast.Module) -> tuple[list[str], int]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            names = ast.literal_eval(node.value)
            return [str(n) for n in names], node.lineno
    return [], 0


def _imports_of(tree: ast.Module, package: str) -> Iterator[tuple[str, str, int]]:
    """``(module, name, line)`` of every ``from … import`` at the top of an ``__init__``."""
    body: list[ast.stmt] = []
    for node in tree.body:
        body.append(node)
        if isinstance(node, ast.If):
            body.extend(node.body)
    for node in body:
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node, package, is_package=True)
            for alias in node.names:
                yield module, alias.asname or alias.name, node.lineno


def _absolute(node: ast.ImportFrom, module: str, *, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def exports(src: Path) -> list[Export]:
    """Every name in every ``src/casework/**/__init__.py`` ``__all__`` (``__version__`` aside)."""
    found: list[Export] = []
    for package, init in _packages(src).items():
        tree = ast.parse(init.read_text(encoding="utf-8"))
        names, line = _all_of(tree)
        sources = {name: (module, at) for module, name, at in _imports_of(tree, package)}
        for name in names:
            if name == "__version__":
                continue
            module, at = sources.get(name, (None, line))
            found.append(Export(package, name, module, init, at))
    return found


def _file_of(src: Path, module: str) -> Path | None:
    base = src.joinpath(*module.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def origin(src: Path, export: Export) -> tuple[str, str]:
    """The module that defines an export, following ``from … import`` re-exports to the end."""
    module, name = export.source, export.name
    if module is None:
        return export.package, name
    seen: set[tuple[str, str]] = set()
    while (module, name) not in seen:
        seen.add((module, name))
        path = _file_of(src, module)
        if path is None:
            break
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:
            break
        onward = {
            (alias.asname or alias.name): (base, alias.name)
            for base, alias in _from_imports(tree, module, path.name == "__init__.py")
        }
        if name not in onward:
            break
        module, name = onward[name]
    return module, name


def _from_imports(
    tree: ast.Module, module: str, is_package: bool
) -> Iterator[tuple[str, ast.alias]]:
    body: list[ast.stmt] = []
    for node in tree.body:
        body.append(node)
        if isinstance(node, ast.If):
            body.extend(node.body)
    for node in body:
        if isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package=is_package)
            for alias in node.names:
                yield base, alias


def _who(path: Path, root: Path, src: Path) -> tuple[str, str]:
    """The kind of user a file is (a client, ``tests``, ``scripts`` or a package) and its module."""
    if path.is_relative_to(src):
        module = _module_name(path, src)
        for client, prefix in (("cli", "casework.cli"), ("web", "casework.web")):
            if module == prefix or module.startswith(prefix + "."):
                return client, module
        return module, module
    return path.relative_to(root).parts[0], ""


def _python_files(root: Path, src: Path) -> Iterator[Path]:
    yield from sorted((src / "casework").rglob("*.py"))
    for top in ("tests", "benchmarks", "examples", "scripts"):
        yield from sorted((root / top).rglob("*.py"))


def uses(root: Path, packages: set[str]) -> Uses:
    """Every use of a package's name through the package, by who uses it.

    Reads ``from casework.x import Name``, ``casework.x.Name`` and ``import casework.x as m;
    m.Name``; a module's use of its own package's names is no use.
    """
    src = root / "src"
    found = Uses()
    for path in _python_files(root, src):
        who, module = _who(path, root, src)
        is_package = path.name == "__init__.py"
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except FileNotFoundError:  # removed while the tree was read: it uses nothing
            continue
        except SyntaxError as error:
            found.unreadable.append(f"{path.relative_to(root)}:{error.lineno}: {error.msg}")
            continue
        aliases: dict[str, str] = {}
        shown = str(path.relative_to(root))  # once per file: per node it was most of the check
        for node in ast.walk(tree):
            at = f"{shown}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom):
                base = _absolute(node, module, is_package=is_package)
                for alias in node.names:
                    if base in packages and not _inside(module, base):
                        found.add(base, alias.name, _package_of(who, packages), at)
                    if f"{base}.{alias.name}" in packages:
                        aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in packages:
                        aliases[alias.asname] = alias.name
                    elif not alias.asname:
                        aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
            elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Store):
                dotted = _dotted(node, aliases)
                if dotted is None:
                    continue
                owner, _, name = dotted.rpartition(".")
                if (
                    owner in packages
                    and not _inside(module, owner)
                    and f"{owner}.{name}" not in packages
                ):
                    found.add(owner, name, _package_of(who, packages), at)
    return found


def _inside(module: str, package: str) -> bool:
    """Whether ``module`` is ``package`` or one of its modules: a package's own use exports nothing."""
    return module == package or module.startswith(package + ".")


def _package_of(who: str, packages: set[str]) -> str:
    """A source module's top package (``casework.dataset``); clients and folders stay as they are."""
    if not who.startswith("casework."):
        return who
    parts = who.split(".")
    while parts and ".".join(parts) not in packages:
        parts.pop()
    return ".".join(parts)


def _dotted(node: ast.Attribute, aliases: dict[str, str]) -> str | None:
    parts = [node.attr]
    value: ast.expr = node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if not isinstance(value, ast.Name) or value.id not in aliases:
        return None
    return ".".join([aliases[value.id], *reversed(parts)])


@dataclass(frozen=True)
class Documented:
    """One line of docs/api.md: a package's name, what the page says uses it, and its line."""

    package: str
    name: str
    claims: frozenset[str]
    line: int


_SECTION = re.compile(r"^## `(casework(?:\.\w+)*)`")
_ROW = re.compile(r"^\| `(\w+)` \|\s*([\w, ]*?)\s*\|")


def documented(page: Path) -> list[Documented]:
    """The names docs/api.md lists: ``| `name` | claims | what it is for |`` under a package heading."""
    rows: list[Documented] = []
    package = ""
    for number, text in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        if section := _SECTION.match(text):
            package = section.group(1)
        elif (row := _ROW.match(text)) and package:
            claims = frozenset(c.strip() for c in row.group(2).split(",") if c.strip())
            rows.append(Documented(package, row.group(1), claims, number))
    return rows


def problems(root: Path, ceiling: int = CEILING) -> list[str]:
    """Every breach of the public-API contract in the tree at ``root``, one located line each."""
    src = root / "src"
    found = exports(src)
    packages = set(_packages(src))
    used = uses(root, packages)
    page = root / "docs" / "api.md"
    docs = documented(page) if page.exists() else []
    out: list[str] = [f"{line}: not Python, so its uses are unknown" for line in used.unreadable]

    def where(path: Path, line: int) -> str:
        return f"{path.relative_to(root)}:{line}"

    homes: dict[tuple[str, str], list[Export]] = {}
    for export in found:
        homes.setdefault(origin(src, export), []).append(export)
    for (_, name), those in sorted(homes.items()):
        if len(those) > 1:
            paths = ", ".join(e.package for e in those)
            out.append(
                f"{where(those[-1].path, those[-1].line)}: {name}: exported by two packages, "
                f"write it once. Got {paths}"
            )

    listed = {(d.package, d.name): d for d in docs}
    exported = {(e.package, e.name): e for e in found}
    for export in found:
        key = (export.package, export.name)
        doc = listed.get(key)
        clients = used.by.get(key, set()) & set(CLIENTS)
        if doc is None:
            out.append(
                f"{where(export.path, export.line)}: {export.name}: exported by "
                f"{export.package} but not listed in docs/api.md. Got uses by "
                f"{sorted(used.by.get(key, set())) or 'nothing'}"
            )
            continue
        if not clients and "users" not in doc.claims:
            out.append(
                f"{where(export.path, export.line)}: {export.name}: exported by "
                f"{export.package} but no client uses it and docs/api.md does not mark it for "
                f"users. Got uses by {sorted(used.by.get(key, set())) or 'nothing'}"
            )
    for doc in docs:
        key = (doc.package, doc.name)
        if key not in exported:
            out.append(
                f"docs/api.md:{doc.line}: {doc.name}: listed but {doc.package} does not export it"
            )
            continue
        unknown = doc.claims - set(CLAIMS)
        untrue = (doc.claims & set(CLIENTS)) - used.by.get(key, set())
        if unknown:
            out.append(
                f"docs/api.md:{doc.line}: {doc.name}: the users column names "
                f"{', '.join(CLAIMS)}. Got {', '.join(sorted(unknown))}"
            )
        if untrue:
            out.append(
                f"docs/api.md:{doc.line}: {doc.name}: the page says {', '.join(sorted(untrue))} "
                f"uses it, but the code does not. Got uses by "
                f"{sorted(used.by.get(key, set())) or 'nothing'}"
            )
    if len(found) > ceiling:
        out.append(
            f"src/casework/_api_check.py: CEILING: {len(found)} exports, more than the "
            f"reviewed {ceiling}. Got {len(found)}"
        )
    return out


def counts(src: Path) -> dict[str, int]:
    """The number of exports of each package."""
    tally: dict[str, int] = {package: 0 for package in _packages(src)}
    for export in exports(src):
        tally[export.package] += 1
    return tally


def main(argv: list[str] | None = None) -> int:
    """Print the problems of the tree at ``argv[0]`` (default: the working directory)."""
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else ".").resolve()
    found = problems(root)
    for problem in found:
        print(problem)
    if found:
        return 1
    tally = counts(root / "src")
    for package, number in tally.items():
        print(f"{package}: {number}")
    print(f"total: {sum(tally.values())} (ceiling {CEILING})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
