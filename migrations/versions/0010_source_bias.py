"""source bias: a document's source label and twin belong to its membership in a snapshot

* `snapshot_document.source_label` (human, llm, …) replaces `content.source_label`: a label on
  the shared text version made an LLM rewrite identical to its original (a refused rewrite,
  which Cocktail reports) `human`. Existing labels move to every membership of their version.
* `snapshot_document.twin_of`: the external id, in the same snapshot, of the original an LLM
  document was rewritten from.

The downgrade puts one label back on each version (the smallest of its memberships' labels,
when they differ) and drops the twins.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 23:30:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('snapshot_document', schema=None) as batch_op:
        batch_op.add_column(sa.Column('source_label',
                                      sqlmodel.sql.sqltypes.AutoString(length=32),
                                      nullable=True))
        batch_op.add_column(sa.Column('twin_of', sa.Text(), nullable=True))
    op.execute(
        "UPDATE snapshot_document SET source_label = (SELECT c.source_label FROM content c "
        "WHERE c.id = snapshot_document.content_id) WHERE content_id IN "
        "(SELECT id FROM content WHERE source_label IS NOT NULL)")
    with op.batch_alter_table('content', schema=None) as batch_op:
        batch_op.drop_column('source_label')


def downgrade() -> None:
    with op.batch_alter_table('content', schema=None) as batch_op:
        batch_op.add_column(sa.Column('source_label',
                                      sqlmodel.sql.sqltypes.AutoString(length=32),
                                      nullable=True))
    op.execute(
        "UPDATE content SET source_label = (SELECT MIN(sd.source_label) FROM snapshot_document sd "
        "WHERE sd.content_id = content.id) WHERE id IN "
        "(SELECT content_id FROM snapshot_document WHERE source_label IS NOT NULL)")
    with op.batch_alter_table('snapshot_document', schema=None) as batch_op:
        batch_op.drop_column('twin_of')
        batch_op.drop_column('source_label')
