"""Google ADK eval sets, both ways: reading ADK's file shapes, converting, and a project's import/export.

Entry points: :func:`import_adk` / :func:`export_adk` (project level: a new dataset version in, a
version out), :func:`read_adk_file` / :func:`parse_adk` (ADK's three file shapes, no casework
semantics) and the pure conversion :func:`cases_from_adk` / :func:`eval_set_from_cases`.
"""

from casework.interop.adk._convert import ImportOptions
from casework.interop.adk._project import export_adk, import_adk

__all__ = [
    "ImportOptions",
    "export_adk",
    "import_adk",
]
