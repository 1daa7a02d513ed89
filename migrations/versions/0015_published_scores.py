"""published scores: snapshots without documents, qrels sets known by their scores, topic match

* `qrels_set.kind` may be `published`: the official judgments a collection's published per-topic
  scores were computed with, which tcdb does not hold (no judgment rows; its topics are the
  topics its scores name). The CHECK constraint of the kind is widened.
* `snapshot.with_documents` (false: registered from its topics or from the topic ids its
  published scores name, documents may be ingested later) and `snapshot.topics_from_scores`.
* `snapshot_topic.query` may be NULL: a topic known by its id alone.
* `collection.topic_match` (`normalised`, today's rule, or `exact`): which query texts are one
  topic under topic identity by text.

Existing rows keep their meaning: every snapshot so far has its documents, every collection
matches normalised texts. The downgrade refuses nothing: published sets, documentless snapshots
and topics without text would not fit the old schema, so it deletes the published sets (and
their scores) and gives a topic without text its id as text.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 10:30:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_KINDS = ('original', 'pooled', 'expanded', 'derived')
NEW_KINDS = (*OLD_KINDS, 'published')


def _kind(values: tuple[str, ...]) -> sa.Enum:
    return sa.Enum(*values, name='qrels_kind', native_enum=False, create_constraint=True,
                   length=16)


TOPIC_MATCH = sa.Enum('normalised', 'exact', name='topic_match', native_enum=False,
                      create_constraint=True, length=16)


def upgrade() -> None:
    with op.batch_alter_table('qrels_set', schema=None) as batch_op:
        batch_op.alter_column('kind', existing_type=_kind(OLD_KINDS), type_=_kind(NEW_KINDS),
                              existing_nullable=False)
    with op.batch_alter_table('snapshot', schema=None) as batch_op:
        batch_op.add_column(sa.Column('with_documents', sa.Boolean(), nullable=False,
                                      server_default=sa.true()))
        batch_op.add_column(sa.Column('topics_from_scores', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    with op.batch_alter_table('snapshot_topic', schema=None) as batch_op:
        batch_op.alter_column('query', existing_type=sa.Text(), nullable=True)
    with op.batch_alter_table('collection', schema=None) as batch_op:
        batch_op.add_column(sa.Column('topic_match', TOPIC_MATCH, nullable=False,
                                      server_default='normalised'))


def downgrade() -> None:
    conn = op.get_bind()
    published = "SELECT id FROM qrels_set WHERE kind = 'published'"
    conn.execute(sa.text(f"DELETE FROM score WHERE qrels_set_id IN ({published})"))
    conn.execute(sa.text(f"DELETE FROM evaluation WHERE qrels_set_id IN ({published})"))
    conn.execute(sa.text("DELETE FROM qrels_set WHERE kind = 'published'"))
    conn.execute(sa.text("UPDATE snapshot_topic SET query = external_id WHERE query IS NULL"))
    with op.batch_alter_table('collection', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_collection_topic_match'), type_='check')
        batch_op.drop_column('topic_match')
    with op.batch_alter_table('snapshot_topic', schema=None) as batch_op:
        batch_op.alter_column('query', existing_type=sa.Text(), nullable=False)
    with op.batch_alter_table('snapshot', schema=None) as batch_op:
        batch_op.drop_column('topics_from_scores')
        batch_op.drop_column('with_documents')
    with op.batch_alter_table('qrels_set', schema=None) as batch_op:
        batch_op.alter_column('kind', existing_type=_kind(NEW_KINDS), type_=_kind(OLD_KINDS),
                              existing_nullable=False)
