#!/usr/bin/env bash
# The test command: sets up and builds (scripts/setup.sh), then runs the unit and CLI tests.
# Exits non-zero when any test fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

"$root/scripts/setup.sh"
ctest --test-dir "$root/build" --output-on-failure
