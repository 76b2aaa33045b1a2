"""Runner: runs, trials (verdicts and trajectories) and judge calibrations.

Revision ID: runs_0001
Revises: 0001_base
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "runs_0001"
down_revision = "0001_base"
branch_labels = ("runs",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(80), nullable=False),
        sa.Column("dataset", sa.String(200), nullable=False),
        sa.Column("dataset_hash", sa.String(64), nullable=False),
        sa.Column("agent_spec", sa.Text(), nullable=False),
        sa.Column("agent_version", sa.String(200), nullable=True),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("header", sa.JSON(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
    )
    op.create_index("ix_runs_dataset", "runs", ["dataset"])
    op.create_table(
        "trials",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(80), nullable=False),
        sa.Column("case_id", sa.String(200), nullable=False),
        sa.Column("trial", sa.Integer(), nullable=False),
        sa.Column("slice", sa.String(200), nullable=False),
        sa.Column("split", sa.String(20), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=True),
        sa.Column("admissible", sa.Boolean(), nullable=False),
        sa.Column("duration_s", sa.Float(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("record", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_trials_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_trials"),
        sa.UniqueConstraint("run_id", "case_id", "trial", name="uq_trials_run_case_trial"),
    )
    op.create_index("ix_trials_run_id", "trials", ["run_id"])
    op.create_table(
        "judge_calibrations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("dataset", sa.String(200), nullable=False),
        sa.Column("slice", sa.String(200), nullable=False),
        sa.Column("judge_model", sa.String(200), nullable=False),
        sa.Column("kappa", sa.Float(), nullable=True),
        sa.Column("accuracy", sa.Float(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=False),
        sa.Column("admissible", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("report", sa.JSON(), nullable=False),
        sa.Column("dataset_hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_judge_calibrations"),
    )
    op.create_index("ix_judge_calibrations_slice", "judge_calibrations", ["slice"])


def downgrade() -> None:
    op.drop_index("ix_judge_calibrations_slice", table_name="judge_calibrations")
    op.drop_table("judge_calibrations")
    op.drop_index("ix_trials_run_id", table_name="trials")
    op.drop_table("trials")
    op.drop_index("ix_runs_dataset", table_name="runs")
    op.drop_table("runs")
