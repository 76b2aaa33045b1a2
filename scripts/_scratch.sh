# Sourced by scripts/demo.sh and scripts/tour.sh: a scratch copy of the refunds example under
# build/$1/refunds (the committed example stays as it is), made a git repository, and the two
# helpers every step uses. Leaves the shell in the copy.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$root/build/$1/refunds"
rm -rf "$work"
mkdir -p "$(dirname "$work")"
cp -r "$root/examples/refunds" "$work"
rm -rf "$work/.casework" "$work/runs"
cd "$work"

# The example's mined rows were scrubbed with this published, deliberately public demo key. A real
# project keeps its key outside the repository (privacy.key_file or CASEWORK_PSEUDONYM_KEY).
export CASEWORK_PSEUDONYM_KEY="larkspur-example-demo-key-not-secret-0001"
export COLUMNS="${COLUMNS:-130}"
unset CASEWORK_DB_URL

# Releases are files in git: the scratch copy is a repository, so old versions materialise.
git init -q .
commit() { git add -A && git -c user.name=demo -c user.email=demo@example.invalid commit -qm "$1"; }
commit "example project"

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "${*:2}"; "${@:2}"; }
fails() { # a step whose point is that casework says no (exit 1)
  printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "${*:2}"
  if "${@:2}"; then echo "expected this to fail"; exit 1; else echo "(exit $?, as it should)"; fi
}
