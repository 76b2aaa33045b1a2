"""Start-up: `casework --help` imports no command, `casework dataset versions` no heavy library.

The command table in ``casework.cli`` (module and short help of each command) stands in for the
commands until one runs; these tests keep it equal to the commands, and the lazy package exports
(:mod:`casework._lazy`) equal to the imports type checkers read.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

import casework
import casework.cli
from casework.cli import ALIAS_MODULES, COMMAND_HELP, COMMAND_MODULES, COMMAND_TABLE, cli
from casework.cli._lazy_group import LazyGroup
from tests.unmeasured import unmeasured_env

SRC = Path(casework.__file__).parent

HEAVY = ("sqlalchemy", "numpy", "sklearn", "scipy", "pyarrow", "openai", "httpx", "jinja2")

# Runs the CLI in a fresh interpreter, then prints the heavy and casework modules it imported.
PROBE = """
import json, sys
from casework.cli import cli
try:
    cli.main(sys.argv[1:], prog_name="casework")
except SystemExit:
    pass
heavy = HEAVY
print(json.dumps({
    "heavy": sorted(m for m in sys.modules if m.split(".")[0] in heavy),
    "casework": sorted(m for m in sys.modules if m.startswith("casework")),
}))
""".replace("HEAVY", repr(HEAVY))


def _probe(*args: str, cwd: Path) -> dict[str, list[str]]:
    env = {**unmeasured_env(), "PYTHONPATH": str(SRC.parent)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _eager_commands(where: dict[str, str] | None = None) -> dict[str, click.Command]:
    """Every command of every ``casework.cli`` module with a ``COMMANDS`` list, by name."""
    commands: dict[str, click.Command] = {}
    for info in pkgutil.iter_modules(casework.cli.__path__):
        module = importlib.import_module(f"casework.cli.{info.name}")
        for command in getattr(module, "COMMANDS", []):
            assert command.name not in commands, f"{command.name} registered twice"
            commands[str(command.name)] = command
            if where is not None:
                where[str(command.name)] = info.name
    return commands


def test_the_table_lists_exactly_the_commands_the_modules_register() -> None:
    where: dict[str, str] = {}
    commands = _eager_commands(where)
    assert list(COMMAND_TABLE) == list(cli.list_commands(click.Context(cli)))
    assert set(COMMAND_TABLE) == set(commands)
    assert where == COMMAND_MODULES


def test_the_alias_table_lists_exactly_the_old_spellings_the_modules_register() -> None:
    where: dict[str, str] = {}
    for info in pkgutil.iter_modules(casework.cli.__path__):
        module = importlib.import_module(f"casework.cli.{info.name}")
        for command in getattr(module, "ALIASES", []):
            assert command.hidden, f"{command.name} is an old spelling: it must be hidden"
            assert command.name not in where, f"{command.name} registered twice"
            where[str(command.name)] = info.name
    assert where == ALIAS_MODULES
    assert not set(ALIAS_MODULES) & set(COMMAND_TABLE)
    ctx = click.Context(cli)
    for name in ALIAS_MODULES:
        command = cli.get_command(ctx, name)
        assert command is not None and command.hidden
        assert name not in cli.list_commands(ctx)


def _lazy_groups() -> list[tuple[str, LazyGroup]]:
    ctx = click.Context(cli)
    found = [(name, cli.get_command(ctx, name)) for name in COMMAND_TABLE]
    return [(name, g) for name, g in found if isinstance(g, LazyGroup) and g.lazy]


def test_some_groups_load_their_heavier_commands_lazily() -> None:
    assert "dataset" in dict(_lazy_groups())


@pytest.mark.parametrize("width", [40, 80, 100])
def test_a_lazy_groups_listing_equals_clicks_listing_of_the_loaded_commands(width: int) -> None:
    for name, group in _lazy_groups():
        ctx = click.Context(group, info_name=name, terminal_width=width, max_content_width=width)
        lazy = click.HelpFormatter(width=width)
        fresh = LazyGroup(name, commands=dict(group.commands), lazy=group.lazy)
        for loaded in group.lazy:
            fresh.commands.pop(loaded, None)
        fresh.format_commands(ctx, lazy)
        eager = click.HelpFormatter(width=width)
        click.Group.format_commands(group, ctx, eager)  # loads every command
        assert lazy.getvalue() == eager.getvalue()
        for sub, (_, short) in group.lazy.items():
            command = group.get_command(ctx, sub)
            assert command is not None and not command.hidden
            first = " ".join((command.help or "").split("\n\n")[0].split())
            assert short == first, f"{name} {sub}: update the lazy table of `{name}`"


def test_each_short_help_is_the_commands_own() -> None:
    for name, command in _eager_commands().items():
        source = command.short_help or command.help or ""
        first = " ".join(source.split("\n\n")[0].split())
        assert COMMAND_HELP[name] == first, (
            f"{name}: update COMMAND_TABLE in casework/cli/__init__.py"
        )
        assert not command.hidden
        assert not command.deprecated


@pytest.mark.parametrize("width", [40, 80, 100, 200])
def test_the_lazy_listing_equals_clicks_listing_of_the_loaded_commands(width: int) -> None:
    ctx = click.Context(cli, info_name="casework", terminal_width=width, max_content_width=width)
    lazy = click.HelpFormatter(width=width)
    cli.format_commands(ctx, lazy)
    eager = click.HelpFormatter(width=width)
    click.Group.format_commands(cli, ctx, eager)  # loads every command
    assert lazy.getvalue() == eager.getvalue()
    assert "dataset" in lazy.getvalue()


def test_help_imports_no_command_module_and_no_heavy_library(tmp_path: Path) -> None:
    found = _probe("--help", cwd=tmp_path)
    assert found["heavy"] == []
    assert [m for m in found["casework"] if m.startswith("casework.cli.")] == [
        "casework.cli.context"
    ]


@pytest.mark.parametrize(
    "args", [("dataset", "--help"), ("dataset", "check", "--help"), ("check", "--help")]
)
def test_the_dataset_group_and_its_help_import_no_heavy_library(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    found = _probe(*args, cwd=tmp_path)
    assert found["heavy"] == []
    assert "casework.cli._dataset_erasure" not in found["casework"]


def test_versions_imports_no_heavy_library(project_dir: Path) -> None:
    released = subprocess.run(
        [sys.executable, "-c", PROBE, "dataset", "release", "refunds", "-m", "first"],
        cwd=project_dir,
        env={**unmeasured_env(), "PYTHONPATH": str(SRC.parent)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert "released" in released.stdout
    found = _probe("dataset", "versions", "refunds", cwd=project_dir)
    assert found["heavy"] == []
    assert "casework.dataset.versions" in found["casework"]
    assert "casework.gate" not in found["casework"]


def test_library_parameter_names_are_spelled_as_flags_in_a_fresh_process(
    project_dir: Path,
) -> None:
    env = {**unmeasured_env(), "PYTHONPATH": str(SRC.parent)}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from casework.cli import main; main()",
            "dataset",
            "release",
            "refunds",
            "-m",
            " ",
        ],
        cwd=project_dir,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "--message" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def _lazy_packages() -> list[Path]:
    return sorted(p for p in SRC.rglob("__init__.py") if "attach(" in p.read_text(encoding="utf-8"))


def _typed_imports(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        ):
            return {
                imp.module: tuple(a.name for a in imp.names)
                for imp in node.body
                if isinstance(imp, ast.ImportFrom) and imp.module
            }
    raise AssertionError("no `if TYPE_CHECKING:` block")


def _attach_table(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "attach":
            table = ast.literal_eval(node.args[1])
            assert isinstance(table, dict)
            return {str(k): tuple(v) for k, v in table.items()}
    raise AssertionError("no attach() call")


def test_some_packages_export_lazily() -> None:
    names = {p.parent.name for p in _lazy_packages()}
    assert {"casework", "gate", "labelling", "synth"} <= names


@pytest.mark.parametrize("init", _lazy_packages(), ids=lambda p: p.parent.name)
def test_lazy_exports_equal_the_typed_imports_and_all(init: Path) -> None:
    tree = ast.parse(init.read_text(encoding="utf-8"))
    table = _attach_table(tree)
    assert table == _typed_imports(tree)
    package = ".".join(init.parent.relative_to(SRC.parent).parts)
    module = importlib.import_module(package)
    exported = {name for names in table.values() for name in names}
    assert exported == set(module.__all__) - {"__version__"}
    for name in sorted(exported):
        value = getattr(module, name)
        assert not isinstance(value, type(sys)), f"{package}.{name} is a module"
        assert name in dir(module)


def test_an_unknown_name_is_an_attribute_error() -> None:
    import casework.gate

    name = "no_such_name"
    with pytest.raises(AttributeError, match=name):
        getattr(casework.gate, name)


def test_a_submodule_imported_first_does_not_hide_the_function_of_its_name() -> None:
    code = (
        "import casework.labelling.dataset_agreement, casework.labelling as L, inspect;"
        "print(inspect.isfunction(L.dataset_agreement))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**unmeasured_env(), "PYTHONPATH": str(SRC.parent)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "True"


DOCUMENTED = (
    "casework.schema._records",
    "casework.schema._version",
    "casework.schema._leakage",
    "casework.project",
)


@pytest.mark.parametrize("module_name", DOCUMENTED)
def test_field_descriptions_equal_pydantics_own_extraction(module_name: str) -> None:
    """`document_fields` gives every field the description `use_attribute_docstrings` would."""
    from pydantic import BaseModel
    from pydantic._internal._docs_extraction import extract_docstrings_from_cls

    module = importlib.import_module(module_name)
    models = [
        m
        for m in vars(module).values()
        if isinstance(m, type) and issubclass(m, BaseModel) and m.__module__ == module_name
    ]
    described = 0
    for model in models:
        for name, info in model.model_fields.items():
            # pydantic reads the docs of the class that declares the field (nearest in the MRO)
            owner = next(k for k in model.__mro__ if name in inspect.get_annotations(k))
            want = extract_docstrings_from_cls(owner, use_inspect=True).get(name)
            assert info.description == want, f"{model.__name__}.{name}"
            described += want is not None
    assert described >= 4
