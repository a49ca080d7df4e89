#!/usr/bin/env bash
# A two-minute tour of wb's repo memory in a throwaway git repository (the README's first command).
set -euo pipefail
dir="${1:-$(mktemp -d)/wb-tour}"
mkdir -p "$dir" && cd "$dir"
git init -q
export GIT_AUTHOR_NAME="${GIT_AUTHOR_NAME:-wb tour}" GIT_AUTHOR_EMAIL="${GIT_AUTHOR_EMAIL:-tour@example.invalid}"
export GIT_COMMITTER_NAME="${GIT_COMMITTER_NAME:-wb tour}" GIT_COMMITTER_EMAIL="${GIT_COMMITTER_EMAIL:-tour@example.invalid}"
echo "print('hello')" > app.py && git add app.py && git commit -qm "the user's own code"
show() { printf '\n$ %s\n' "$*"; "$@"; }
show wb init
show wb task add "Parse the config file" --accept "python3 app.py"
show wb task add "Review the parser" --kind review --reviews T-001
show wb task start T-001
show wb note "Chose a hand-written parser: the grammar has four rules."
show wb set next_action="Write tests for the parser edge cases"
show wb task done T-001
printf '\n$ wb set foo=bar      # a bad write is refused before it touches disk\n'
wb set foo=bar || echo "(exit $?)"
show wb status
show wb log
show git log --oneline
show wb validate
show wb replay --verify
printf '\nThe tour repository is %s\n' "$dir"
