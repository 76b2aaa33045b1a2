"""Labelling: the seconds a case was on screen when it was labelled (nullable; sheets leave it empty).

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
    op.add_column("labelling_labels", sa.Column("seconds_on_screen", sa.Float(), nullable=True))


def downgrade() -> None:
    op.drop_column("labelling_labels", "seconds_on_screen")
