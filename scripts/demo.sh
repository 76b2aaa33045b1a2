#!/usr/bin/env bash
# `make demo`: the main job on the bundled example project, in a scratch copy (build/demo) so the
# committed example stays as it is. Each step is one casework command a user would type.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$root/build/demo/refunds"
rm -rf "$work"
mkdir -p "$(dirname "$work")"
cp -r "$root/examples/refunds" "$work"
rm -rf "$work/.casework"
cd "$work"
# Releases are files in git: make the scratch copy a repository so old versions materialise.
git init -q . && git add -A && git -c user.name=demo -c user.email=demo@example.invalid commit -qm "example project"

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "${*:2}"; "${@:2}"; }

step "Check the dataset against the agent's declared tools" casework check refunds
step "Release it as a version runs can pin" casework release refunds -m "demo: first release"
git add -A && git -c user.name=demo -c user.email=demo@example.invalid commit -qm "release refunds"
step "Release log" casework versions refunds
step "Count cases by oracle class" casework cases refunds --oracle state_assertion --format json
step "A tool refactor, applied as a migration (lookup_customer -> find_customer)" bash -c '
  python3 - <<PY
import json, pathlib
p = pathlib.Path("agent/tools.json")
tools = json.loads(p.read_text())
for t in tools:
    if t["name"] == "lookup_customer":
        t["name"] = "find_customer"
p.write_text(json.dumps(tools, indent=2) + "\n")
PY
  echo "[tools]" > renames.toml; echo "lookup_customer = \"find_customer\"" >> renames.toml
  echo "(agent now declares find_customer; the dataset still says lookup_customer)"
  casework check refunds >/dev/null 2>&1 && { echo "check should have failed"; exit 1; } || echo "casework check fails: rows name an undeclared tool"
  casework migrate refunds --renames renames.toml -m "lookup_customer renamed to find_customer"
  casework check refunds'
step "What the migration changed" casework diff refunds 1 2
echo
echo "demo finished: scratch project in build/demo/refunds"
