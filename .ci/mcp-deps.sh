#!/usr/bin/env bash
# Installs the real MCP servers that tests/mcp_client.rs talks to, and pre-commit:
#   - @modelcontextprotocol/server-everything (npm), started with plain `node`
#   - a Python venv with the PyPI `mcp` SDK, for tests/fixtures/mcp/*.py
#   - @modelcontextprotocol/inspector (npm), whose CLI mode is a real MCP client for
#     tests/gateway.rs
#   - PyPI opentelemetry-proto in the venv, which decodes OTLP payloads in tests/otlp.rs
#   - @modelcontextprotocol/conformance (npm) with Node 22 from npm (node@22), the
#     official MCP conformance suite, for tests/gateway.rs
#   - the real coding agents for tests/real_agents.rs (.ci/agent-deps.sh)
# into $ZP_TEST_DEPS (default: <repo>/target/test-deps). Idempotent: a second run
# with the same pinned versions does nothing.
set -euo pipefail

EVERYTHING_VERSION="2026.8.31"
PY_MCP_VERSION="2.3.0"
INSPECTOR_VERSION="2.12.0"
PRE_COMMIT_VERSION="4.7.0"
OTEL_PROTO_VERSION="1.39.1"
CONFORMANCE_VERSION="0.1.16"
NODE22_VERSION="22.23.3"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="${ZP_TEST_DEPS:-$repo/target/test-deps}"
mkdir -p "$deps"

# npm: server-everything, pinned exactly. The stamp file records what is installed.
node_dir="$deps/node"
node_stamp="$node_dir/.installed-$EVERYTHING_VERSION"
if [[ ! -f "$node_stamp" ]]; then
    command -v node >/dev/null || { echo "mcp-deps: node is required" >&2; exit 1; }
    rm -rf "$node_dir"
    mkdir -p "$node_dir"
    npm install --prefix "$node_dir" --no-audit --no-fund --save-exact \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
    test -f "$node_dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    touch "$node_stamp"
fi

# npm: the MCP Inspector, pinned exactly, in its own folder (it is large).
inspector_dir="$deps/inspector"
inspector_stamp="$inspector_dir/.installed-$INSPECTOR_VERSION"
if [[ ! -f "$inspector_stamp" ]]; then
    rm -rf "$inspector_dir"
    mkdir -p "$inspector_dir"
    npm install --prefix "$inspector_dir" --no-audit --no-fund --save-exact \
        "@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
    test -x "$inspector_dir/node_modules/.bin/mcp-inspector"
    touch "$inspector_stamp"
fi

# npm: the conformance suite and the Node 22 it needs, pinned exactly.
conformance_dir="$deps/conformance"
conformance_stamp="$conformance_dir/.installed-$CONFORMANCE_VERSION-node-$NODE22_VERSION"
if [[ ! -f "$conformance_stamp" ]]; then
    rm -rf "$conformance_dir"
    mkdir -p "$conformance_dir"
    npm install --prefix "$conformance_dir" --no-audit --no-fund --save-exact \
        "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "node@$NODE22_VERSION"
    test -x "$conformance_dir/node_modules/.bin/conformance"
    "$conformance_dir/node_modules/.bin/node" --version
    touch "$conformance_stamp"
fi

# Python: a venv with the MCP SDK, pinned exactly.
venv="$deps/venv"
py_stamp="$venv/.installed-mcp-$PY_MCP_VERSION"
if [[ ! -f "$py_stamp" ]]; then
    python="${PYTHON:-python3}"
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$PY_MCP_VERSION"
    "$venv/bin/python" -c 'from mcp.server.mcpserver import MCPServer'
    touch "$py_stamp"
fi

# pre-commit, for tests/integrations.rs (the repository's .pre-commit-hooks.yaml).
pc_stamp="$venv/.installed-pre-commit-$PRE_COMMIT_VERSION"
if [[ ! -f "$pc_stamp" ]]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "pre-commit==$PRE_COMMIT_VERSION"
    "$venv/bin/pre-commit" --version
    touch "$pc_stamp"
fi

# opentelemetry-proto, for tests/otlp.rs (OTLP payloads decoded by the official definitions).
otel_stamp="$venv/.installed-opentelemetry-proto-$OTEL_PROTO_VERSION"
if [[ ! -f "$otel_stamp" ]]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "opentelemetry-proto==$OTEL_PROTO_VERSION"
    "$venv/bin/python" -c 'from opentelemetry.proto.collector.logs.v1 import logs_service_pb2'
    touch "$otel_stamp"
fi

# The real coding agents (Claude Code, Codex, Gemini CLI, Copilot CLI), pinned.
bash "$repo/.ci/agent-deps.sh"

echo "mcp-deps: ready in $deps (server-everything $EVERYTHING_VERSION, mcp $PY_MCP_VERSION, inspector $INSPECTOR_VERSION, pre-commit $PRE_COMMIT_VERSION, opentelemetry-proto $OTEL_PROTO_VERSION, conformance $CONFORMANCE_VERSION on node $NODE22_VERSION)"
