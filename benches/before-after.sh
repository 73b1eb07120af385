#!/usr/bin/env bash
# Times the 3D dam break (about 100k particles, the defaults: 4 iterations, XSPH and
# vorticity on) with the code of two revisions, alternating runs on this machine, and
# prints the ratio after / before. `farm-bench` pairs the runs; without it, each
# revision's `pbf bench` figures are printed one after the other.
#
# Usage: benches/before-after.sh BEFORE_REV [AFTER_REV (default: the working tree)]
set -euo pipefail
before=${1:?usage: benches/before-after.sh BEFORE_REV [AFTER_REV]}
after=${2:-}
root=$(git rev-parse --show-toplevel)
work=${TMPDIR:-/tmp}/pbf-before-after
mkdir -p "$work"

build() { # REV DIR -> path of the built pbf binary
    local rev=$1 dir=$2
    if [ -z "$rev" ]; then
        (cd "$root" && cargo build --release -q -p pbf-cli --target-dir "$work/target-now")
        echo "$work/target-now/release/pbf"
        return
    fi
    rm -rf "$dir"
    git -C "$root" worktree add -f -q "$dir" "$rev"
    (cd "$dir" && cargo build --release -q -p pbf-cli --target-dir "$work/target-$rev")
    git -C "$root" worktree remove --force "$dir"
    echo "$work/target-$rev/release/pbf"
}

old=$(build "$before" "$work/tree-before")
new=$(build "$after" "$work/tree-after")
args=(bench --particles 100000 --steps 20)
if command -v farm-bench >/dev/null; then
    farm-bench -n 7 --timeout 1200 --vs "$old ${args[*]}" -- "$new" "${args[@]}"
else
    echo "before ($before):"; "$old" "${args[@]}"
    echo "after (${after:-working tree}):"; "$new" "${args[@]}"
fi
