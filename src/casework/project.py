"""The project: ``casework.toml`` (validated; unknown keys are errors) and where things live.

Entry points: :func:`find_project` walks up from a folder to the nearest ``casework.toml``;
:func:`load_project` reads one. :class:`Project` answers path questions (datasets, tools, prompts).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from casework._docs import document_fields
from casework.decoding import decode_utf8, load_toml
from casework.errors import ConfigError, Hint, InputErrors, Problem
from casework.names import check_name, inside

__all__ = [
    "CONFIG_NAME",
    "NEVER_PASSED",
    "AgentConfig",
    "Config",
    "GateConfig",
    "LabellingConfig",
    "LeakageConfig",
    "ModelConfig",
    "ModelsConfig",
    "PathsConfig",
    "PrivacyConfig",
    "Project",
    "RunConfig",
    "SynthConfig",
    "ThresholdsConfig",
    "WorkbenchConfig",
    "find_project",
    "load_project",
]

CONFIG_NAME = "casework.toml"

#: Environment variables never handed to an agent, even when `[agent] pass_env` names them: the
#: pseudonym key and the workbench URL (which may carry a database password).
NEVER_PASSED = frozenset({"CASEWORK_PSEUDONYM_KEY", "CASEWORK_DB_URL"})


class _Section(BaseModel):
    # Descriptions from `document_fields` at the end of the module (faster than pydantic's own).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def _plain_path(v: str | None) -> str | None:
    """A configured path holds no control character (a NUL byte would reach the OS as a crash)."""
    if v is not None and any(ord(ch) < 32 or ord(ch) == 127 for ch in v):
        raise ValueError("a path must not contain control characters")
    return v


def _plain_paths(v: list[str]) -> list[str]:
    for path in v:
        _plain_path(path)
    return v


class AgentConfig(_Section):
    """`[agent]`: what the agent under evaluation declares and reads."""

    tools: str | None = "agent/tools.json"
    """JSON file listing the declared tools (name, description, JSON-schema parameters)."""
    tools_from: str | None = None
    """`pkg.module:attr` naming the tool declarations in the agent's own code, `cmd:COMMAND` printing
    them as JSON, or a loopback `http://127.0.0.1:PORT/…` URL serving them (overrides `tools`)."""
    tools_from_timeout: float = Field(default=30.0, gt=0, le=600)
    """Seconds a `cmd:` or `http://` `tools_from` may take before it is an error."""
    prompt_files: list[str] = Field(default_factory=list)
    """Instruction and few-shot files: the targets of the prompt containment check."""
    family: str | None = None
    """Model family of the agent (`gpt-4o`, `claude`, `llama`), to warn when a generator matches."""
    spec: str | None = None
    """Default agent adapter spec for `casework run` (`python:pkg.mod:fn`, `http:URL`, `cmd:...`)."""
    pass_env: list[str] = Field(default_factory=list)
    """Environment variables a `cmd:` agent inherits besides the allow-list (`PATH`, `HOME`,
    `LANG`, `LC_*`, `TMPDIR`…), e.g. `["OPENAI_API_KEY"]`; never `CASEWORK_PSEUDONYM_KEY`."""

    _tools_path = field_validator("tools")(_plain_path)
    _prompt_paths = field_validator("prompt_files")(_plain_paths)

    @field_validator("pass_env")
    @classmethod
    def _no_secrets(cls, names: list[str]) -> list[str]:
        refused = sorted(set(names) & NEVER_PASSED)
        if refused:
            raise ValueError(
                f"{', '.join(refused)} is never passed to an agent (it would hand the agent "
                "what protects the customers' data)"
            )
        return names


class PathsConfig(_Section):
    """`[paths]`: folders, relative to the project root."""

    datasets: str = "datasets"
    """Folder holding one sub-folder per dataset."""
    guidelines: str = "guidelines"
    """Folder of per-slice labelling guidelines (`<slice>.md`)."""
    renames: str = "renames.toml"
    """Tool and argument rename map applied by `casework dataset migrate`."""
    frozen: str | None = None
    """Separate folder (e.g. another repository) holding frozen cases, if any."""
    shapes: str = "shapes"
    """Folder of named failure shapes and their history."""
    runs: str = "runs"
    """Folder run logs are written to."""

    _paths = field_validator("datasets", "guidelines", "renames", "frozen", "shapes", "runs")(
        _plain_path
    )


class WorkbenchConfig(_Section):
    """`[workbench]`: the database holding work in progress."""

    url: str | None = None
    """SQLAlchemy URL; default `sqlite:///<project>/.casework/workbench.db`. `CASEWORK_DB_URL` wins."""


class ThresholdsConfig(_Section):
    """`[thresholds]`: numbers that decide bands and gates."""

    kappa_gate: float = Field(default=0.6, ge=-1, le=1)
    """Below this kappa a slice's guideline is ambiguous and the slice may not gate a release."""
    kappa_dependable: float = Field(default=0.8, ge=-1, le=1)
    """At or above this kappa labels are dependable."""
    kappa_min_rows: int = Field(default=10, ge=1)
    """Fewest double-labelled rows before a slice's kappa gets a band (else `insufficient_rows`)."""
    kappa_min_positives: int = Field(default=5, ge=0)
    """Fewest rows with a tool marked before its agreement counts (else `insufficient_positives`)."""
    synthetic_cap: float = Field(default=0.3, ge=0, le=1)
    """Largest share of synthetic cases allowed in a slice."""
    mature_slices: list[str] = Field(default_factory=list)
    """Slices marked mature: `casework dataset check` fails when their unsatisfiable share leaves
    `unsatisfiable_band` (issue 15: authored cases keep refusals and questions in proportion)."""
    unsatisfiable_band: tuple[float, float] = (0.2, 0.25)
    """Smallest and largest share of unsatisfiable cases in a mature slice (inclusive)."""
    leakage_jaccard: float = Field(default=0.8, gt=0, le=1)
    """Jaccard similarity above which a cross-split pair is flagged for review."""
    prompt_containment: float = Field(default=0.5, gt=0, le=1)
    """Share of a case's shingles found in the prompt above which it has become a memory test."""
    judge_agreement: float = Field(default=0.8, ge=-1, le=1)
    """Kappa the judge must reach as a labeller (`casework judge labeller-check`); informative."""
    judge_tpr: float = Field(default=0.8, ge=0, le=1)
    """Lower confidence bound the judge's true-positive rate against people's verdicts must reach."""
    judge_tnr: float = Field(default=0.8, ge=0, le=1)
    """Lower confidence bound the judge's true-negative rate against people's verdicts must reach."""
    judge_confidence: float = Field(default=0.95, gt=0, lt=1)
    """Confidence level of the judge's certification intervals."""
    judge_interval: Literal["wilson", "clopper-pearson"] = "wilson"
    """Interval of the judge's rates: `wilson` (score interval) or `clopper-pearson` (exact)."""
    simulator_max_error: float = Field(default=0.2, ge=0, le=1)
    """Highest share of a case's trials in which the simulated user may err (mechanical checks or
    reviews blaming it); a case above it is quarantined from gating until its scenario changes."""
    judge_max_flip: float = Field(default=0.1, ge=0, le=1)
    """Largest share of items whose repeated verdicts disagree (`judge certify --samples N`) a
    judge may have on a slice and check kind and stay admissible."""


class LabellingConfig(_Section):
    """`[labelling]`: the assignment policy."""

    second_label_share: float = Field(default=0.2, ge=0, le=1)
    """Share of rows that keep a second labeller once a slice's kappa reached the gate."""
    salt: str = "casework"
    """Salt of the content-independent hash choosing audit rows (change it to draw a new sample)."""
    calibration_min_rows: int = Field(default=50, ge=1)
    """Double-labelled rows a new slice needs before its kappa can release it from full overlap."""


class PrivacyConfig(_Section):
    """`[privacy]`: scrubbing and retention for mined rows."""

    key_file: str | None = None
    """Pseudonym key file, outside the repository (`CASEWORK_PSEUDONYM_KEY` wins)."""
    retention_days: int = Field(default=365, ge=1)
    """Default days a mined row is retained before `casework dataset expire` removes it."""
    id_patterns: dict[str, str] = Field(default_factory=dict)
    """Extra identifier kinds to pseudonymise: kind -> regular expression (`order = "ORD-\\d{6}"`)."""
    known_fields: dict[str, str] = Field(default_factory=dict)
    """Extra fixture/metadata field names whose values are customer data: field -> kind
    (`loyalty_no = "account"`); added to the built-in list (`email`, `account_id`, `full_name`...)."""
    phone_regions: list[str] = Field(default_factory=lambda: ["US", "GB"])
    """Regions (ISO 3166 codes) tried, in order, for phone numbers written without `+`."""

    _key_path = field_validator("key_file")(_plain_path)


class ModelConfig(_Section):
    """One `[models.<role>]` table: an LLM or embedding endpoint."""

    provider: Literal["openai", "litellm", "scripted", "tfidf", "sentence-transformers"] = (
        "scripted"
    )
    """Which client talks to the model."""
    model: str = "scripted"
    """Model id as the provider names it."""
    family: str | None = None
    """Model family (`gpt-4o`, `llama`...), recorded on generated cases."""
    base_url: str | None = None
    """Endpoint of an OpenAI-compatible server (vLLM, Ollama, LM Studio, llama.cpp...)."""
    api_key_env: str | None = None
    """Environment variable holding the API key (never the key itself)."""
    script: str | None = None
    """Responses file of the scripted offline client."""
    temperature: float | None = None
    """Sampling temperature."""
    max_concurrency: int = Field(default=4, ge=1)
    """Concurrent requests at most."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Request timeout in seconds."""
    max_retries: int = Field(default=3, ge=0)
    """Retries (with exponential backoff) after a 429, a 5xx, a timeout or a dropped connection."""
    input_cost_per_mtok: float | None = Field(default=None, ge=0)
    """Price of a million prompt tokens (any currency), for the cost line; unset: tokens only."""
    output_cost_per_mtok: float | None = Field(default=None, ge=0)
    """Price of a million completion tokens, for the cost line."""
    dimensions: int | None = Field(default=None, ge=1)
    """Embedding size (embedder role): SVD components for `tfidf`, `dimensions` for `openai`."""
    private: bool = False
    """The endpoint keeps what it is sent in-house (a local server, your own deployment). Only a
    private judge reads frozen cases; with any other, their judged checks are left to people.
    The scripted offline client sends nothing anywhere and counts as private."""

    _script_path = field_validator("script")(_plain_path)

    @property
    def keeps_data_local(self) -> bool:
        """Whether frozen content may be sent to this model (``private``, or scripted)."""
        return self.private or self.provider == "scripted"


class ModelsConfig(_Section):
    """`[models]`: which model plays which role."""

    generator: ModelConfig = Field(default_factory=ModelConfig)
    """Writes synthetic variants and authored cases."""
    judge: ModelConfig = Field(default_factory=ModelConfig)
    """Grades rubric cases (admissible only once certified: `casework judge certify`)."""
    embedder: ModelConfig = Field(
        default_factory=lambda: ModelConfig(provider="tfidf", model="tfidf")
    )
    """Embeds situations for clustering and near-duplicate checks."""
    user: ModelConfig = Field(default_factory=ModelConfig)
    """Plays the simulated user of cases with a `user_scenario` (`casework run`)."""


class SynthConfig(_Section):
    """`[synth]`: synthetic variant generation."""

    per_case: int = Field(default=1, ge=1)
    """Variants per seed case and transform, by default."""
    seed: int = 0
    """Seed of the rule-based transforms."""


class LeakageConfig(_Section):
    """`[leakage]`: near-duplicate and containment scans."""

    shingle_k: int = Field(default=3, ge=1)
    """Words per shingle."""
    exact_below: int = Field(default=50_000, ge=1)
    """Rows below which the scan uses the exact join instead of MinHash-LSH."""
    num_perm: int = Field(default=256, ge=16)
    """MinHash permutations for the LSH engine."""
    memory_mb: int = Field(default=2048, ge=64)
    """Memory (MB) a near-duplicate scan keeps to: above it the LSH join streams band keys through
    `.casework/tmp/leakage/`, and the exact join hands over to LSH."""
    corpus_containment: float = Field(default=0.8, gt=0, le=1)
    """Share of a row's 13-grams, or of its IDF-weighted shingles, that marks a corpus document as holding it."""


class ShapesConfig(_Section):
    """`[shapes]`: how `casework shapes build` scales."""

    sample_size: int = Field(default=50_000, ge=100)
    """Failing conversations the embedder and the clustering are fitted on; above it the rest are assigned to the shapes found in streaming batches."""
    batch_size: int = Field(default=2_000, ge=1)
    """Conversations embedded and assigned at once above the sample (memory follows it)."""


class GateConfig(_Section):
    """`[gate]`: what a release needs from a run."""

    min_pass_rate: float | None = Field(default=None, ge=0, le=1)
    """Smallest acceptable pass@1 over the gating cases."""
    max_regression: float = Field(default=0.05, ge=0, le=1)
    """Largest acceptable drop in pass@1 against the baseline run."""
    gating_slices: list[str] = Field(default_factory=list)
    """Slices that gate releases (empty: all)."""
    inconclusive: Literal["fail", "pass"] = "fail"
    """What an inconclusive comparison or floor does to the gate: `fail` (fails closed) or `pass`."""
    floor_on: Literal["point", "lower_bound"] = "point"
    """Check `min_pass_rate` on pass@1 itself or on its interval's lower bound."""
    case_rule: Literal["mean", "k_of_n"] = "mean"
    """Per-case value: the share of trials passed (`mean`), or passes in `k` of `n` (`k_of_n`)."""
    k: int = Field(default=1, ge=1)
    """Passing trials a case needs under `case_rule = "k_of_n"`."""
    n: int = Field(default=1, ge=1)
    """Trials a case must have under `case_rule = "k_of_n"` (fewer: the case does not pass)."""

    @model_validator(mode="after")
    def _k_within_n(self) -> GateConfig:
        if self.k > self.n:
            raise ValueError(f"k: must not exceed n ({self.n}). Got {self.k}.")
        return self


class JudgeConfig(_Section):
    """`[judge]`: how judge-decided verdicts are corrected."""

    estimator: Literal["rogan-gladen", "ppi++"] = "ppi++"
    """Estimator of judge-corrected pass rates and differences: `ppi++` (default: people's
    verdicts on the run's own replies; its interval covers nearest nominal in casework's
    simulations, docs/judge.md) or `rogan-gladen` (the certification's TPR and TNR; wider, above
    nominal). PPI++ falls back to Rogan–Gladen, and says so, where the run has no reviewed
    replies."""


class RunConfig(_Section):
    """`[run]`: how `casework run` serves tools (tool environments, issue 16)."""

    environment: str | None = None
    """`pkg.module:Class` of the tool environment serving every slice's tools (default: none,
    the cases' static fixtures answer)."""
    environments: dict[str, str] = Field(default_factory=dict)
    """Tool environment per slice (`{bookings = "env.bookings:BookingsEnv"}`), over `environment`."""
    scoring: dict[str, Literal["casework", "tau2"]] = Field(default_factory=dict)
    """Scoring per dataset (`{airline = "casework"}`): `tau2` scores exactly as τ²-bench's default
    reward does, `casework` runs every check. Default: `tau2` for cases imported from τ²-bench,
    `casework` for the rest."""

    def environment_for(self, slice_name: str) -> str | None:
        """The environment spec serving ``slice_name``, or ``None`` for static fixtures."""
        return self.environments.get(slice_name, self.environment)


class Config(_Section):
    """The whole of `casework.toml`."""

    schema_version: Literal[1] = 1
    """Version of the `casework.toml` format (1; absent means 1)."""
    name: str = "casework-project"
    """Name of the eval project."""
    agent: AgentConfig = Field(default_factory=AgentConfig)
    """The agent under evaluation."""
    paths: PathsConfig = Field(default_factory=PathsConfig)
    """Where things live."""
    workbench: WorkbenchConfig = Field(default_factory=WorkbenchConfig)
    """The work-in-progress database."""
    thresholds: ThresholdsConfig = Field(default_factory=ThresholdsConfig)
    """Bands and gates."""
    labelling: LabellingConfig = Field(default_factory=LabellingConfig)
    """Assignment policy."""
    privacy: PrivacyConfig = Field(default_factory=PrivacyConfig)
    """Scrubbing and retention."""
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    """LLM and embedding endpoints."""
    synth: SynthConfig = Field(default_factory=SynthConfig)
    """Synthetic variants."""
    leakage: LeakageConfig = Field(default_factory=LeakageConfig)
    """Leakage scans."""
    shapes: ShapesConfig = Field(default_factory=ShapesConfig)
    """Failure shapes at scale."""
    gate: GateConfig = Field(default_factory=GateConfig)
    """Release gate."""
    run: RunConfig = Field(default_factory=RunConfig)
    """Tool environments for `casework run`."""
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    """Correcting judge-decided verdicts."""


@dataclass(frozen=True)
class Project:
    """A loaded project: its root folder and validated configuration."""

    root: Path
    config: Config

    @property
    def config_path(self) -> Path:
        """Path of `casework.toml`."""
        return self.root / CONFIG_NAME

    def config_error(
        self, field: str, message: str, got: Any = None, *, has_got: bool | None = None
    ) -> ConfigError:
        """A :class:`ConfigError` at the line of ``field`` (dotted key) in `casework.toml`."""
        try:
            text = self.config_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        line = _toml_line(text, tuple(field.split(".")))
        return ConfigError(CONFIG_NAME, line, field, message, got, has_got=has_got)

    def path(self, relative: str) -> Path:
        """A path from the configuration, resolved against the project root."""
        return (
            (self.root / relative).resolve() if not Path(relative).is_absolute() else Path(relative)
        )

    @property
    def datasets_dir(self) -> Path:
        """Folder of datasets."""
        return self.path(self.config.paths.datasets)

    def dataset_dir(self, name: str) -> Path:
        """Folder of one dataset (it may not exist yet).

        Raises:
            UsageError: ``name`` is not a valid name (e.g. ``../x``): no path may leave the
                datasets folder.
        """
        check_name(name, "dataset name")
        return inside(self.datasets_dir, self.datasets_dir / name, "dataset name")

    def dataset_names(self) -> list[str]:
        """Datasets present: sub-folders of the datasets folder holding a `cases.jsonl`."""
        if not self.datasets_dir.is_dir():
            return []
        return sorted(p.parent.name for p in self.datasets_dir.glob("*/cases.jsonl"))

    @property
    def state_dir(self) -> Path:
        """`.casework/`: local, git-ignored state (workbench database, caches)."""
        return self.root / ".casework"

    def workbench_url(self) -> str:
        """Workbench URL: `CASEWORK_DB_URL`, else the config, else SQLite under `.casework/`."""
        env = os.environ.get("CASEWORK_DB_URL")
        if env:
            return env
        if self.config.workbench.url:
            return self.config.workbench.url
        return f"sqlite:///{self.state_dir / 'workbench.db'}"

    def relative(self, path: Path) -> str:
        """A path as the user would name it: relative to the current folder when inside it."""
        try:
            return str(path.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            return str(path)


def find_project(start: Path | None = None) -> Path:
    """Return the folder holding the nearest `casework.toml`, from ``start`` upwards.

    Raises:
        ConfigError: No `casework.toml` in ``start`` or any parent; the message says where it looked.
    """
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder
    raise ConfigError(
        CONFIG_NAME,
        None,
        None,
        f"not found in {here} or any parent folder (or name the project folder)",
    ).suggest(Hint("init", why="to create one"))


def _toml_line(text: str, loc: tuple[str | int, ...]) -> int | None:
    """Best-effort line of a TOML key, for error messages (tomllib does not keep positions)."""
    if not loc:
        return None
    key = str(loc[-1])
    table = ".".join(str(p) for p in loc[:-1])
    current = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            current = line.strip("[]").strip()
            continue
        if current == table and (line.startswith(key + " ") or line.startswith(key + "=")):
            return number
        if not table and current == "" and line.startswith(key):
            return number
    return None


def load_project(root: Path | None = None) -> Project:
    """Load and validate the project at ``root`` (default: found from the current folder).

    Raises:
        ConfigError: The file is missing.
        InputError: The file is not UTF-8 or not valid TOML (located by line).
        InputErrors: Keys are unknown or values invalid (one problem per key).
    """
    folder = find_project(root)
    path = folder / CONFIG_NAME
    shown = str(path)
    raw = path.read_bytes()
    data = load_toml(raw, shown)
    text = decode_utf8(raw, shown)
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            field = ".".join(str(p) for p in loc)
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            problems.append(
                Problem(shown, _toml_line(text, loc), field, msg, err.get("input"), has_got=True)
            )
        InputErrors.raise_if_any(problems)
        raise  # pragma: no cover - raise_if_any always raises for a non-empty list
    InputErrors.raise_if_any(
        Problem(
            CONFIG_NAME,
            _toml_line(text, tuple(field.split("."))),
            field,
            message,
            got,
            has_got=True,
        )
        for field, message, got in _cross_field_problems(config)
    )
    return Project(root=folder, config=config)


def _cross_field_problems(config: Config) -> list[tuple[str, str, object]]:
    """Rules between keys, checked at load: (dotted key, problem, offending value)."""
    t = config.thresholds
    out: list[tuple[str, str, object]] = []
    if t.kappa_gate > t.kappa_dependable:
        out.append(
            (
                "thresholds.kappa_gate",
                f"must not exceed kappa_dependable ({t.kappa_dependable:g})",
                t.kappa_gate,
            )
        )
    low, high = t.unsatisfiable_band
    if not 0 <= low <= high <= 1:
        out.append(
            (
                "thresholds.unsatisfiable_band",
                "must be [low, high] with 0 <= low <= high <= 1",
                list(t.unsatisfiable_band),
            )
        )
    return out


document_fields(globals())
