#!/usr/bin/env bash
# Regenerates the files the repository keeps from the code: the JSON Schema, the
# shell completions and the man pages. Tests check that they are current.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --quiet
zp=target/debug/zero-policy
"$zp" schema > schemas/zero-policy.schema.json
mkdir -p completions docs/man
"$zp" completions bash > completions/zero-policy.bash
"$zp" completions zsh > completions/_zero-policy
"$zp" completions fish > completions/zero-policy.fish
rm -f docs/man/*.1
"$zp" completions --man-dir docs/man > /dev/null
