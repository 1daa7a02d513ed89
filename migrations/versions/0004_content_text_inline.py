"""content.text kept inline, compressed (PostgreSQL STORAGE MAIN)

A ~5 KB web page compresses to ~2-4 KB: under the default EXTENDED storage it still went out
of line into TOAST chunks with their own index. MAIN keeps the compressed text in the row
(out of line only when a row would not fit a page): ~12 % faster ingest (bench/ingest.py),
and one fewer lookup when a pool export reads the text. SQLite has no such setting.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 06:50:00
"""
from collections.abc import Sequence

from alembic import op

revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('ALTER TABLE content ALTER COLUMN text SET STORAGE MAIN')


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('ALTER TABLE content ALTER COLUMN text SET STORAGE EXTENDED')
