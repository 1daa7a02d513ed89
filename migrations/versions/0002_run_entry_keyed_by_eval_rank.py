"""run_entry keyed by (run, topic, eval_rank)

One index instead of two: the primary key (run_id, topic_id, eval_rank) replaces both the key on
(run_id, topic_id, document_id) and the secondary index on eval_rank. Maintaining the second
index halved COPY's speed; a document twice per topic is refused by the importer instead.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 05:50:00
"""
from collections.abc import Sequence

from alembic import op

revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('run_entry', schema=None) as batch_op:
        batch_op.drop_index('ix_run_entry_run_id_topic_id_eval_rank')
        batch_op.drop_constraint('pk_run_entry', type_='primary')
        batch_op.create_primary_key('pk_run_entry', ['run_id', 'topic_id', 'eval_rank'])


def downgrade() -> None:
    with op.batch_alter_table('run_entry', schema=None) as batch_op:
        batch_op.drop_constraint('pk_run_entry', type_='primary')
        batch_op.create_primary_key('pk_run_entry', ['run_id', 'topic_id', 'document_id'])
        batch_op.create_index('ix_run_entry_run_id_topic_id_eval_rank',
                              ['run_id', 'topic_id', 'eval_rank'], unique=False)
