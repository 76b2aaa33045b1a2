"""Web app: people and roles, one-time sign-in links, sessions, label views, skips.

Revision ID: web_0001
Revises: 0001_base
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "web_0001"
down_revision = "0001_base"
branch_labels = ("web",)
depends_on = None


def _key_columns() -> list[sa.Column[str]]:
    return [
        sa.Column("dataset", sa.String(200), nullable=False),
        sa.Column("case_id", sa.String(200), nullable=False),
        sa.Column("labeller", sa.String(64), nullable=False),
        sa.Column("guideline_version", sa.String(200), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "web_users",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("roles", sa.JSON(), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_web_users"),
        sa.UniqueConstraint("name", name="uq_web_users_name"),
    )
    op.create_table(
        "web_signins",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("secret_hash", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_web_signins"),
    )
    op.create_index("ix_web_signins_user_id", "web_signins", ["user_id"])
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("secret_hash", sa.String(200), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_web_sessions"),
    )
    op.create_index("ix_web_sessions_user_id", "web_sessions", ["user_id"])
    op.create_table(
        "web_label_views",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        *_key_columns(),
        sa.Column("fields_shown", sa.JSON(), nullable=False),
        sa.Column("server_seconds", sa.Float(), nullable=False),
        sa.Column("client_seconds", sa.Float(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("revisions", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_web_label_views"),
        sa.UniqueConstraint(
            "dataset", "case_id", "labeller", "guideline_version", name="uq_web_label_views_key"
        ),
    )
    op.create_table(
        "web_skips",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        *_key_columns(),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("skipped_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_web_skips"),
        sa.UniqueConstraint(
            "dataset", "case_id", "labeller", "guideline_version", name="uq_web_skips_key"
        ),
    )


def downgrade() -> None:
    op.drop_table("web_skips")
    op.drop_table("web_label_views")
    op.drop_index("ix_web_sessions_user_id", table_name="web_sessions")
    op.drop_table("web_sessions")
    op.drop_index("ix_web_signins_user_id", table_name="web_signins")
    op.drop_table("web_signins")
    op.drop_table("web_users")
