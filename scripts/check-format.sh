#!/usr/bin/env bash
# Checks that every tracked C++ file (.cpp, .hpp) is formatted as the repository's .clang-format
# says, with clang-format 14 (other versions format some constructs differently). Changes
# nothing: prints each place that differs and exits 1 when there is one; `clang-format -i FILE`
# fixes a file.
#
#   scripts/check-format.sh [ROOT]        (ROOT: the checkout; default: this script's)
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"

fmt=
for c in clang-format-14 clang-format; do
    if command -v "$c" >/dev/null 2>&1; then
        fmt=$c
        break
    fi
done
if [ -z "$fmt" ]; then
    echo "check-format: error: clang-format not found (scripts/setup.sh installs clang-format-14)" >&2
    exit 2
fi
[ -f .clang-format ] || {
    echo "check-format: error: $root/.clang-format not found" >&2
    exit 2
}

files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(git ls-files -z -- '*.cpp' '*.hpp')
if [ ${#files[@]} -eq 0 ]; then
    echo "check-format: error: no tracked .cpp or .hpp files under $root" >&2
    exit 2
fi

# --dry-run -Werror: a file that would change is an error, one warning per differing place.
if ! "$fmt" --style=file --dry-run -Werror "${files[@]}"; then
    echo "check-format: files above differ from .clang-format (fix: $fmt -i FILE)" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files formatted ($("$fmt" --version | sed 's/.*version //'))"
