"""snapshot figures kept at ingest: token totals, and the churn from the snapshot before

* `snapshot.tokens_counted`, `tokens_total`, `tokens_min`, `tokens_max`: over the snapshot's
  documents whose version has a token count (`content.n_tokens`), as `n_documents` keeps its
  size. The ingest fills them before the snapshot becomes `complete`; `tcdb snapshot stats`
  reads them instead of joining every membership to its version (~1.2 s of a 2 s budget at
  1,000,000 documents on PostgreSQL). NULL: not counted; stats then aggregates live.

* `snapshot_churn`: documents from one snapshot to another by source label (before, after)
  and state (added, removed, unchanged, grew, shrank, same_length), which the ingest counts
  against the snapshot before the new one (it compared the two already for its summary):
  `snapshot diff` and `stats` read these rows instead of joining two snapshots' memberships
  (~2 s at 1,000,000 documents each on PostgreSQL). Pairs without rows are counted live.

Existing snapshots get their token totals here, one aggregate each, and each complete snapshot
its churn against the one before it in snapshot order (date, then label), as the ingest would
have kept it: one join per consecutive pair. The downgrade drops the table and the columns.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24 02:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0014'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ('tokens_counted', 'tokens_total', 'tokens_min', 'tokens_max')


def upgrade() -> None:
    with op.batch_alter_table('snapshot', schema=None) as batch_op:
        batch_op.add_column(sa.Column('tokens_counted', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('tokens_total', sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column('tokens_min', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('tokens_max', sa.Integer(), nullable=True))
    op.create_table(
        'snapshot_churn',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('snapshot_a_id', sa.Integer(), nullable=False),
        sa.Column('snapshot_b_id', sa.Integer(), nullable=False),
        sa.Column('source_a', sa.Text(), nullable=True),
        sa.Column('source_b', sa.Text(), nullable=True),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.Column('n', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['snapshot_a_id'], ['snapshot.id'],
                                name=op.f('fk_snapshot_churn_snapshot_a_id_snapshot'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['snapshot_b_id'], ['snapshot.id'],
                                name=op.f('fk_snapshot_churn_snapshot_b_id_snapshot'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_snapshot_churn')),
    )
    with op.batch_alter_table('snapshot_churn', schema=None) as batch_op:
        batch_op.create_index('ix_snapshot_churn_pair', ['snapshot_a_id', 'snapshot_b_id'])
        batch_op.create_index(batch_op.f('ix_snapshot_churn_snapshot_b_id'), ['snapshot_b_id'])
    conn = op.get_bind()
    conn.execute(sa.text(
        "UPDATE snapshot SET tokens_counted = t.n, tokens_total = t.total, tokens_min = t.low,"
        " tokens_max = t.high FROM (SELECT sd.snapshot_id AS sid, COUNT(c.n_tokens) AS n,"
        " COALESCE(SUM(c.n_tokens), 0) AS total, MIN(c.n_tokens) AS low,"
        " MAX(c.n_tokens) AS high FROM snapshot_document sd JOIN content c"
        " ON c.id = sd.content_id GROUP BY sd.snapshot_id) t WHERE snapshot.id = t.sid"))
    _churn_of_consecutive_snapshots(conn)


# The churn of snapshot :a to :b (as `tcdb.queries.churn` counts it, written out here so that
# this revision keeps meaning what it meant when the code moves on).
_CHURN = (
    "SELECT a.source_label, b.source_label, CASE WHEN b.document_id IS NULL THEN 'removed'"
    " WHEN a.content_id = b.content_id THEN 'unchanged'"
    " WHEN cb.length > ca.length THEN 'grew' WHEN cb.length < ca.length THEN 'shrank'"
    " ELSE 'same_length' END AS state, COUNT(*)"
    " FROM snapshot_document a"
    " LEFT JOIN snapshot_document b ON b.document_id = a.document_id AND b.snapshot_id = :b"
    " LEFT JOIN content ca ON ca.id = a.content_id AND a.content_id <> b.content_id"
    " LEFT JOIN content cb ON cb.id = b.content_id AND a.content_id <> b.content_id"
    " WHERE a.snapshot_id = :a GROUP BY a.source_label, b.source_label, state"
    " UNION ALL"
    " SELECT NULL, b.source_label, 'added', COUNT(*) FROM snapshot_document b"
    " WHERE b.snapshot_id = :b AND NOT EXISTS (SELECT 1 FROM snapshot_document a"
    " WHERE a.snapshot_id = :a AND a.document_id = b.document_id) GROUP BY b.source_label")


def _churn_of_consecutive_snapshots(conn: sa.Connection) -> None:
    rows = conn.execute(sa.text(
        "SELECT id, collection_id, date, label FROM snapshot WHERE status = 'complete'")).all()
    by_collection: dict[int, list[tuple[str, str, int]]] = {}
    for sid, collection_id, date, label in rows:  # the ingest's order: date (none last), label
        when = str(date) if date is not None else '9999-12-31'
        by_collection.setdefault(int(collection_id), []).append((when, str(label), int(sid)))
    insert = sa.text(
        "INSERT INTO snapshot_churn (snapshot_a_id, snapshot_b_id, source_a, source_b, state, n)"
        f" SELECT :a, :b, c.* FROM ({_CHURN}) c")
    for snapshots in by_collection.values():
        ordered = [sid for *_, sid in sorted(snapshots)]
        for a, b in zip(ordered, ordered[1:], strict=False):
            conn.execute(insert, {"a": a, "b": b})


def downgrade() -> None:
    with op.batch_alter_table('snapshot_churn', schema=None) as batch_op:
        batch_op.drop_index('ix_snapshot_churn_pair')
        batch_op.drop_index(batch_op.f('ix_snapshot_churn_snapshot_b_id'))
    op.drop_table('snapshot_churn')
    with op.batch_alter_table('snapshot', schema=None) as batch_op:
        for name in reversed(COLUMNS):
            batch_op.drop_column(name)
