"""document without its foreign key to collection

Ingest writes every new document in bulk, under the collection it resolved in the same
transaction; the per-row trigger check of this key cost ~0.7 s per 100,000 documents in
isolation and ~10 % of a first LongEval snapshot (bench/ingest.py). No code deletes a
collection, so its ON DELETE CASCADE served nothing. As for snapshot_document and run_entry.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 09:05:00
"""
from collections.abc import Sequence

from alembic import op

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('document', schema=None) as batch_op:
        batch_op.drop_constraint('fk_document_collection_id_collection', type_='foreignkey')


def downgrade() -> None:
    with op.batch_alter_table('document', schema=None) as batch_op:
        batch_op.create_foreign_key('fk_document_collection_id_collection', 'collection',
                                    ['collection_id'], ['id'], ondelete='CASCADE')
