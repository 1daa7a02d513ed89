"""Operations: every import, evaluation, pool operation and report, defined once.

An operation is a typed request (`request.Request`: field names, defaults, help text,
validation naming the field), a typed result (`result.Result`, with `.to_frame()` and
`.to_data()`), and one function taking the request and a database handle (`Database`),
registered by name with `@operation` (`registry.py`). The front ends are derived from the
registry: the CLI maps fields to flags by one rule (`tcdb.cli.derive`), `tcdb.api` exposes
each operation under its name with the same parameters, `tcdb.flows.tasks` wraps each as a
Prefect task, and the dashboard calls them and only displays.
"""

from tcdb.operations.database import Database
from tcdb.operations.registry import Operation, all_operations, get_operation, operation
from tcdb.operations.request import (
    Labels,
    Name,
    Names,
    Request,
    TwoOrMoreSnapshots,
    Version,
    argument,
    option,
)
from tcdb.operations.result import Result

__all__ = ["Database", "Labels", "Name", "Names", "Operation", "Request", "Result",
           "TwoOrMoreSnapshots", "Version", "all_operations", "argument", "get_operation",
           "operation", "option"]
