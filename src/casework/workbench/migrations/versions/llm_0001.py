"""LLM layer: the response cache table.

Revision ID: llm_0001
Revises: 0001_base
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "llm_0001"
down_revision = "0001_base"
branch_labels = ("llm",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "llm_response",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("prompt_hash", sa.String(64), nullable=False),
        sa.Column("params", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=True),
        sa.Column("completion_tokens", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_llm_response"),
    )
    op.create_index("ix_llm_response_model", "llm_response", ["model"])


def downgrade() -> None:
    op.drop_index("ix_llm_response_model", table_name="llm_response")
    op.drop_table("llm_response")
