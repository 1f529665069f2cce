#!/usr/bin/env python3
"""Checks every JSON output of the CLI cases against its command's JSON Schema.

    check-json-schemas.py MPT SCHEMAS OUTPUTS GROUP...

MPT: the mpt binary. SCHEMAS: docs/json, one <command>.schema.json (draft 2020-12) for each
command whose --help offers --json, and for rlp (rlp decode prints JSON always). OUTPUTS: the
folder tests/cli_test.sh --group keeps each group's outputs in (OUTPUTS/GROUP/N.out beside
N.args, and OUTPUTS/GROUP/done once the group ran to its end).

An output is JSON when its command line asks for --json, or when the command prints JSON
always: rlp decode, proof (without --verify), dump --accounts, get --account without --slot.
Exit 0 or 1: the output must be one JSON document, or one a line (JSON lines), and each must
match exactly one of the schema's top-level alternatives (its oneOf; a schema without one is
one alternative). Exit 2 or more: an error stopped the command, and what it printed before
is checked only when it is whole JSON (a stream cut short by the error need not be).

Fails (exit 1) on a field name that is not camelCase, on an output that matches no alternative or more than one, on a JSON output
of a command without a schema, on a schema for no such command, on an alternative no output
matched (every form a schema allows is shown by some case), and on a group that did not run
to its end. Needs python3-jsonschema (4.10 or later).
"""

import copy
import json
import os
import re
import subprocess
import sys

import jsonschema


def commands_with_json(mpt):
    out = subprocess.run([mpt, "--commands"], check=True, capture_output=True, text=True).stdout
    names = [line.split("\t")[0] for line in out.splitlines() if line]
    with_json = {"rlp"}
    for name in names:
        help_text = subprocess.run([mpt, name, "--help"], capture_output=True, text=True).stdout
        if "--json" in help_text:
            with_json.add(name)
    return set(names), with_json


def prints_json(command, args):
    """Whether a run of command with args prints JSON."""
    if "--help" in args or "-h" in args:
        return False
    if "--json" in args:
        return True
    if command == "rlp":
        return "decode" in args
    if command == "proof":
        return "--verify" not in args
    if command == "dump":
        return "--accounts" in args
    if command == "get":
        return "--account" in args and "--slot" not in args
    if command == "witness":
        # The make form (DB KEY...) prints the witness as JSON unless --rlp or -o.
        return not (set(args) & {"check", "apply", "diff", "--rlp", "-o", "--output"})
    return False


def documents(text):
    """The output as one JSON document, else as JSON lines; None when it is neither."""
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    docs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            docs.append(json.loads(line))
        except ValueError:
            return None
    return docs or None


def field_names(node):
    """Every name a schema gives under "properties", anywhere in it."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                yield from value.keys()
            yield from field_names(value)
    elif isinstance(node, list):
        for value in node:
            yield from field_names(value)


class Schema:
    def __init__(self, path):
        with open(path) as f:
            self.schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(self.schema)
        self.whole = jsonschema.Draft202012Validator(self.schema)
        alternatives = self.schema.get("oneOf")
        if alternatives is None:
            self.alternatives = [self.whole]
        else:
            self.alternatives = []
            for alt in alternatives:
                one = copy.deepcopy(self.schema)
                one["oneOf"] = [alt]
                self.alternatives.append(jsonschema.Draft202012Validator(one))
        self.matched = [0] * len(self.alternatives)

    def check(self, doc):
        """None when doc matches exactly one alternative, else why not."""
        hits = [i for i, v in enumerate(self.alternatives) if v.is_valid(doc)]
        if len(hits) == 1:
            self.matched[hits[0]] += 1
            return None
        if not hits:
            # The nearest form: the one with the fewest errors, and its first.
            errors = min((list(v.iter_errors(doc)) for v in self.alternatives), key=len)
            e = errors[0]
            while e.context:  # into the oneOf of one form, and the $ref's own
                e = max(e.context, key=lambda c: len(c.absolute_path))
            where = "/" + "/".join(str(p) for p in e.absolute_path)
            return f"matches no form of the schema; the nearest: at {where}: {e.message[:300]}"
        return f"matches forms {hits} of the schema, where one must"


def main():
    if len(sys.argv) < 5:
        print("usage: check-json-schemas.py MPT SCHEMAS OUTPUTS GROUP...", file=sys.stderr)
        return 2
    mpt, schema_dir, outputs, groups = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    failures = []
    commands, with_json = commands_with_json(mpt)

    schemas = {}
    for entry in sorted(os.listdir(schema_dir)):
        if not entry.endswith(".schema.json"):
            continue
        command = entry[: -len(".schema.json")]
        if command not in commands:
            failures.append(f"{entry}: no command {command}")
            continue
        try:
            schemas[command] = Schema(os.path.join(schema_dir, entry))
        except (ValueError, jsonschema.exceptions.SchemaError) as e:
            failures.append(f"{entry}: not a valid schema: {e}")
            continue
        # One naming convention: camelCase, as JSON-RPC spells its fields.
        for name in sorted(set(field_names(schemas[command].schema))):
            if not re.fullmatch(r"[a-z][a-zA-Z0-9]*", name):
                failures.append(f"{entry}: field {name} is not camelCase")
    for command in sorted(with_json - schemas.keys()):
        failures.append(f"{command} prints JSON but {schema_dir}/{command}.schema.json is missing")

    checked = 0
    for group in groups:
        folder = os.path.join(outputs, group)
        if not os.path.exists(os.path.join(folder, "done")):
            failures.append(f"group {group}: no outputs in {folder} (the group did not run to "
                            f"its end: ctest runs cli/{group} first)")
            continue
        for entry in sorted(os.listdir(folder)):
            if not entry.endswith(".args"):
                continue
            with open(os.path.join(folder, entry), "rb") as f:
                fields = [x.decode() for x in f.read().split(b"\0")[:-1]]
            name, rc, args = fields[0], int(fields[1]), fields[2:]
            command = next((a for a in args if a in commands), None)
            if command is None or not prints_json(command, args):
                continue
            with open(os.path.join(folder, entry[: -len(".args")] + ".out"), "rb") as f:
                text = f.read().decode("utf-8", errors="replace")
            where = f"{group}: {name}: mpt {' '.join(args)}"
            docs = documents(text)
            if docs is None:
                if rc < 2:
                    failures.append(f"{where}: the output is not JSON: {text[:200]!r}")
                continue
            if command not in schemas:
                failures.append(f"{where}: a JSON output, and no schema for {command}")
                continue
            for doc in docs:
                why = schemas[command].check(doc)
                checked += 1
                if why:
                    failures.append(f"{where}: {why}")

    for command, schema in sorted(schemas.items()):
        for i, n in enumerate(schema.matched):
            if n == 0:
                alt = (schema.schema.get("oneOf") or [schema.schema])[i]
                what = alt.get("$ref", alt.get("description", ""))
                failures.append(f"{command}.schema.json: no CLI case prints form {i} ({what})")

    for f in failures:
        print("FAIL " + f)
    forms = sum(len(s.alternatives) for s in schemas.values())
    print(f"{checked} JSON documents of {len(schemas)} commands checked, {forms} forms; "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
