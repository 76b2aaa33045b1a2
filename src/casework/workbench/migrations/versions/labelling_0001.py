"""Labelling: assignments and raw labels (one per case, labeller and guideline version).

Revision ID: labelling_0001
Revises: 0001_base
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "labelling_0001"
down_revision = "0001_base"
branch_labels = ("labelling",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "labelling_assignments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("dataset", sa.String(200), nullable=False),
        sa.Column("case_id", sa.String(200), nullable=False),
        sa.Column("slice", sa.String(200), nullable=False),
        sa.Column("labeller", sa.String(64), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("overlap_reason", sa.String(16), nullable=True),
        sa.Column("guideline_version", sa.String(200), nullable=False),
        sa.Column("assigned_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_labelling_assignments"),
        sa.UniqueConstraint(
            "dataset",
            "case_id",
            "labeller",
            "guideline_version",
            name="uq_labelling_assignments_case_labeller",
        ),
    )
    op.create_index(
        "ix_labelling_assignments_dataset_labeller",
        "labelling_assignments",
        ["dataset", "labeller"],
    )
    op.create_table(
        "labelling_labels",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("dataset", sa.String(200), nullable=False),
        sa.Column("case_id", sa.String(200), nullable=False),
        sa.Column("slice", sa.String(200), nullable=False),
        sa.Column("labeller", sa.String(64), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("overlap_reason", sa.String(16), nullable=True),
        sa.Column("guideline_version", sa.String(200), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("required", sa.JSON(), nullable=False),
        sa.Column("forbidden", sa.JSON(), nullable=False),
        sa.Column("answer_facts", sa.JSON(), nullable=False),
        sa.Column("assigned_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("labelled_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(500), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_labelling_labels"),
        sa.UniqueConstraint(
            "dataset",
            "case_id",
            "labeller",
            "guideline_version",
            name="uq_labelling_labels_case_labeller",
        ),
    )
    op.create_index("ix_labelling_labels_dataset_case", "labelling_labels", ["dataset", "case_id"])


def downgrade() -> None:
    op.drop_index("ix_labelling_labels_dataset_case", table_name="labelling_labels")
    op.drop_table("labelling_labels")
    op.drop_index("ix_labelling_assignments_dataset_labeller", table_name="labelling_assignments")
    op.drop_table("labelling_assignments")
