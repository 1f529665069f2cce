#!/usr/bin/env bash
# The layer check against planted violations: a scratch copy of the tracked tree gets one of
# each kind the check must see, is configured (nothing compiled), and scripts/check-layers.sh
# must fail naming every one; the unchanged tree must pass. The eighth, a call into a layer
# above declared by hand with no include, is the link test's: mpt_link_core is built in the
# scratch copy and must fail to link.
#
#   tests/layers_test.sh [--no-link]     (--no-link: skip the one compile, about 20 s)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
link=1
[ "${1:-}" = "--no-link" ] && link=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL $*"
}

src=$scratch/src
mkdir -p "$src"
git -C "$root" ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$src")

# The unchanged copy passes.
cmake -S "$src" -B "$scratch/clean" -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1 ||
    bad "configuring the unchanged copy failed"
"$src/scripts/check-layers.sh" "$scratch/clean" >"$scratch/out" 2>&1 && ok ||
    bad "the unchanged tree: $(cat "$scratch/out")"

lib=$src/lib/mpt
# 1. A relative include the wrong way: proof/ may not include store/.
sed -i '1i #include "../store/node_store.hpp"' "$lib/proof/proof.cpp"
# 2. A file in a sub-folder (not detail/) that includes a layer above its own.
mkdir -p "$lib/trie/extra"
printf '#include <mpt/store/node_store.hpp>\n' >"$lib/trie/extra/planted.cpp"
sed -i 's#lib/mpt/trie/trie_walk.cpp#lib/mpt/trie/trie_walk.cpp lib/mpt/trie/extra/planted.cpp#' "$src/CMakeLists.txt"
# 3. An .inc file, which includes SQLite into core/.
printf '#include <sqlite3.h>\n' >"$lib/core/planted.inc"
sed -i '1i #include "planted.inc"' "$lib/core/hex.cpp"
# 4. A thread header in core/.
sed -i '1i #include <semaphore>' "$lib/core/bytes.cpp"
# 5. An include the wrong way on a last line with no newline: input/ may not include ops/.
printf '#include <mpt/ops/trie_file.hpp>' >>"$lib/input/json_lexer.cpp"
# 7. Another layer's internal header: ops/ may include store/, not store/detail/.
sed -i '1i #include <mpt/store/detail/sqlite_stmt.hpp>' "$lib/ops/limits.cpp"
# The command line: SQLite is the store's alone.
sed -i '1i #include <sqlite3.h>' "$src/cmd/keccak.cpp"
# 6. A library .cpp that the build does not compile.
printf '// planted\n' >"$lib/state/orphan.cpp"
git -C "$src" init -q && git -C "$src" add -A >/dev/null 2>&1

cmake -S "$src" -B "$scratch/planted" -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1 ||
    bad "configuring the planted copy failed"
"$src/scripts/check-layers.sh" "$scratch/planted" >"$scratch/out" 2>&1
rc=$?
[ $rc -eq 1 ] && ok || bad "the planted tree: exit $rc, want 1: $(tail -3 "$scratch/out")"
while IFS='|' read -r name pattern; do
    grep -Eq -- "$pattern" "$scratch/out" && ok || bad "not seen: $name"
done <<'EOF'
relative include|^lib/mpt/proof/proof\.cpp:1: proof/ may not include lib/mpt/store/node_store\.hpp
sub-folder|^lib/mpt/trie/extra/planted\.cpp: in a sub-folder other than detail/$
sub-folder, its include|^lib/mpt/trie/extra/planted\.cpp:1: trie/ may not include lib/mpt/store/node_store\.hpp
.inc file|^lib/mpt/core/planted\.inc: library files are \.cpp or \.hpp$
SQLite in core/ through the .inc file|^lib/mpt/core/planted\.inc:1: core/ may not include <sqlite3\.h>$
thread header in core/|^lib/mpt/core/bytes\.cpp:1: core/ may not include <semaphore>$
last line without a newline|^lib/mpt/input/json_lexer\.cpp:[0-9]+: input/ may not include lib/mpt/ops/trie_file\.hpp
a .cpp not compiled|^lib/mpt/state/orphan\.cpp: not compiled
SQLite in cmd/|^cmd/keccak\.cpp:1: cmd/ may not include <sqlite3\.h>$
another layer's detail/|^lib/mpt/ops/limits\.cpp:1: ops/ may not include lib/mpt/store/detail/sqlite_stmt\.hpp, internal to store/$
EOF

# 8. A call declared by hand, with no include: the link test of its layer fails.
if [ $link -eq 1 ]; then
    cat >>"$src/lib/mpt/core/keccak.cpp" <<'EOF'

namespace mpt {
size_t available_memory() noexcept;
size_t planted_wrong_way() { return available_memory(); }
}  // namespace mpt
EOF
    cmake -S "$src" -B "$scratch/link" -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1
    # The planted copy's other violations do not stop core/ from compiling: hex.cpp and
    # bytes.cpp are put back.
    cp "$root/lib/mpt/core/hex.cpp" "$root/lib/mpt/core/bytes.cpp" "$lib/core/"
    cmake --build "$scratch/link" -j "${MPT_JOBS:-$(nproc)}" --target mpt_link_core >"$scratch/out" 2>&1
    rc=$?
    [ $rc -ne 0 ] && grep -q "undefined reference to .mpt::available_memory" "$scratch/out" && ok ||
        bad "a hand-declared call from core/ into input/ linked (exit $rc)"
fi

echo "layers: $pass passed, $fail failed"
[ $fail -eq 0 ]
