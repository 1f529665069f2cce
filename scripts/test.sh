#!/usr/bin/env bash
# The test command: sets up (scripts/setup.sh), builds every target the tests run (the unit
# tests, the generators, mpt), then runs the unit and CLI tests.
# Exits non-zero when any test fails. MPT_ETHEREUM_TESTS and MPT_EXECUTION_APIS add the tests
# on those folders (scripts/setup.sh).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

"$root/scripts/setup.sh" --configure-only
cmake --build "$root/build" -j "${MPT_JOBS:-$(nproc)}"
# One process per unit case (CMakeLists.txt), so the tests run MPT_JOBS at a time (default:
# the cores); each makes its own temporary files.
ctest --test-dir "$root/build" --output-on-failure -j "${MPT_JOBS:-$(nproc)}"
