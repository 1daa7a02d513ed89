"""Systems: the retrieval systems a collection follows across snapshots.

A system is its group and its name. A run joins the system of its own group and tag (or of the
name `--system` gives), so round 1's `run1` of team GUIR_S2 and round 2's `run1` of team cuni
stay two systems, and ER and ΔRI are never computed across them.
"""

from __future__ import annotations

from sqlmodel import Session, col, select

from tcdb.errors import FieldError, some
from tcdb.schema import System


def system_name(session: Session, system_id: int) -> str:
    return session.exec(select(System.name).where(System.id == system_id)).one()


def get_system(session: Session, collection_id: int, name: str, group: str | None = None,
               *, explicit: bool = False) -> System:
    """The collection's system (group, name), created on first use.

    With `explicit` (the user named the system with `--system`), an existing system of that
    name is joined whatever its group, as the user said; when systems of several groups have
    the name, the run's group decides, and without one the choice is refused.
    """
    group = group or ""
    found = session.exec(select(System).where(
        System.collection_id == collection_id, System.group_name == group,
        System.name == name)).first()
    if found is not None:
        return found
    if explicit:
        named = list(session.exec(select(System).where(
            System.collection_id == collection_id, System.name == name)
            .order_by(col(System.group_name))))
        if len(named) == 1:
            return named[0]
        if len(named) > 1:
            groups = some(s.group_name or "(no group)" for s in named)
            raise FieldError("system", f"systems named {name!r} belong to several groups "
                             f"({groups}): give the run's group")
    system = System(collection_id=collection_id, group_name=group, name=name)
    session.add(system)
    session.flush()
    return system


def system_labels(systems: dict[int, tuple[str, str]]) -> dict[int, str]:
    """system id → how reports name it: its name, or `group/name` where another system of the
    same name (another group) would make the name ambiguous."""
    counts: dict[str, int] = {}
    for _, name in systems.values():
        counts[name] = counts.get(name, 0) + 1
    return {sid: name if counts[name] == 1 or not group else f"{group}/{name}"
            for sid, (group, name) in systems.items()}
