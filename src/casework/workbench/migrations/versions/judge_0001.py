"""Judge certification: sampled verdicts, people's verdicts on them, certifications.

Revision ID: judge_0001
Revises: 0001_base
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "judge_0001"
down_revision = "0001_base"
branch_labels = ("judge",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "judge_review_items",
        sa.Column("key", sa.String(400), nullable=False),
        sa.Column("sheet_id", sa.String(40), nullable=False),
        sa.Column("run_id", sa.String(80), nullable=False),
        sa.Column("case_id", sa.String(200), nullable=False),
        sa.Column("trial", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("fact_index", sa.Integer(), nullable=True),
        sa.Column("slice", sa.String(200), nullable=False),
        sa.Column("judge_model", sa.String(200), nullable=False),
        sa.Column("prompt_version", sa.String(40), nullable=True),
        sa.Column("rubric_digest", sa.String(40), nullable=False),
        sa.Column("judge_pass", sa.Boolean(), nullable=False),
        sa.Column("accepted", sa.JSON(), nullable=False),
        sa.Column("reviewers", sa.JSON(), nullable=False),
        sa.Column("sampled_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_judge_review_items"),
        sa.UniqueConstraint("sheet_id", name="uq_judge_review_items_sheet_id"),
    )
    op.create_index("ix_judge_review_items_run_id", "judge_review_items", ["run_id"])
    op.create_index("ix_judge_review_items_slice", "judge_review_items", ["slice"])
    op.create_table(
        "judge_review_verdicts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("item_key", sa.String(400), nullable=False),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("answer", sa.String(20), nullable=False),
        sa.Column("human_pass", sa.Boolean(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_judge_review_verdicts"),
        sa.UniqueConstraint("item_key", "reviewer", name="uq_judge_review_verdicts_item_key"),
    )
    op.create_index("ix_judge_review_verdicts_item_key", "judge_review_verdicts", ["item_key"])
    op.create_table(
        "judge_certifications",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("slice", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("judge_model", sa.String(200), nullable=False),
        sa.Column("prompt_version", sa.String(40), nullable=False),
        sa.Column("rubric_digest", sa.String(40), nullable=False),
        sa.Column("tp", sa.Integer(), nullable=False),
        sa.Column("fn", sa.Integer(), nullable=False),
        sa.Column("tn", sa.Integer(), nullable=False),
        sa.Column("fp", sa.Integer(), nullable=False),
        sa.Column("admissible", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("report", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_judge_certifications"),
    )
    op.create_index("ix_judge_certifications_slice", "judge_certifications", ["slice"])
    op.create_index("ix_judge_certifications_judge_model", "judge_certifications", ["judge_model"])


def downgrade() -> None:
    op.drop_index("ix_judge_certifications_judge_model", table_name="judge_certifications")
    op.drop_index("ix_judge_certifications_slice", table_name="judge_certifications")
    op.drop_table("judge_certifications")
    op.drop_index("ix_judge_review_verdicts_item_key", table_name="judge_review_verdicts")
    op.drop_table("judge_review_verdicts")
    op.drop_index("ix_judge_review_items_slice", table_name="judge_review_items")
    op.drop_index("ix_judge_review_items_run_id", table_name="judge_review_items")
    op.drop_table("judge_review_items")
