"""What a command printed with ``--format json``, checked against its registered output model.

The schema is the one `casework schema output KIND` prints (jsonschema, not pydantic: the schema
is the contract users read).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from casework.cli._output import output_model


def printed(kind: str, stdout: str) -> Any:
    """The JSON a command printed, after validating it against output KIND's schema."""
    data = json.loads(stdout)
    jsonschema.validate(data, output_model(kind).model_json_schema(by_alias=True))
    return data
