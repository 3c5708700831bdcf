#!/usr/bin/env bash
# Installs the real coding agents that tests/real_agents.rs drives offline (each
# pointed at a stand-in model API on 127.0.0.1), pinned exactly, into
# $ZP_TEST_DEPS/agents (default: <repo>/target/test-deps/agents):
#   - Claude Code (@anthropic-ai/claude-code)
#   - Codex (@openai/codex)
#   - Gemini CLI (@google/gemini-cli)
#   - Copilot CLI (@github/copilot)
# Idempotent: a second run with the same pinned versions does nothing.
set -euo pipefail

CLAUDE_CODE_VERSION="2.1.332"
CODEX_VERSION="0.171.0"
GEMINI_CLI_VERSION="0.61.0"
COPILOT_VERSION="1.0.102"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="${ZP_TEST_DEPS:-$repo/target/test-deps}"
dir="$deps/agents"
stamp="$dir/.installed-$CLAUDE_CODE_VERSION-$CODEX_VERSION-$GEMINI_CLI_VERSION-$COPILOT_VERSION"
if [[ ! -f "$stamp" ]]; then
    command -v node >/dev/null || { echo "agent-deps: node is required" >&2; exit 1; }
    rm -rf "$dir"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --save-exact \
        "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
        "@openai/codex@$CODEX_VERSION" \
        "@google/gemini-cli@$GEMINI_CLI_VERSION" \
        "@github/copilot@$COPILOT_VERSION"
    for bin in claude codex gemini copilot; do
        test -x "$dir/node_modules/.bin/$bin"
    done
    # The agents run as an unprivileged user in the tests (Claude Code refuses to
    # skip permissions as root): let everyone read and run them.
    chmod -R a+rX "$dir"
    touch "$stamp"
fi

echo "agent-deps: ready in $dir (claude-code $CLAUDE_CODE_VERSION, codex $CODEX_VERSION, gemini-cli $GEMINI_CLI_VERSION, copilot $COPILOT_VERSION)"
