"""reported results: the venue of a publication, and one figure per (model, role, metric)

* `reported_result.venue`: where the publication appeared (SIGIR, ECIR, arXiv, …), read by
  `tcdb literature import`.
* a unique key (collection, publication, model, role, metric): a publication reports each
  model's best or baseline figure of a metric once, so importing the same file twice adds
  nothing, even from two processes at once.

Nothing wrote the table before this revision, so no existing row can break the key. The
downgrade drops both.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24 02:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('reported_result', schema=None) as batch_op:
        batch_op.add_column(sa.Column('venue', sqlmodel.sql.sqltypes.AutoString(length=200),
                                      nullable=True))
        batch_op.create_unique_constraint(
            batch_op.f('uq_reported_result_collection_id_publication_model_role_metric'),
            ['collection_id', 'publication', 'model', 'role', 'metric'])


def downgrade() -> None:
    with op.batch_alter_table('reported_result', schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f('uq_reported_result_collection_id_publication_model_role_metric'),
            type_='unique')
        batch_op.drop_column('venue')
