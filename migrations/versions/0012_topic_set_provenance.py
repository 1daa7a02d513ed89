"""topic set provenance: the model a topic set was derived for, and how

* `topic_set.for_model`: the model the set was made for (an LLM's name for the topics it has
  likely not seen), NULL for sets that hold for every model (core topics, curated lists).
* `topic_set.method`: how the members were chosen — `contamination-quiz`, `core of A, B`,
  `file`, `list`, or what the user said with `--method`.

Existing sets keep NULL in both (their description still says how they were made). The
downgrade drops the columns.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24 01:45:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('topic_set', schema=None) as batch_op:
        batch_op.add_column(sa.Column('for_model',
                                      sqlmodel.sql.sqltypes.AutoString(length=200),
                                      nullable=True))
        batch_op.add_column(sa.Column('method', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('topic_set', schema=None) as batch_op:
        batch_op.drop_column('method')
        batch_op.drop_column('for_model')
