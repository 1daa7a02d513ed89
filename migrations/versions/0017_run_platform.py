"""runs: their platform, read off their ir_metadata

* `run.platform`: the retrieval toolkit(s) (else the libraries) a run's ir_metadata names
  (`platform` → `software`), kept as a column so that reports can group runs by it. The run's
  whole ir_metadata (its YAML text and the parsed mapping) lives in `run.metadata`, which
  existed already; its description and category go to `run.description` and `run.category`.

Existing runs had no ir_metadata: the column starts NULL. The downgrade drops it.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 11:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0017'
down_revision: str | None = '0016'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('platform', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_column('platform')
