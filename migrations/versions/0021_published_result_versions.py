"""published results keep every version of a resubmitted run

* `published_result.version`: the submission's version as the results table gives it (LongEval
  2025 publishes each run's resubmissions under a `version` timestamp); "" when the table has
  none. The unique key becomes (snapshot, system, measure, version), so a resubmitted run keeps
  its earlier versions; readers take the latest (issue 43, Build 2).

Existing figures get the version "". The downgrade keeps each figure's latest version (by the
text's order, which is the timestamps' order) and drops the others.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05 13:20:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = '0021'
down_revision: str | None = '0020'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('published_result', schema=None) as batch_op:
        batch_op.add_column(sa.Column('version', sqlmodel.sql.sqltypes.AutoString(length=100),
                                      nullable=False, server_default=''))
        batch_op.drop_constraint('uq_published_result_snapshot_id_system_id_measure',
                                 type_='unique')
        batch_op.create_unique_constraint(
            'uq_published_result_snapshot_id_system_id_measure_version',
            ['snapshot_id', 'system_id', 'measure', 'version'])


def downgrade() -> None:
    op.execute(
        "DELETE FROM published_result WHERE version <> (SELECT MAX(q.version) FROM "
        "published_result q WHERE q.snapshot_id = published_result.snapshot_id AND "
        "q.system_id = published_result.system_id AND q.measure = published_result.measure)")
    with op.batch_alter_table('published_result', schema=None) as batch_op:
        batch_op.drop_constraint('uq_published_result_snapshot_id_system_id_measure_version',
                                 type_='unique')
        batch_op.create_unique_constraint('uq_published_result_snapshot_id_system_id_measure',
                                          ['snapshot_id', 'system_id', 'measure'])
        batch_op.drop_column('version')
