"""Leakage stage: near-duplicate flags and their review decisions.

Revision ID: leakage_0001
Revises: 0001_base
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "leakage_0001"
down_revision = "0001_base"
branch_labels = ("leakage",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "leakage_flag",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("dataset", sa.String(200), nullable=False),
        sa.Column("left_id", sa.String(200), nullable=False),
        sa.Column("right_id", sa.String(200), nullable=False),
        sa.Column("left_split", sa.String(16), nullable=False),
        sa.Column("right_split", sa.String(16), nullable=False),
        sa.Column("left_hash", sa.String(64), nullable=False),
        sa.Column("right_hash", sa.String(64), nullable=False),
        sa.Column("jaccard", sa.Float(), nullable=False),
        sa.Column("shared_count", sa.Integer(), nullable=False),
        sa.Column("shared", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("decision", sa.String(16), nullable=True),
        sa.Column("move_id", sa.String(200), nullable=True),
        sa.Column("reviewer", sa.String(200), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resolved_version", sa.Integer(), nullable=True),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_leakage_flag"),
        sa.UniqueConstraint("dataset", "left_id", "right_id", name="uq_leakage_flag_pair"),
    )
    op.create_index("ix_leakage_flag_dataset", "leakage_flag", ["dataset"])
    op.create_index("ix_leakage_flag_status", "leakage_flag", ["status"])


def downgrade() -> None:
    op.drop_index("ix_leakage_flag_status", table_name="leakage_flag")
    op.drop_index("ix_leakage_flag_dataset", table_name="leakage_flag")
    op.drop_table("leakage_flag")
