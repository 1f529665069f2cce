#!/usr/bin/env bash
# Checks the library's layering (docs/DESIGN.md, section 1) from what the compiler itself
# includes: every library unit of the build's compile_commands.json is run through the
# preprocessor alone with its own flags (-E -H), and each file of lib/mpt/<layer>/ that it
# opens (the unit and every library header on the way) may include headers of its own layer
# and of the layers its row of the directions table names only, and no system header its row
# forbids. Includes are followed as the compiler resolves them, however they are spelled (a
# relative path, a last line without a newline). Also refused: a library file that is not
# .cpp or .hpp, one outside a layer folder or in a sub-folder other than detail/, a header of
# another layer's detail/ (internal to that layer), a library .cpp that the build does not
# compile, a library file including one outside the library. cmd/ is held to its own row of
# the table, as a layer above all of them.
# Prints every violation and exits 1 when there is one, 2 when it cannot check.
#
#   scripts/check-layers.sh [BUILD_DIR]
#
# BUILD_DIR holds compile_commands.json (CMakeLists.txt exports it); by default the script
# configures build-layers/ so itself, which compiles nothing. MPT_JOBS: units at a time.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() {
    echo "check-layers: error: $*" >&2
    exit 2
}
[ -f "$root/docs/DESIGN.md" ] || die "$root/docs/DESIGN.md not found"
command -v python3 >/dev/null || die "python3 not found (it reads compile_commands.json)"
if [ $# -ge 1 ]; then
    build=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such build folder"
else
    build=$root/build-layers
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null || die "configure failed"
fi
[ -f "$build/compile_commands.json" ] ||
    die "$build/compile_commands.json not found (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"

exec python3 - "$root" "$build/compile_commands.json" "${MPT_JOBS:-$(nproc)}" <<'PY'
import concurrent.futures, json, os, re, shlex, subprocess, sys

root, db_path, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
lib = os.path.join(root, "lib", "mpt") + os.sep
cmd = os.path.join(root, "cmd") + os.sep

def fail_setup(msg):
    print("check-layers: error: " + msg, file=sys.stderr)
    sys.exit(2)

# The directions table, between the markers of docs/DESIGN.md.
allowed, forbidden = {}, {}
rows = re.search(r"<!-- layers:begin -->(.*?)<!-- layers:end -->",
                 open(os.path.join(root, "docs", "DESIGN.md")).read(), re.S)
if not rows:
    fail_setup("no directions table in docs/DESIGN.md")
for line in rows.group(1).splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 3 or cells[0] in ("", "layer") or cells[0].startswith("-"):
        continue
    layer, includes, banned = cells
    allowed[layer] = {layer, *includes.split()}
    forbidden[layer] = [re.compile("^" + re.escape(h).replace(r"\*", ".*") + "$")
                        for h in banned.split()]
if not allowed:
    fail_setup("an empty directions table in docs/DESIGN.md")

problems = set()

def place(path):
    """(layer, problem) of a file of the library."""
    rel = path[len(lib):]
    parts = rel.split(os.sep)
    if len(parts) < 2:
        return None, "lib/mpt/" + rel + ": not in a layer folder"
    layer = parts[0]
    if layer not in allowed:
        return None, "lib/mpt/%s/: not a layer of the table in docs/DESIGN.md" % layer
    if len(parts) > 3 or (len(parts) == 3 and parts[1] != "detail"):
        return layer, "lib/mpt/" + rel + ": in a sub-folder other than detail/"
    if not (rel.endswith(".cpp") or rel.endswith(".hpp")):
        return layer, "lib/mpt/" + rel + ": library files are .cpp or .hpp"
    return layer, None

def where(src, target):
    """src:line of the include that opened target, where the spelling shows it."""
    base = os.path.basename(target)
    try:
        for n, text in enumerate(open(src, errors="replace"), 1):
            if re.match(r"\s*#\s*include\b", text) and base in text:
                return "%s:%d" % (os.path.relpath(src, root), n)
    except OSError:
        pass
    return os.path.relpath(src, root)

units = []
for e in json.load(open(db_path)):
    f = os.path.normpath(os.path.join(e["directory"], e["file"]))
    # The command line's units too: cmd/'s files, or the unity unit that includes them.
    if f.startswith(lib) or f.startswith(cmd) or ("/Unity/" in f and "/mpt.dir/" in f):
        units.append((f, e))
if not units:
    fail_setup("no unit of lib/mpt/ in " + db_path)

# Every library .cpp the repository holds is a unit of the build.
listed = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "lib"],
                        capture_output=True).stdout.decode().split("\0")
compiled = {f for f, _ in units}
if not any(f.startswith(lib) for f in compiled):
    fail_setup("no unit of lib/mpt/ in " + db_path)
for rel in filter(None, listed):
    full = os.path.join(root, rel)
    if not os.path.exists(full):
        continue
    if not full.startswith(lib):
        problems.add(rel + ": outside lib/mpt/")
        continue
    _, p = place(full)
    if p:
        problems.add(p)
    elif full.endswith(".cpp") and full not in compiled:
        problems.add(rel + ": not compiled (add it to its layer's sources in CMakeLists.txt)")

def system_dirs(compiler):
    out = subprocess.run([compiler, "-E", "-x", "c++", "-", "-v"], input=b"",
                         capture_output=True).stderr.decode(errors="replace")
    dirs, on = [], False
    for line in out.splitlines():
        if line.startswith("#include <...> search starts here"):
            on = True
        elif line.startswith("End of search list"):
            on = False
        elif on:
            dirs.append(os.path.normpath(line.strip()) + os.sep)
    return sorted(dirs, key=len, reverse=True)

dirs_of = {}

def opened(unit):
    f, e = unit
    words = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
    out = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("-o", "-c", "-MF", "-MT", "-MQ"):
            skip = w != "-c"
            continue
        if w in ("-MD", "-MMD") or w == e["file"] or os.path.normpath(
                os.path.join(e["directory"], w)) == f:
            continue
        out.append(w)
    r = subprocess.run(out + ["-E", "-H", "-o", os.devnull, f], cwd=e["directory"],
                       capture_output=True)
    if r.returncode != 0:
        return f, words[0], None, r.stderr.decode(errors="replace")
    edges, stack = [], [f]
    for line in r.stderr.decode(errors="replace").splitlines():
        m = re.match(r"^(\.+) (.+)$", line)
        if not m:
            continue
        depth = len(m.group(1))
        path = os.path.normpath(os.path.join(e["directory"], m.group(2)))
        del stack[depth:]
        edges.append((stack[-1], path))
        stack.append(path)
    return f, words[0], edges, None

with concurrent.futures.ThreadPoolExecutor(max(jobs, 1)) as pool:
    results = list(pool.map(opened, units))

seen = set()
for f, compiler, edges, err in results:
    if edges is None:
        problems.add("%s: the preprocessor failed: %s" % (os.path.relpath(f, root),
                                                          err.strip().splitlines()[-1:]))
        continue
    if compiler not in dirs_of:
        dirs_of[compiler] = system_dirs(compiler)
    for src, target in edges:
        if (src, target) in seen:
            continue
        if src.startswith(lib):
            layer, p = place(src)
            if p:
                problems.add(p)
        elif src.startswith(cmd) and "cmd" in allowed:
            layer = "cmd"
        else:
            continue
        seen.add((src, target))
        if layer is None:
            continue
        at = where(src, target)
        if target.startswith(lib):
            to, p = place(target)
            if p:
                problems.add(p)
            internal = target[len(lib):].split(os.sep)[1:2] == ["detail"]
            if to is not None and to != layer and internal:
                problems.add("%s: %s/ may not include %s, internal to %s/" % (
                    at, layer, os.path.relpath(target, root), to))
            elif to is not None and to not in allowed[layer]:
                problems.add("%s: %s/ may not include %s (allowed: %s)" % (
                    at, layer, os.path.relpath(target, root), " ".join(sorted(allowed[layer]))))
        elif layer == "cmd" and target.startswith(cmd):
            pass
        elif target.startswith(root + os.sep):
            problems.add("%s: %s/ may not include %s, outside the library" % (
                at, layer, os.path.relpath(target, root)))
        else:
            name = target
            for d in dirs_of[compiler]:
                if target.startswith(d):
                    name = target[len(d):]
                    break
            if any(rx.match(name) for rx in forbidden[layer]):
                problems.add("%s: %s/ may not include <%s>" % (at, layer, name))

for p in sorted(problems):
    print(p)
if problems:
    print("check-layers: includes against the layer directions (see docs/DESIGN.md, section 1)")
    sys.exit(1)
print("check-layers: %d units, %d files, every include within the layer directions" % (
    len(units), len({s for s, _ in seen})))
PY
