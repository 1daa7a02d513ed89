"""pooling strategies: a pool's strategy and budget, the judging order and round of its entries

* `pool.parameters`: the strategy with every parameter (`rbp:p=0.8,aggregate=sum`); `method`
  keeps the strategy's name (`depth` for every pool built before).
* `pool.budget`, `pool.budget_per_topic`: at most N documents, in total or per topic.
* `pool_entry.position`: the entry's place in its topic's judging order (1, 2, …), so that an
  export can be cut at any budget; NULL for pools built before (no order was kept).
* `pool_entry.round`: the round that added the entry (adaptive strategies judge in rounds).

Revision ID: 0009
Revises: 0007
Create Date: 2026-11-23 23:40:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0009'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('pool', schema=None) as batch_op:
        batch_op.add_column(sa.Column('parameters', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('budget', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('budget_per_topic', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    with op.batch_alter_table('pool_entry', schema=None) as batch_op:
        batch_op.add_column(sa.Column('position', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('round', sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('pool_entry', schema=None) as batch_op:
        batch_op.drop_column('round')
        batch_op.drop_column('position')
    with op.batch_alter_table('pool', schema=None) as batch_op:
        batch_op.drop_column('budget_per_topic')
        batch_op.drop_column('budget')
        batch_op.drop_column('parameters')
