#!/usr/bin/env bash
# The one check before a commit: the format check (which scripts/test.sh does not run, and a
# rename that reorders includes fails), then scripts/test.sh: the build and every ctest test,
# the layer check (layers) and its planted violations (layers_planted) among them. Stops at the
# first that fails. MPT_ETHEREUM_TESTS and MPT_EXECUTION_APIS pass through to the tests.
#
#   scripts/check.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/check-format.sh"
"$root/scripts/test.sh"
