"""qrels sets keep the checksum of their judgments

* `qrels_set.judgments_checksum`: the sha256 of the set's judgments as a report's lineage
  states it (`tcdb.operations.lineage`: sorted `topic<TAB>doc<TAB>grade` lines). Written when a
  set is created (and when a pooled set grows), so lineage reads one value instead of hashing
  every judgment for every report. `qrels_set.checksum` stays the sha256 of the file a set was
  imported from (an import of the same file is unchanged).

Existing sets start NULL: the first report that names one computes it and stores it. The
downgrade drops the column.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26 11:30:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0019'
down_revision: str | None = '0018'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('qrels_set', schema=None) as batch_op:
        batch_op.add_column(sa.Column('judgments_checksum', sa.String(length=128),
                                      nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('qrels_set', schema=None) as batch_op:
        batch_op.drop_column('judgments_checksum')
