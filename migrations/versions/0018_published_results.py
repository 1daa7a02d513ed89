"""published results: the aggregate figures of an organiser's results table

* `published_result`: (snapshot, system, measure) → value, one row per figure of a results
  table such as LongEval's (one line per team × run × snapshot, one column per ir_measures
  aggregate), with the file's name and sha256. The system is the collection's `system`
  (group and name). `tcdb results import` writes it; `results list`, `results over-time` and
  `report rankings --from results` read it.

A new table: nothing to move. The downgrade drops it.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26 10:30:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = '0018'
down_revision: str | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'published_result',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('collection_id', sa.Integer(), nullable=False),
        sa.Column('snapshot_id', sa.Integer(), nullable=False),
        sa.Column('system_id', sa.Integer(), nullable=False),
        sa.Column('measure', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column('value', sa.Float(), nullable=False),
        sa.Column('source', sa.Text(), nullable=False),
        sa.Column('checksum', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column('imported_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['collection_id'], ['collection.id'],
                                name=op.f('fk_published_result_collection_id_collection'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['snapshot_id'], ['snapshot.id'],
                                name=op.f('fk_published_result_snapshot_id_snapshot'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['system_id'], ['system.id'],
                                name=op.f('fk_published_result_system_id_system'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_published_result')),
        sa.UniqueConstraint('snapshot_id', 'system_id', 'measure',
                            name=op.f('uq_published_result_snapshot_id_system_id_measure')),
    )
    with op.batch_alter_table('published_result', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_published_result_collection_id'),
                              ['collection_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_published_result_system_id'), ['system_id'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('published_result', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_published_result_system_id'))
        batch_op.drop_index(batch_op.f('ix_published_result_collection_id'))
    op.drop_table('published_result')
