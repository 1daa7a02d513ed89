"""Prefect flows over tcdb's plain functions: ingest, import runs, evaluate, pool, refresh.

Flows orchestrate and hold no business logic: each calls the same core function the CLI calls.
Importing this package configures Prefect's environment first (`tcdb.flows.prefect_env`), so the
flows' state stays in the project and nothing writes into the user's home by surprise; and it
has Prefect log a user error (`TcdbError`) that fails a run as its one line, without traceback.
"""

from tcdb.flows.common import quiet_user_errors
from tcdb.flows.prefect_env import configure_prefect

configure_prefect()
quiet_user_errors()
