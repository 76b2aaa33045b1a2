"""`casework init`: lay out a new eval project with a commented `casework.toml`."""

from __future__ import annotations

from pathlib import Path

from casework.atomic import atomic_write_text
from casework.errors import UsageError
from casework.project import CONFIG_NAME

__all__ = ["CONFIG_TEMPLATE", "init_project"]

CONFIG_TEMPLATE = """\
# casework project configuration. Unknown keys are errors: `casework dataset check` tells you where.
schema_version = 1           # version of this file's format
name = "{name}"

[agent]
# Declared tools: a JSON list of {{"name", "description", "parameters"}} objects...
tools = "agent/tools.json"
# ...or read them from the agent's own code (a list, or a callable returning one):
# tools_from = "my_agent.tools:TOOLS"
# Instruction and few-shot files: `casework leakage prompt` checks cases are not copied into them.
prompt_files = ["agent/prompt.md"]
# Model family of the agent; a synthetic generator of the same family writes easier paraphrases.
# family = "gpt-4o"
# Default agent for `casework run` (python:pkg.module:fn, http:URL or cmd:COMMAND).
# spec = "python:my_agent.entry:run"

[paths]
datasets = "datasets"        # one folder per dataset: cases.jsonl, labels.jsonl, versions.jsonl
guidelines = "guidelines"    # <slice>.md labelling guidelines with a version in front matter
renames = "renames.toml"     # tool and argument renames applied by `casework dataset migrate`
# frozen = "../private-evals"  # frozen cases kept in a separate, tighter repository

[workbench]
# Work in progress (labelling, reviews, runs, LLM cache). Default: SQLite in .casework/.
# CASEWORK_DB_URL overrides this, e.g. postgresql+psycopg://user@host/casework
# url = "sqlite:///.casework/workbench.db"

[thresholds]
kappa_gate = 0.6          # below: the slice's guideline is ambiguous and may not gate a release
kappa_dependable = 0.8    # at or above: labels are dependable
synthetic_cap = 0.3       # largest share of synthetic cases per slice
leakage_jaccard = 0.8     # cross-split pairs above this are flagged for review
prompt_containment = 0.5  # a case more than half inside the prompt tests memory
# mature_slices = ["refunds"]        # slices whose unsatisfiable share `casework dataset check` holds to
# unsatisfiable_band = [0.2, 0.25]   # the band, inclusive (refusals, questions, escalations)

[gate]
min_pass_rate = 0.8       # the floor: the gate fails below this pass@1 (and when no floor is set)
max_regression = 0.05     # largest drop in pass@1 against the baseline run
# gating_slices = ["refunds"]   # slices that gate releases (default: every slice)

[labelling]
second_label_share = 0.2  # share of rows that keep a second labeller after calibration

[privacy]
retention_days = 365      # mined rows leave the dataset after this many days
# key_file = "~/.config/casework/pseudonym.key"   # outside the repository; or CASEWORK_PSEUDONYM_KEY
# [privacy.id_patterns]
# order = "ORD-\\\\d{{6}}"
"""


def init_project(folder: Path, name: str | None = None) -> list[Path]:
    """Create a project in ``folder``; returns the files written.

    Raises:
        UsageError: ``folder`` already holds a `casework.toml` (nothing is overwritten).
    """
    config = folder / CONFIG_NAME
    if config.exists():
        raise UsageError(f"{config}: already exists; casework init never overwrites a project.")
    files = {
        config: CONFIG_TEMPLATE.format(name=name or folder.resolve().name),
        folder / "agent" / "tools.json": "[]\n",
        folder / "agent" / "prompt.md": "# Agent instructions\n",
        folder / ".gitignore": ".casework/\n.*.tmp\n",
    }
    written = []
    for path, text in files.items():
        if path.exists():
            continue
        atomic_write_text(path, text)
        written.append(path)
    for sub in ("datasets", "guidelines"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return written
