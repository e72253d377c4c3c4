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

# hexdirs N LEN writes N directory names of LEN hexadecimal digits, each
# followed by a slash. The digits come from a fixed pseudo-random sequence
# (the Park-Miller generator, exact in awk's doubles): they do not compress,
# are the same on every run, and cost one process instead of one per name.
hexdirs() {
  awk -v n="$1" -v len="$2" 'BEGIN {
    x = 1
    for (d = 0; d < n; d++) {
      for (i = 0; i < len; i++) { x = (x * 48271) % 2147483647; printf "%x", x % 16 }
      printf "/"
    }
  }'
}

# repeatdirs N NAME writes N copies of directory name NAME, each followed
# by a slash.
repeatdirs() {
  local i
  for ((i = 0; i < $1; i++)); do printf "%s/" "$2"; done
}
