"""snapshot_document without foreign keys

Membership rows are written in bulk by the ingest, which resolves every id in the same
transaction; the per-row trigger checks of three foreign keys, and the two indexes on
document_id and content_id that only served them, cost a fifth of an ingest. Deleting a
snapshot deletes its rows explicitly (tcdb.storage.housekeeping), as for run_entry.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 06:10:00
"""
from collections.abc import Sequence

from alembic import op

revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FOREIGN_KEYS = [
    ('fk_snapshot_document_content_id_content', 'content', ['content_id'], None),
    ('fk_snapshot_document_document_id_document', 'document', ['document_id'], None),
    ('fk_snapshot_document_snapshot_id_snapshot', 'snapshot', ['snapshot_id'], 'CASCADE'),
]


def upgrade() -> None:
    with op.batch_alter_table('snapshot_document', schema=None) as batch_op:
        batch_op.drop_index('ix_snapshot_document_content_id')
        batch_op.drop_index('ix_snapshot_document_document_id')
        for name, _, _, _ in _FOREIGN_KEYS:
            batch_op.drop_constraint(name, type_='foreignkey')


def downgrade() -> None:
    with op.batch_alter_table('snapshot_document', schema=None) as batch_op:
        for name, table, columns, ondelete in _FOREIGN_KEYS:
            batch_op.create_foreign_key(name, table, columns, ['id'], ondelete=ondelete)
        batch_op.create_index('ix_snapshot_document_document_id', ['document_id'], unique=False)
        batch_op.create_index('ix_snapshot_document_content_id', ['content_id'], unique=False)
