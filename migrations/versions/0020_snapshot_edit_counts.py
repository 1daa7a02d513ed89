"""snapshots keep the counts of what their readers changed or set aside

* `snapshot.n_documents_edited`, `snapshot.n_topics_edited`, `snapshot.n_characters_removed`:
  the ingest's counts of texts a reader changed (NUL and the other control characters neither
  database stores in text removed, or made U+FFFD by the TREC SGML reader as ir_datasets does;
  a query's surrounding spaces trimmed). The summary says them once; the snapshot's record keeps
  them, so `snapshot list --json` and the lineage can say them later (issue 41, Build 3).

* `snapshot.n_rejected`: the lines its readers set aside under `--on-bad-lines warn|skip`
  (each in the ingest's rejects file with its reason; issue 43, Build 5).
* `run.n_rejected`: the same for a run file (`run import --on-bad-lines warn|skip`).

Existing snapshots start at 0: their ingests did not count. The downgrade drops the columns.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05 05:10:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0020'
down_revision: str | None = '0019'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('snapshot', schema=None) as batch_op:
        batch_op.add_column(sa.Column('n_documents_edited', sa.Integer(), nullable=False,
                                      server_default='0'))
        batch_op.add_column(sa.Column('n_topics_edited', sa.Integer(), nullable=False,
                                      server_default='0'))
        batch_op.add_column(sa.Column('n_characters_removed', sa.BigInteger(), nullable=False,
                                      server_default='0'))
        batch_op.add_column(sa.Column('n_rejected', sa.Integer(), nullable=False,
                                      server_default='0'))
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('n_rejected', sa.Integer(), nullable=False,
                                      server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_column('n_rejected')
    with op.batch_alter_table('snapshot', schema=None) as batch_op:
        batch_op.drop_column('n_rejected')
        batch_op.drop_column('n_characters_removed')
        batch_op.drop_column('n_topics_edited')
        batch_op.drop_column('n_documents_edited')
