"""What every file format shares: the record base class, the schema version, the value sets.

Kept apart from the models (``_records``) so that commands which read only the release log
(``_version``) import no case model: `casework dataset versions` starts in under 0.3 s (issue 13).
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

#: Current version of every record format of this package.
SCHEMA_VERSION: Literal[1] = 1

Outcome = Literal["resolve", "clarify", "refuse", "escalate"]
"""What the agent should do: complete the task, ask, decline, or hand to a person."""
#: The outcome classes in the order of agreement tables; derived from :data:`Outcome`.
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)

Split = Literal["dev", "holdout", "smoke"]
#: The splits, derived from :data:`Split` (the CLI's choices).
SPLITS: tuple[Split, ...] = get_args(Split)
Source = Literal["mined", "hand", "synthetic"]
OracleClass = Literal["state_assertion", "rubric_judge", "human", "programmatic"]
UnsatisfiableKind = Literal[
    "permission_absent", "referent_absent", "contradictory", "outside_policy", "underdetermined"
]


class _Record(BaseModel):
    """Base of every file-format model: unknown fields are errors, docstrings document fields."""

    model_config = ConfigDict(
        extra="forbid",
        validate_default=False,
        populate_by_name=True,
        # Descriptions come from `document_fields` at the end of the module; validators are built
        # on first use, after them (and `casework dataset versions` starts in under 0.3 s: issue 13).
        defer_build=True,
    )
