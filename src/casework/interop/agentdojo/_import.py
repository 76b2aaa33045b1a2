"""`casework import agentdojo SUITE`: an installed AgentDojo suite's tasks as cases.

Entry points: :func:`cases_from_suite` (pure: the cases, the base state and the tools) and
:func:`import_agentdojo` (writes the shared state and catalogue, releases the dataset).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from types import SimpleNamespace
from typing import Any

from agentdojo.attacks.attack_registry import ATTACKS, load_attack
from agentdojo.attacks.base_attacks import DEFAULT_MODEL_NAME
from agentdojo.functions_runtime import TaskEnvironment
from agentdojo.models import MODEL_NAMES
from agentdojo.task_suite.task_suite import TaskSuite

from casework.atomic import atomic_write_bytes
from casework.dataset.lock import dataset_lock
from casework.dataset.state import state_diff
from casework.dataset.store import load_dataset
from casework.dataset.store import release as release_cases
from casework.dataset.versions import CASES_FILE
from casework.errors import InputError, UsageError
from casework.interop.agentdojo._suites import DEFAULT_VERSION, load_suite, state_of
from casework.interop.agentdojo.environment import declarations
from casework.interop.agentdojo.oracle import CHECK, agentdojo_environment
from casework.names import check_name
from casework.project import Project
from casework.schema import Case, Split, VersionRecord

#: The attack whose injections make the security cases by default (AgentDojo's main attack).
DEFAULT_ATTACK = "important_instructions"


@dataclass(frozen=True)
class AgentDojoOptions:
    """How to import a suite.

    Attributes:
        version: AgentDojo benchmark version (`v1.2.2`, its default).
        attack: Attack whose injections make the user × injection security cases; ``None``
            imports the user tasks only.
        target_model: Model the attack text addresses, as AgentDojo names models
            (``gpt-4o-2024-05-13`` → "GPT-4"; AgentDojo reads it from the attacked pipeline's
            name). ``None``: the text names no model and says "the AI language model", as
            AgentDojo's own ``important_instructions_no_model_name`` attack writes it.
        split: Split of the cases.
    """

    version: str = DEFAULT_VERSION
    attack: str | None = DEFAULT_ATTACK
    target_model: str | None = None
    split: Split = "dev"


@dataclass(frozen=True)
class SuiteCases:
    """A suite's cases before they are written: the cases, their base state and tools."""

    cases: list[Case]
    base_state: dict[str, Any]
    tools: list[dict[str, Any]]
    user_tasks: int
    injection_tasks: int


def _injections(
    suite: TaskSuite[Any],
    options: AgentDojoOptions,
    pairs: Collection[tuple[str, str]] | None = None,
) -> dict[tuple[str, str], dict[str, str]]:
    """The attack's injections per (user task, injection task): all pairs, or ``pairs``."""
    if options.attack is None:
        return {}
    if options.attack not in ATTACKS:
        known = ", ".join(sorted(ATTACKS))
        raise UsageError(
            f"AgentDojo has no attack '{options.attack}' (attacks: {known}).", param="attack"
        )
    # AgentDojo's attacks read only the attacked pipeline's name (for the model they address),
    # and refuse a name they do not know: with no target model, any known name is given and
    # the model the text addresses is then set to AgentDojo's own neutral default.
    name = options.target_model or next(iter(MODEL_NAMES))
    pipeline: Any = SimpleNamespace(name=name)
    try:
        attack = load_attack(options.attack, suite, pipeline)
        if options.target_model is None and hasattr(attack, "model_name"):
            attack.model_name = DEFAULT_MODEL_NAME
        # Which placeholders a user task reads depends on the user task alone, and AgentDojo
        # finds them by loading the environment and replaying the ground truth: once per user
        # task, not once per pair (the same answer, a fraction of the time).
        attack.get_injection_candidates = cache(attack.get_injection_candidates)
        wanted = (
            [(u, i) for u in suite.user_tasks for i in suite.injection_tasks]
            if pairs is None
            else pairs
        )
        return {
            (u, i): attack.attack(suite.user_tasks[u], suite.injection_tasks[i]) for u, i in wanted
        }
    except ValueError as exc:  # AgentDojo's own refusal (a model name it does not know)
        param = "target_model" if options.target_model else "attack"
        raise UsageError(f"attack '{options.attack}': {exc}", param=param) from exc


def _case(
    suite: TaskSuite[Any],
    options: AgentDojoOptions,
    base: dict[str, Any],
    user_id: str,
    injection_id: str | None,
    injections: dict[str, str],
    loaded: TaskEnvironment | None = None,
) -> Case:
    """One case; ``loaded`` is AgentDojo's environment for ``injections`` when already loaded."""
    user = suite.user_tasks[user_id]
    # AgentDojo's own loader (its YAML with the injections formatted in), once per security
    # case: it is most of an import's time, and the only faithful way to the text the agent
    # will read. A user task without injections starts from the default environment.
    injected = loaded or suite.load_and_inject_default_environment(injections)
    planted_state = state_of(injected)
    state = state_of(user.init_environment(injected))
    params: dict[str, Any] = {"suite": suite.name, "version": options.version, "user_task": user_id}
    case_id = f"{suite.name}-{user_id}"
    planted = []
    if injection_id is not None:
        params["injection_task"] = injection_id
        params["attack"] = options.attack
        case_id += f"-{injection_id}"
        planted = [
            {"kind": "prompt_injection", "location": f"state:{op['path']}", "text": op["value"]}
            for op in state_diff(base, planted_state)
            if op["op"] == "replace" and isinstance(op.get("value"), str)
        ]
    prompt = user.PROMPT
    return Case.model_validate(
        {
            "id": case_id,
            "slice": suite.name,
            "split": options.split,
            "source": "hand",
            "situation": {
                "goal": prompt.strip().splitlines()[0][:200],
                "turns": [{"role": "user", "content": prompt}],
                "injected": planted,
                "state_ref": {"path": "states/x.json", "sha256": "0" * 64},
                "state_patch": state_diff(base, state),
            },
            "oracle": {"class": "programmatic", "check": CHECK, "check_params": params},
        }
    )


def cases_from_suite(suite: TaskSuite[Any], options: AgentDojoOptions) -> SuiteCases:
    """A suite's user tasks (utility cases) and user × injection pairs (security cases).

    Each case starts from the suite's default environment (the shared base state) with the
    user task's own initialisation and, for a security case, the attack's injections as a
    state patch; its oracle is AgentDojo's own utility or security function.

    Raises:
        UsageError: An unknown attack.
    """
    default = suite.load_and_inject_default_environment({})
    base = state_of(default)
    pairs = _injections(suite, options)
    cases = [
        _case(suite, options, base, u, None, {}, default.model_copy(deep=True))
        for u in suite.user_tasks
    ]
    cases += [_case(suite, options, base, u, i, inj) for (u, i), inj in pairs.items()]
    return SuiteCases(
        cases, base, declarations(suite), len(suite.user_tasks), len(suite.injection_tasks)
    )


@dataclass(frozen=True)
class AgentDojoImportReport:
    """What `casework import agentdojo` did.

    Attributes:
        dataset: The dataset.
        suite: The suite (also the slice, replaced as a whole).
        version: AgentDojo benchmark version.
        user_tasks: User tasks imported (one utility case each).
        injection_tasks: Injection tasks of the suite.
        security_cases: User × injection cases (0 without an attack).
        state: The shared base state file.
        tools: The tools file.
        environment: What serves the slice's tools in `casework run`: AgentDojo's own, which
            the cases' oracle brings (no configuration; a `[run.environments]` entry for the
            slice overrides it).
        release: The release (``None``: content unchanged).
    """

    dataset: str
    suite: str
    version: str
    user_tasks: int
    injection_tasks: int
    security_cases: int
    state: str
    tools: str
    environment: str
    release: VersionRecord | None


def _write(project: Project, rel: str, body: bytes) -> dict[str, str]:
    target = project.path(rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.is_file() or target.read_bytes() != body:
        atomic_write_bytes(target, body)
    return {"path": rel, "sha256": hashlib.sha256(body).hexdigest()}


def import_agentdojo(
    project: Project,
    suite_name: str,
    dataset: str,
    options: AgentDojoOptions | None = None,
    message: str | None = None,
) -> AgentDojoImportReport:
    """Import an installed AgentDojo suite as the slice ``suite_name`` of ``dataset``.

    The default environment goes to ``states/<dataset>/<suite>.json`` and the tools to
    ``catalogues/<dataset>/<suite>.tools.json`` (pinned by sha256 in each case).

    Raises:
        UsageError: A bad dataset name, suite, version or attack.
        InputError: A case of the dataset in another slice holds one of the new ids.
    """
    options = options or AgentDojoOptions()
    check_name(dataset, "dataset")
    suite = load_suite(suite_name, options.version)
    made = cases_from_suite(suite, options)
    state_rel = f"states/{dataset}/{suite.name}.json"
    tools_rel = f"catalogues/{dataset}/{suite.name}.tools.json"
    with dataset_lock(project, dataset):
        existing = (
            list(load_dataset(project, dataset).cases)
            if (project.dataset_dir(dataset) / CASES_FILE).exists()
            else []
        )
        kept = [c for c in existing if c.slice != suite.name]
        clash = sorted({c.id for c in kept} & {c.id for c in made.cases})
        if clash:
            raise InputError(
                f"datasets/{dataset}/{CASES_FILE}", None, "id", "is in another slice", clash[0]
            )
        state = _write(project, state_rel, _json(made.base_state))
        tools = _write(project, tools_rel, _json(made.tools))
        cases = [_pinned(c, state, tools) for c in made.cases]
        version = release_cases(
            project,
            dataset,
            [*kept, *cases],
            message or f"import agentdojo {suite.name} {options.version}: {len(cases)} case(s)",
        )
    return AgentDojoImportReport(
        dataset,
        suite.name,
        options.version,
        made.user_tasks,
        made.injection_tasks,
        len(made.cases) - made.user_tasks,
        state_rel,
        tools_rel,
        _served_by(suite.name, options.version),
        version,
    )


def _served_by(suite: str, version: str) -> str:
    brought = agentdojo_environment({"suite": suite, "version": version})
    assert brought is not None  # the suite was just loaded: it is one of AgentDojo's
    return brought.name


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True) + "\n").encode()


def _pinned(case: Case, state: dict[str, str], tools: dict[str, str]) -> Case:
    data = case.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["situation"]["state_ref"] = state
    data["situation"]["tools_file"] = tools["path"]
    data["situation"]["tools_sha256"] = tools["sha256"]
    return Case.model_validate(data)
