#!/usr/bin/env bash
# Refresh requirements.lock deliberately: resolve pyproject's ranges afresh in a throw-away
# virtual environment and write every version it chose. Then run `make test` on the new lock
# (`make test` reinstalls from it) and commit the lock only if the whole suite passes, the
# scheduled-flow test (tests/test_schedule_fires.py) included.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --upgrade pip
"$tmp/venv/bin/python" -m pip install --quiet -e '.[dev]'
{
  echo "# The versions the test suite passed with: make demo, make test and .ci/run install"
  echo "# with these as pip constraints. Refresh deliberately with 'make lock' (tools/lock.sh),"
  echo "# then 'make test' on the new lock before committing it. Python $("$tmp/venv/bin/python" -c 'import sys; print(".".join(map(str, sys.version_info[:3])))')."
  "$tmp/venv/bin/python" -m pip freeze --exclude-editable | grep -v '^-e ' | LC_ALL=C sort -f
} > requirements.lock
echo "requirements.lock: $(grep -vc '^#' requirements.lock) pinned packages"
