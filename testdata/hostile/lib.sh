# Helpers for the setup.sh of hostile cases (sourced with set -euo pipefail,
# in the case's work directory, with git isolated from the user's settings).

# repo creates ./repo with one base commit holding README.md and enters it.
repo() {
  git init -q -b main repo
  cd repo
  git config commit.gpgsign false
  printf 'hostile corpus\n' > README.md
  git add -A
  git commit -qm base
  git tag base
}

# commit records every change of the work tree as the head commit.
commit() {
  git add -A
  git commit -qm "${1:-head}"
  git tag -f head >/dev/null
}

# text N writes N bytes of readable lines of text to stdout.
text() {
  { yes "a line of ordinary text, long enough to add up quickly" || true; } | head -c "$1"
}
