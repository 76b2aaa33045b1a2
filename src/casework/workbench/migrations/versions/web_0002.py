"""Web app: served-at tokens spent by a submit (each counts a form's time on screen once).

Revision ID: web_0002
Revises: web_0001
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "web_0002"
down_revision = "web_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_served_uses",
        sa.Column("token_id", sa.String(64), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("token_id", name="pk_web_served_uses"),
    )


def downgrade() -> None:
    op.drop_table("web_served_uses")
