"""organiser workflows: run types, first-stage runs, pool names per snapshot

* `run.run_type` (automatic, manual, feedback) replaces `run.is_manual`: TREC tracks have
  feedback runs too (TREC-COVID's rounds 2–5).
* `run.first_stage`: the tag of the run a re-ranker re-ranked, as the organisers were told.
* `pool.name` is unique per snapshot, not across the database: each snapshot of a campaign
  gets its own `remainder50`.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 21:30:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUN_TYPE = sa.Enum('automatic', 'manual', 'feedback', name='run_type', native_enum=False,
                   create_constraint=True, length=16)


def upgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('run_type', RUN_TYPE, nullable=False,
                                      server_default='automatic'))
        batch_op.add_column(sa.Column('first_stage',
                                      sqlmodel.sql.sqltypes.AutoString(length=200),
                                      nullable=True))
    op.execute("UPDATE run SET run_type = 'manual' WHERE is_manual")
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_column('is_manual')
    with op.batch_alter_table('pool', schema=None) as batch_op:
        batch_op.drop_constraint('uq_pool_name', type_='unique')
        batch_op.create_unique_constraint('uq_pool_snapshot_id_name', ['snapshot_id', 'name'])


def downgrade() -> None:
    with op.batch_alter_table('pool', schema=None) as batch_op:
        batch_op.drop_constraint('uq_pool_snapshot_id_name', type_='unique')
        batch_op.create_unique_constraint('uq_pool_name', ['name'])
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('is_manual', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    op.execute("UPDATE run SET is_manual = (run_type = 'manual')")
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_run_run_type'), type_='check')
        batch_op.drop_column('first_stage')
        batch_op.drop_column('run_type')
