"""Print the table of operations: name, request fields, result type, and the CLI command, API
function and flow task derived from each (Markdown; docs/operations.md holds its output).

    .venv/bin/python tools/operations_table.py
"""

from __future__ import annotations

from tcdb.cli.derive import flag_of
from tcdb.operations import all_operations


def main() -> None:
    print("| operation | request fields (CLI flag) | result | CLI | API | flow task |")
    print("|---|---|---|---|---|---|")
    for name, op in all_operations().items():
        fields = ", ".join(f"{field} ({flag_of(field, info)})" if flag_of(field, info).lstrip(
            "-").replace("-", "_") != field else field
            for field, info in op.request.model_fields.items())
        print(f"| `{name}` | {fields} | `{op.result.__name__}` | `tcdb {' '.join(op.command)}` "
              f"| `tcdb.api.{name}` | `TASKS[\"{name}\"]` ({'-'.join(op.command)}) |")


if __name__ == "__main__":
    main()
