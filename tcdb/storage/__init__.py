"""tcdb.storage — the database under every room: db.py (engines, sessions, the bulk writer),
migrate.py (schema revisions through Alembic), guard.py (every connection checks the server, the
file and the revision first), roles.py (a read-only PostgreSQL role), locks.py (writer locks),
housekeeping.py (deleting what hangs off runs, qrels sets and snapshots), consistency.py (checks
no constraint enforces, for `tcdb db check`).
"""
