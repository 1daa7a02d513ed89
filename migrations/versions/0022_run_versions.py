"""run versions: a resubmitted run keeps its earlier versions

* `run.version`: the version its entries are — the label its import gave (LongEval's
  resubmission timestamp) or the number tcdb counted ("1", "2", …).
* `run_version`: an earlier version of a run that a changed file replaced (`run import
  --replace`), with its file's checksum, source, counts and ir_metadata, and when it was
  imported and superseded; `run_version_entry` and `run_version_unresolved` hold its entries
  as they were in `run_entry` and `run_entry_unresolved` (issue 43, Build 1).

Existing runs become version "1"; nothing to move. The downgrade drops the earlier versions
(the runs keep their latest).

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-05 17:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = '0022'
down_revision: str | None = '0021'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('version', sqlmodel.sql.sqltypes.AutoString(length=100),
                                      nullable=False, server_default='1'))
    op.create_table(
        'run_version',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('version', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column('checksum', sqlmodel.sql.sqltypes.AutoString(length=128), nullable=True),
        sa.Column('source', sa.Text(), nullable=True),
        sa.Column('submitted', sa.Date(), nullable=True),
        sa.Column('metadata', sa.JSON(), nullable=True),
        sa.Column('n_entries', sa.Integer(), nullable=False),
        sa.Column('n_unresolved', sa.Integer(), nullable=False),
        sa.Column('n_rejected', sa.Integer(), nullable=False),
        sa.Column('imported_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('superseded_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['run_id'], ['run.id'], name=op.f('fk_run_version_run_id_run'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_run_version')),
        sa.UniqueConstraint('run_id', 'version', name=op.f('uq_run_version_run_id_version')),
    )
    with op.batch_alter_table('run_version', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_run_version_run_id'), ['run_id'], unique=False)
    op.create_table(
        'run_version_entry',
        sa.Column('version_id', sa.Integer(), nullable=False),
        sa.Column('topic_id', sa.Integer(), nullable=False),
        sa.Column('eval_rank', sa.Integer(), nullable=False),
        sa.Column('document_id', sa.Integer(), nullable=False),
        sa.Column('rank', sa.Integer(), nullable=False),
        sa.Column('score', sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint('version_id', 'topic_id', 'eval_rank',
                                name=op.f('pk_run_version_entry')),
    )
    op.create_table(
        'run_version_unresolved',
        sa.Column('version_id', sa.Integer(), nullable=False),
        sa.Column('topic_id', sa.Integer(), nullable=False),
        sa.Column('external_doc_id', sqlmodel.sql.sqltypes.AutoString(length=500),
                  nullable=False),
        sa.Column('rank', sa.Integer(), nullable=False),
        sa.Column('eval_rank', sa.Integer(), nullable=False),
        sa.Column('score', sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(['topic_id'], ['topic.id'],
                                name=op.f('fk_run_version_unresolved_topic_id_topic')),
        sa.ForeignKeyConstraint(['version_id'], ['run_version.id'],
                                name=op.f('fk_run_version_unresolved_version_id_run_version'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('version_id', 'topic_id', 'external_doc_id',
                                name=op.f('pk_run_version_unresolved')),
    )


def downgrade() -> None:
    op.drop_table('run_version_unresolved')
    op.drop_table('run_version_entry')
    with op.batch_alter_table('run_version', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_run_version_run_id'))
    op.drop_table('run_version')
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_column('version')
