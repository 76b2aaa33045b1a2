"""Review: generic review items and guideline gap notes.

Revision ID: review_0001
Revises: 0001_base
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "review_0001"
down_revision = "0001_base"
branch_labels = ("review",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("dataset", sa.String(200), nullable=False),
        sa.Column("subject", sa.String(400), nullable=False),
        sa.Column("open_subject", sa.String(400), nullable=True),
        sa.Column("slice", sa.String(200), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("decision", sa.String(40), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=True),
        sa.Column("reviewer", sa.String(64), nullable=True),
        sa.Column("seconds_on_screen", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_review_items"),
        sa.UniqueConstraint("kind", "dataset", "open_subject", name="uq_review_items_open_subject"),
    )
    op.create_index("ix_review_items_kind_status", "review_items", ["kind", "status"])
    op.create_index("ix_review_items_dataset", "review_items", ["dataset"])
    op.create_table(
        "guideline_gaps",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("slice", sa.String(200), nullable=False),
        sa.Column("guideline_version", sa.String(200), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("author", sa.String(64), nullable=False),
        sa.Column("dataset", sa.String(200), nullable=True),
        sa.Column("case_id", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("addressed_version", sa.String(200), nullable=True),
        sa.Column("addressed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_guideline_gaps"),
    )
    op.create_index("ix_guideline_gaps_slice", "guideline_gaps", ["slice"])


def downgrade() -> None:
    op.drop_index("ix_guideline_gaps_slice", table_name="guideline_gaps")
    op.drop_table("guideline_gaps")
    op.drop_index("ix_review_items_dataset", table_name="review_items")
    op.drop_index("ix_review_items_kind_status", table_name="review_items")
    op.drop_table("review_items")
