#!/usr/bin/env bash
# Measures progressive context on real diffs: for each pair of tagged
# releases of a Go module it downloads both versions through the module
# proxy into a temporary module cache, diffs the two trees, and prints how
# much shorter the assembled intent prompt is than the full one, per file
# and on average. Each file falls in one class: "signals" (the packs its
# signals select), "fallback" (code but no signal: every pack) or "no code"
# (not a source file, or only blank, comment and import lines: the core
# prompt alone). The last lines repeat one summary per pair and one over all
# pairs: files per class and mean line and character reductions. Nothing is
# written to the repository. (The same table for a single diff file:
# reviewfleet prompts stats --diff FILE.)
#
# It also measures the project's own testdata/diffs and the diffs of this
# repository's own last commits.
#
# Usage: scripts/measure-prompts.sh [module@vA..vB ...]
# Default pairs: github.com/hibiken/asynq@v0.25.1..v0.26.0
#                github.com/google/uuid@v1.5.0..v1.6.0
#                github.com/jackc/pgx/v5@v5.11.0..v5.12.0
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
pairs=("$@")
if [ ${#pairs[@]} -eq 0 ]; then
  pairs=(github.com/hibiken/asynq@v0.25.1..v0.26.0 github.com/google/uuid@v1.5.0..v1.6.0
    github.com/jackc/pgx/v5@v5.11.0..v5.12.0)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/measure-prompts.XXXXXX")
trap 'rm -rf "$work"' EXIT

# module_dir MODULE@VERSION prints the directory the download unpacked to.
module_dir() {
  local out dir
  out=$(cd "$work" && GOMODCACHE="$work/modcache" GOFLAGS=-modcacherw GO111MODULE=on go mod download -json "$1") || {
    echo "download $1 failed: $out" >&2
    return 1
  }
  dir=$(printf '%s\n' "$out" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    echo "download $1: no directory in: $out" >&2
    return 1
  fi
  printf '%s\n' "$dir"
}

diffs=()
for pair in "${pairs[@]}"; do
  module=${pair%@*}
  versions=${pair#*@}
  from=${versions%..*}
  to=${versions#*..}
  if [ "$module" = "$pair" ] || [ "$from" = "$versions" ] || [ -z "$from" ] || [ -z "$to" ]; then
    echo "bad pair $pair: want module@vA..vB" >&2
    exit 2
  fi
  old=$(module_dir "$module@$from")
  new=$(module_dir "$module@$to")
  name=$(printf '%s' "$module@$from..$to" | tr '/@' '__')
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  cp -R "$old" "$work/tree/a"
  cp -R "$new" "$work/tree/b"
  # diff exits 1 when the trees differ; only 2 means trouble. The measuring
  # test drops the files the pipeline would not review (lock files,
  # generated code, binaries), as the review itself does.
  status=0
  (cd "$work/tree" && diff -ruN a b) >"$work/$name.diff" || status=$?
  if [ "$status" -gt 1 ]; then
    echo "diff $pair failed" >&2
    exit 1
  fi
  echo "$pair: $(grep -c '^diff ' "$work/$name.diff" || true) changed files" >&2
  diffs+=("$work/$name.diff")
done

# The project's own sample diffs, one language each.
for f in "$root"/testdata/diffs/*.diff; do
  [ -e "$f" ] && diffs+=("$f")
done

# The project's own history: the diff of each of its last SELF_COMMITS
# commits (default 10), also generated now, never stored.
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  for sha in $(git -C "$root" rev-list --no-merges --max-count="${SELF_COMMITS:-10}" HEAD); do
    git -C "$root" rev-parse --verify -q "$sha^" >/dev/null || continue
    git -C "$root" diff --no-color -M "$sha^" "$sha" >"$work/reviewfleet_${sha:0:12}.diff"
    diffs+=("$work/reviewfleet_${sha:0:12}.diff")
  done
  echo "reviewfleet: ${SELF_COMMITS:-10} commits of this repository" >&2
fi

list=$(IFS=:; printf '%s' "${diffs[*]}")
cd "$root"
PROMPTS_MEASURE_DIFFS="$list" go test -count=1 -run '^TestMeasurePrompts$' -v ./internal/prompts | tee "$work/out.txt"
echo
sed -n 's/^.*: \(summary .*\)$/\1/p' "$work/out.txt"
