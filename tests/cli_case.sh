#!/bin/sh
# The ctest entry of one CLI case: reports the outcome its group's run recorded
# (tests/cli_test.sh --group, which ctest runs first: the group is the case's fixture). A
# plain sh and one grep for a pass: there are some 900 of these.
#   cli_case.sh RESULTS NAME
if [ $# -ne 2 ]; then
    echo "usage: cli_case.sh RESULTS NAME" >&2
    exit 2
fi
tab=$(printf '\t')
if grep -qxF -- "pass$tab$2" "$1" 2>/dev/null; then
    echo "pass: $2"
    exit 0
fi
line=$(grep -F -m1 -- "fail$tab$2$tab" "$1" 2>/dev/null)
if [ -n "$line" ]; then
    echo "FAIL $2: ${line#"fail$tab$2$tab"}" | sed 's/ | /\n  /g'
else
    echo "FAIL $2: no outcome in $1 (its group's run did not reach it)"
fi
exit 1
