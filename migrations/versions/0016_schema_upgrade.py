"""schema_upgrade: which tcdb version brought the schema to each revision

A tcdb that meets a database at a revision it does not know (a newer tcdb upgraded it) reads
this table to say which version wrote it, instead of Alembic's "Can't locate revision".
`tcdb.storage.migrate` adds a row for every revision an upgrade or downgrade reaches; this
migration records the revision it creates the table at. The downgrade drops the table.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26 10:30:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'schema_upgrade',
        sa.Column('revision', sa.String(length=32), nullable=False),
        sa.Column('tcdb_version', sa.String(length=64), nullable=False),
        sa.Column('upgraded_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('revision', name=op.f('pk_schema_upgrade')),
    )


def downgrade() -> None:
    op.drop_table('schema_upgrade')
