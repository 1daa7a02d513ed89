"""real collections: designated original qrels, judgment iterations and unresolved judgments,
ambiguous topics, residual scores

* `snapshot.original_qrels`: the name of the snapshot's one designated original qrels set
  (until now every set of kind `original` was counted, twice over for TREC-COVID's rounds);
  existing snapshots designate their earliest set of kind `original`.
* `judgment.iteration`: the qrels file's second column, kept (TREC-COVID: the judging round).
* `judgment_unresolved`: judgments of documents no snapshot of the collection holds.
* `snapshot_topic.ambiguous`: a query text repeated within a snapshot (topic identity by text).
* `score` and `evaluation` keyed by `residual_of_id` too (0: the run as submitted).
* `system` identified by group and name (two groups' `run1` are two systems); existing
  systems are of no group ("").

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 20:30:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('snapshot', schema=None) as batch_op:
        batch_op.add_column(sa.Column('original_qrels',
                                      sqlmodel.sql.sqltypes.AutoString(length=200),
                                      nullable=True))
    op.execute(
        "UPDATE snapshot SET original_qrels = (SELECT q.name FROM qrels_set q "
        "WHERE q.snapshot_id = snapshot.id AND q.kind = 'original' ORDER BY q.id LIMIT 1)")
    op.execute(
        "UPDATE snapshot SET n_judgments = COALESCE((SELECT q.n_judgments FROM qrels_set q "
        "WHERE q.snapshot_id = snapshot.id AND q.name = snapshot.original_qrels), 0)")
    with op.batch_alter_table('snapshot_topic', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ambiguous', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    with op.batch_alter_table('judgment', schema=None) as batch_op:
        batch_op.add_column(sa.Column('iteration', sqlmodel.sql.sqltypes.AutoString(length=32),
                                      nullable=True))
    op.create_table(
        'judgment_unresolved',
        sa.Column('qrels_set_id', sa.Integer(), nullable=False),
        sa.Column('topic_id', sa.Integer(), nullable=False),
        sa.Column('external_doc_id', sqlmodel.sql.sqltypes.AutoString(length=500),
                  nullable=False),
        sa.Column('grade', sa.SmallInteger(), nullable=False),
        sa.Column('iteration', sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.ForeignKeyConstraint(['qrels_set_id'], ['qrels_set.id'],
                                name=op.f('fk_judgment_unresolved_qrels_set_id_qrels_set'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['topic_id'], ['topic.id'],
                                name=op.f('fk_judgment_unresolved_topic_id_topic')),
        sa.PrimaryKeyConstraint('qrels_set_id', 'topic_id', 'external_doc_id',
                                name=op.f('pk_judgment_unresolved')),
    )
    with op.batch_alter_table('system', schema=None) as batch_op:
        batch_op.add_column(sa.Column('group_name', sqlmodel.sql.sqltypes.AutoString(length=200),
                                      nullable=False, server_default=''))
        batch_op.drop_constraint('uq_system_collection_id_name', type_='unique')
        batch_op.create_unique_constraint('uq_system_collection_id_group_name_name',
                                          ['collection_id', 'group_name', 'name'])
    for table, key in (('score', ['run_id', 'qrels_set_id', 'residual_of_id', 'measure_id',
                                  'topic_id']),
                       ('evaluation', ['run_id', 'qrels_set_id', 'residual_of_id',
                                       'measure_id'])):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('residual_of_id', sa.Integer(), nullable=False,
                                          server_default='0'))
            batch_op.drop_constraint(f'pk_{table}', type_='primary')
            batch_op.create_primary_key(f'pk_{table}', key)


def downgrade() -> None:
    for table, key in (('score', ['run_id', 'qrels_set_id', 'measure_id', 'topic_id']),
                       ('evaluation', ['run_id', 'qrels_set_id', 'measure_id'])):
        op.execute(f"DELETE FROM {table} WHERE residual_of_id <> 0")
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_constraint(f'pk_{table}', type_='primary')
            batch_op.create_primary_key(f'pk_{table}', key)
            batch_op.drop_column('residual_of_id')
    with op.batch_alter_table('system', schema=None) as batch_op:
        batch_op.drop_constraint('uq_system_collection_id_group_name_name', type_='unique')
        batch_op.create_unique_constraint('uq_system_collection_id_name',
                                          ['collection_id', 'name'])
        batch_op.drop_column('group_name')
    op.drop_table('judgment_unresolved')
    with op.batch_alter_table('judgment', schema=None) as batch_op:
        batch_op.drop_column('iteration')
    with op.batch_alter_table('snapshot_topic', schema=None) as batch_op:
        batch_op.drop_column('ambiguous')
    with op.batch_alter_table('snapshot', schema=None) as batch_op:
        batch_op.drop_column('original_qrels')
