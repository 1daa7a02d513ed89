"""Measures by their ir_measures names: parsing what people write, and their stored ids."""

from __future__ import annotations

from collections.abc import Iterable

from sqlmodel import Session, col, select

from tcdb.errors import FieldError
from tcdb.schema import Measure


def canonical_measure(name: str, field: str = "measures") -> str:
    """The ir_measures spelling of a measure, in any case where exactly one measure matches
    (`ndcg@10`, `NDCG@10`, `ndcg_cut_10` → nDCG@10; `map`, `MAP` → AP; `p@10`, `P_10` → P@10).

    Why one rule: the CLI, the API and `literature import` read the same names the same way.
    Written as ir_measures or trec_eval spell it, a name is taken as is; otherwise its case is
    folded, and refused when the folded spellings name different measures.
    """
    text = name.strip()
    found = _parsed(text)
    if found is not None:
        return found
    meanings = sorted({m for v in _case_variants(text) if (m := _parsed(v)) is not None})
    if len(meanings) == 1:
        return meanings[0]
    if meanings:
        raise FieldError(field, f"{name!r} is ambiguous in another case: it could be "
                         f"{' or '.join(meanings)} (write it as ir_measures spells it)")
    raise FieldError(field, f"{name!r} is not a measure ir_measures knows "
                     "(e.g. nDCG@10, AP, P@10, Bpref, RR, Judged@10, or trec_eval names)")


def _parsed(text: str) -> str | None:
    """`text` as ir_measures or trec_eval spell a measure, canonical; None when neither."""
    from tcdb.collections.trec_eval_output import canonical_measure as irm_name
    from tcdb.collections.trec_eval_output import measure_from_trec_name

    return irm_name(text) or measure_from_trec_name(text)


def _case_variants(text: str) -> list[str]:
    """`text` with its leading measure name in each case ir_measures registers it under
    (`ndcg@10` → NDCG@10, nDCG@10; `p_10` → P_10), and in lower case (trec_eval's `MAP`)."""
    import ir_measures

    registered: dict[str, list[str]] = {}
    for known in ir_measures.measures.registry:
        registered.setdefault(known.lower(), []).append(known)
    cuts = [i for i, c in enumerate(text) if c in "@(_"] + [len(text)]
    variants = [known + text[cut:] for cut in cuts
                for known in registered.get(text[:cut].lower(), [])]
    return list(dict.fromkeys([*variants, text.lower()]))


def parse_measures(names: Iterable[str], field: str = "measures") -> list[str]:
    """Canonical names, de-duplicated in order; each must be computable by ir_measures."""
    import ir_measures

    result = list(dict.fromkeys(canonical_measure(n, field) for n in names))
    if not result:
        raise FieldError(field, "give at least one measure")
    for name in result:
        if not ir_measures.DefaultPipeline.supports(ir_measures.parse_measure(name)):
            raise FieldError(field, f"no installed ir_measures provider computes "
                              f"{name}")
    return result


def measure_id(session: Session, name: str) -> int:
    """The id of a measure by its ir_measures name, created on first use.

    Created with INSERT … ON CONFLICT DO NOTHING: two processes evaluating a new measure at
    once both get its id, neither a unique-constraint error.
    """
    existing = session.exec(select(col(Measure.id)).where(col(Measure.name) == name)).first()
    if existing is not None:
        return existing
    conn = session.connection()
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
    conn.execute(insert(Measure).values(name=name).on_conflict_do_nothing())
    created = session.exec(select(col(Measure.id)).where(col(Measure.name) == name)).one()
    assert created is not None
    return created


def ranking_depth(names: Iterable[str]) -> int | None:
    """How deep into each ranking these measures look: the largest cutoff when every measure
    has one and ir_measures computes it with pytrec_eval; None when one needs the whole run.

    Why: nDCG@10 reads ten documents of a thousand; reading and scoring only those is ~100×
    less work. pytrec_eval ranks as trec_eval does (score descending, document id descending),
    which is the stored `eval_rank`, so the top `depth` by `eval_rank` is exactly what it would
    take from the whole run. Other providers may break ties otherwise: no depth for them.
    """
    import ir_measures

    depth = 0
    for name in names:
        measure = ir_measures.parse_measure(name)
        cutoff = measure.params.get("cutoff")
        if cutoff is None or provider_of(measure) != "pytrec_eval":
            return None
        depth = max(depth, int(cutoff))
    return depth or None


def provider_of(measure: object) -> str | None:
    """The provider ir_measures' default pipeline computes `measure` with (its first that can)."""
    import ir_measures

    for provider in ir_measures.DefaultPipeline.providers:
        try:
            if provider.supports(measure):
                return str(provider.NAME)
        except Exception:  # noqa: BLE001, S112 - a provider that cannot load supports nothing
            continue
    return None
