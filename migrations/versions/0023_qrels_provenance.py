"""qrels provenance: who judged a set, and an LLM judge's model, prompt, settings and answers

* `qrels_set.judge_kind`: human, llm, clicks, click_through_rate, other or unknown (issue 44).
* `qrels_provenance` (1:1 with `qrels_set`): model, revision or digest, provider, prompt template
  and its sha256, variant, few-shot examples, decoding settings, samples and aggregation, the
  grades re-judged, date, and how many pairs no answer parsed for.
* `judgment_answer`: each raw answer per (set, topic, document, sample), whether it parsed,
  its grade, tokens and cost. Unparsed answers live here only, never in `judgment`.

Existing sets become `unknown`: no stored field says who judged them (a pooled set's assessor
may be a simulation, as the demo's is), so none is called human by guess. The downgrade drops
the tables and the column.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-05 17:15:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = '0023'
down_revision: str | None = '0022'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JUDGE_KIND = sa.Enum('human', 'llm', 'clicks', 'click_through_rate', 'other', 'unknown',
                     name='judge_kind', native_enum=False, create_constraint=True, length=24)


def upgrade() -> None:
    with op.batch_alter_table('qrels_set', schema=None) as batch_op:
        batch_op.add_column(sa.Column('judge_kind', JUDGE_KIND, nullable=False,
                                      server_default='unknown'))
    name = sqlmodel.sql.sqltypes.AutoString
    op.create_table(
        'qrels_provenance',
        sa.Column('qrels_set_id', sa.Integer(), nullable=False),
        sa.Column('model', name(length=200), nullable=True),
        sa.Column('model_revision', name(length=200), nullable=True),
        sa.Column('provider', name(length=200), nullable=True),
        sa.Column('prompt_template', sa.Text(), nullable=True),
        sa.Column('prompt_sha256', name(length=128), nullable=True),
        sa.Column('prompt_variant', name(length=200), nullable=True),
        sa.Column('few_shot_examples', sa.Text(), nullable=True),
        sa.Column('few_shot_count', sa.Integer(), nullable=True),
        sa.Column('temperature', sa.Float(), nullable=True),
        sa.Column('top_p', sa.Float(), nullable=True),
        sa.Column('frequency_penalty', sa.Float(), nullable=True),
        sa.Column('presence_penalty', sa.Float(), nullable=True),
        sa.Column('seed', sa.BigInteger(), nullable=True),
        sa.Column('samples', sa.Integer(), nullable=True),
        sa.Column('aggregation', name(length=200), nullable=True),
        sa.Column('judged_grades', name(length=200), nullable=True),
        sa.Column('judged_at', sa.Date(), nullable=True),
        sa.Column('n_unparsed', sa.Integer(), nullable=False),
        sa.Column('source', sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(['qrels_set_id'], ['qrels_set.id'],
                                name=op.f('fk_qrels_provenance_qrels_set_id_qrels_set'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('qrels_set_id', name=op.f('pk_qrels_provenance')),
    )
    op.create_table(
        'judgment_answer',
        sa.Column('qrels_set_id', sa.Integer(), nullable=False),
        sa.Column('topic_id', sa.Integer(), nullable=False),
        sa.Column('doc_id', name(length=500), nullable=False),
        sa.Column('sample', sa.Integer(), nullable=False),
        sa.Column('answer', sa.Text(), nullable=True),
        sa.Column('parsed', sa.Boolean(), nullable=False),
        sa.Column('grade', sa.SmallInteger(), nullable=True),
        sa.Column('input_tokens', sa.Integer(), nullable=True),
        sa.Column('output_tokens', sa.Integer(), nullable=True),
        sa.Column('cost', sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(['qrels_set_id'], ['qrels_set.id'],
                                name=op.f('fk_judgment_answer_qrels_set_id_qrels_set'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['topic_id'], ['topic.id'],
                                name=op.f('fk_judgment_answer_topic_id_topic')),
        sa.PrimaryKeyConstraint('qrels_set_id', 'topic_id', 'doc_id', 'sample',
                                name=op.f('pk_judgment_answer')),
    )


def downgrade() -> None:
    op.drop_table('judgment_answer')
    op.drop_table('qrels_provenance')
    with op.batch_alter_table('qrels_set', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_qrels_set_judge_kind'), type_='check')
        batch_op.drop_column('judge_kind')
