"""Labelling: the seconds a raw label's case was on screen (nullable; sheets leave it empty).

Revision ID: labelseconds_0001
Revises: labelling_0001
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "labelseconds_0001"
down_revision = "labelling_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("labelling_labels") as batch:
        batch.add_column(sa.Column("seconds_on_screen", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("labelling_labels") as batch:
        batch.drop_column("seconds_on_screen")
