#!/usr/bin/env bash
# The two commands of README.md: `./dev.sh demo` and `./dev.sh test`; and `./dev.sh docs [--check]`, which
# writes (or checks) the reference pages docs/reference/ from the code (`python -m memvault.docs`).
# Each installs everything into .venv first (creating it with the system python3 if absent).
set -euo pipefail
cd "$(dirname "$0")"

ensure_venv() {
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv
    fi
    local stamp
    stamp=".venv/.installed-$(cat pyproject.toml | sha256sum | cut -c1-16)"
    if [ ! -f "$stamp" ]; then
        .venv/bin/python -m pip install --quiet --upgrade pip
        .venv/bin/python -m pip install --quiet -e ".[test]"
        rm -f .venv/.installed-*
        touch "$stamp"
    fi
}

demo() {
    local mv=.venv/bin/memvault
    "$mv" init
    "$mv" daemon status >/dev/null || "$mv" daemon start
    "$mv" note "memvault demo: wrote this note at $(date '+%H:%M') and searched for it"
    "$mv" search "memvault demo note"
    echo "(the daemon keeps indexing ./memory in the background; stop it with: .venv/bin/memvault daemon stop)"
}

typecheck() {
    # mypy reads packages from folders: memvault.vault, .indexer and .search are top-level ones here
    local tree=.venv/typecheck
    rm -rf "$tree" && mkdir -p "$tree/memvault"
    for entry in memvault/*; do ln -s "$PWD/$entry" "$tree/memvault/"; done
    for layer in vault indexer search; do ln -s "$PWD/$layer" "$tree/memvault/$layer"; done
    (cd "$tree" && ../bin/mypy --config-file ../../pyproject.toml -p memvault)
}

run_tests() {
    .venv/bin/ruff check .
    .venv/bin/ruff format --check .
    typecheck
    local rc=0
    # two workers: many tests wait on real subprocesses (daemons, crash points, the MCP server, the model loading)
    .venv/bin/python -m pytest -q -n 2 "$@" || rc=$?
    if [ "$rc" -eq 5 ]; then
        echo "no tests were collected: failing" >&2
        exit 1
    fi
    exit "$rc"
}

ensure_venv
case "${1:-demo}" in
    demo) demo ;;
    test) shift; run_tests "$@" ;;
    docs) shift; exec .venv/bin/python -m memvault.docs "$@" ;;
    typecheck) typecheck ;;
    *) echo "usage: ./dev.sh [demo|test [pytest args]|docs [--check]]" >&2; exit 2 ;;
esac
