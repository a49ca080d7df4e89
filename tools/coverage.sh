#!/usr/bin/env bash
# Branch coverage of the whole test suite, including the `wb` subprocesses the tests start (coverage's
# subprocess patch). Not part of .ci/run: measuring every subprocess roughly doubles the suite's time.
#
#   tools/coverage.sh [PYTEST ARGS…]      e.g. tools/coverage.sh tests/cli   (default: tests)
#
# Run it in a venv with the test extras (`pip install -e '.[test]'`). Prints the per-file table (files at
# 100% left out) and the total; `coverage html` afterwards writes htmlcov/.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .coverage-data && mkdir -p .coverage-data
python -m coverage run -m pytest -q -p no:cacheprovider "${@:-tests}" || status=$?
python -m coverage combine -q
python -m coverage report
exit "${status:-0}"
