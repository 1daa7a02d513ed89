"""Type-check the tcdb package with mypy, every module under the name it is imported by.

The rooms of the package sit in top-level folders (`schema/` is `tcdb.schema`,
`collections/documents/` is `tcdb.collections.documents`, …; see setup.py). mypy
finds modules by walking folders, so it would take `schema/runs.py` for a module `schema.runs`;
here each file is handed to mypy with its real name, read from the same package map the install
uses. Options come from `[tool.mypy]` in pyproject.toml; extra arguments go to mypy.

    python tools/typecheck.py            # what `make lint` runs
"""

from __future__ import annotations

import sys
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import setup  # noqa: E402  (the package map the install uses)


def sources() -> list[BuildSource]:
    """Every module of the package as (file, dotted name), from the install's package map."""
    folders = setup.package_dirs(ROOT)
    found = []
    for package in setup.packages(ROOT):
        mapped = max((p for p in folders if package == p or package.startswith(p + ".")), key=len)
        folder = ROOT / folders[mapped] / Path(*package[len(mapped):].split(".")[1:])
        for file in sorted(folder.glob("*.py")):
            module = package if file.name == "__init__.py" else f"{package}.{file.stem}"
            found.append(BuildSource(str(file.relative_to(ROOT)), module))
    return found


def main(argv: list[str]) -> int:
    _, options = process_options([*argv, "--config-file", str(ROOT / "pyproject.toml"),
                                  "-c", "pass"])
    try:
        result = build.build(sources(), options)
    except CompileError as exc:
        print("\n".join(exc.messages))
        return 2
    for line in result.errors:
        print(line)
    n = sum(": error:" in line for line in result.errors)
    print(f"mypy: {n} error(s) in {len(sources())} modules" if n else
          f"mypy: no errors in {len(sources())} modules")
    return 1 if n else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
