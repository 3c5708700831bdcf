#!/usr/bin/env bash
# Whole-process wall time and peak memory for one call:
#   zero-policy hook claude-code   (a Claude Code PreToolUse event on stdin, Bash `ls -la`)
#   zero-policy explain --format json   (the same call)
#   cedar authorize                (an equivalent Cedar policy: as many policies as the
#                                   shipped files have rules, with string `like` conditions)
# on the shipped policies/ and manifests/.
#
#   bash benches/peers/whole-process.sh      (RUNS=100 for more runs; default 50;
#                                             ZP=path/to/zero-policy measures that binary)
#
# Builds zero-policy (release, the root's target/) and installs cedar-policy-cli 4.x
# under benches/peers/target/cli if it is not there. Times the three in
# interleaved rounds (interleave.py; needs python3 and jq), else with hyperfine
# when it is installed, else a loop over `date +%s%N`; /usr/bin/time for peak
# memory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=${RUNS:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ -n ${ZP:-} ]]; then
    zp=$ZP
else
    echo "== building zero-policy (release)" >&2
    (cd "$root" && CARGO_TARGET_DIR="$root/target" cargo build --release --quiet --bin zero-policy)
    zp="$root/target/release/zero-policy"
fi

cli_root="$here/target/cli"
cedar="$cli_root/bin/cedar"
if [[ ! -x $cedar ]] || [[ $("$cedar" --version) != *" 4."* ]]; then
    echo "== installing cedar-policy-cli 4.x into $cli_root" >&2
    cargo install --quiet --locked --root "$cli_root" cedar-policy-cli --version '^4'
fi

if ! command -v hyperfine >/dev/null && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    apt-get install -y -qq hyperfine >/dev/null 2>&1 || true
fi
if [[ ! -x /usr/bin/time ]] && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    apt-get install -y -qq time >/dev/null 2>&1 || true
fi

# ---- the call ----

# A Claude Code PreToolUse event (tests/fixtures/hooks/claude-code/bash-git-status.json)
# with the command `ls -la`.
cat >"$work/event.json" <<'EOF'
{
  "session_id": "abc123",
  "transcript_path": "/home/user/.claude/projects/.../00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
  "cwd": "/home/user/my-project",
  "permission_mode": "default",
  "hook_event_name": "PreToolUse",
  "tool_name": "Bash",
  "tool_input": {
    "command": "ls -la",
    "description": "List files"
  },
  "tool_use_id": "toolu_01ABC123..."
}
EOF

# ---- the equivalent Cedar policy ----

# As many Cedar policies as the shipped files have rules (sandbox and relax), in
# the same proportions of deny, prompt and relax, each with string `like`
# conditions over the call's command and path; the tool's static permission is
# an entity attribute, as in benches/peers/src/main.rs.
rules=0 deny=0 prompt=0 relax=0
for f in "$root"/policies/*.yaml; do
    [[ $f == *.test.yaml ]] && continue
    while read -r kind; do
        rules=$((rules + 1))
        case $kind in
            deny) deny=$((deny + 1)) ;;
            prompt) prompt=$((prompt + 1)) ;;
            relax) relax=$((relax + 1)) ;;
        esac
    done < <(awk '
        /^rules:/ {s = "rules"; next}
        /^relax:/ {s = "relax"; next}
        /^[a-z]/ {s = ""}
        s == "relax" && /^  - id:/ {print "relax"}
        s == "rules" && /^  - id:/ {pending = 1}
        s == "rules" && pending && /^    action:/ {print $2; pending = 0}
    ' "$f")
done
other=$((rules - deny - prompt - relax))
{
    echo '@zp("base")'
    echo 'permit(principal, action == Action::"call", resource) when { resource.allow };'
    for ((k = 0; k < rules; k++)); do
        if ((k < deny + other)); then effect=forbid kind=deny
        elif ((k < deny + other + prompt)); then effect=permit kind=prompt
        else effect=permit kind=relax
        fi
        if [[ $kind == relax ]] && ((k == rules - 1)); then
            # The relax rule this call meets: a read-only listing.
            cond='context.command like "ls *" || context.command == "ls"'
        else
            cond="context.command like \"*danger-$k *\" || context.command like \"rm -rf /x$k*\" || context.path like \"/etc/secret-$k/*\""
        fi
        printf '@rule("r%02d")\n@zp("%s")\n%s(principal, action == Action::"call", resource in Agent::"claude-code")\nwhen { %s };\n' \
            "$k" "$kind" "$effect" "$cond"
    done
} >"$work/policy.cedar"
cat >"$work/entities.json" <<'EOF'
[
  {"uid": {"type": "Tool", "id": "Bash"}, "attrs": {"allow": false},
   "parents": [{"type": "Agent", "id": "claude-code"}]},
  {"uid": {"type": "Agent", "id": "claude-code"}, "attrs": {}, "parents": []}
]
EOF
cat >"$work/context.json" <<'EOF'
{"command": "ls -la", "path": "/home/user/my-project", "mode": "default"}
EOF

hook=("$zp" hook claude-code "$root/policies" "$root/manifests")
explain=("$zp" explain --format json --agent claude-code --tool Bash
    --args '{"command": "ls -la", "description": "List files"}'
    --session workspace=/home/user/my-project "$root/policies" "$root/manifests")
authorize=("$cedar" authorize --policies "$work/policy.cedar" --entities "$work/entities.json"
    --principal 'Agent::"claude-code"' --action 'Action::"call"' --resource 'Tool::"Bash"'
    --context "$work/context.json")

echo "== the shipped files: $rules rules ($deny deny, $prompt prompt, $relax relax, $other other); Cedar: $((rules + 1)) policies" >&2
echo "== one run of each (output, exit code)" >&2
set +e
"${hook[@]}" <"$work/event.json"; echo "  hook exit $?"
"${explain[@]}" >"$work/explain.json"; code=$?
jq -c '{decision, matched: [.matched[]?.id]}' "$work/explain.json" 2>/dev/null || head -c 400 "$work/explain.json"
echo "  explain exit $code"
"${authorize[@]}"; echo "  cedar authorize exit $?"
set -e

# ---- wall time ----

q() { printf '%q ' "$@"; }
hook_cmd="$(q "${hook[@]}") < $(q "$work/event.json")"
explain_cmd="$(q "${explain[@]}")"
authorize_cmd="$(q "${authorize[@]}")"

declare -A median
if command -v python3 >/dev/null && command -v jq >/dev/null; then
    # Interleaved (interleave.py): every round runs each command once, so the
    # machine's drift weighs on all three alike.
    jq -n --arg zp "$zp" --arg event "$work/event.json" \
        --argjson hook "$(printf '%s\n' "${hook[@]}" | jq -R . | jq -s .)" \
        --argjson explain "$(printf '%s\n' "${explain[@]}" | jq -R . | jq -s .)" \
        --argjson cedar "$(printf '%s\n' "${authorize[@]}" | jq -R . | jq -s .)" \
        '[{name: "hook", argv: $hook, stdin: $event},
          {name: "explain", argv: $explain, stdin: "/dev/null"},
          {name: "cedar", argv: $cedar, stdin: "/dev/null"}]' >"$work/spec.json"
    echo "== $runs interleaved rounds (benches/peers/interleave.py)" >&2
    python3 "$here/interleave.py" "$runs" "$work/spec.json" >"$work/times.json"
    for name in hook explain cedar true; do
        median[$name]=$(jq -r --arg n "$name" '.[$n]' "$work/times.json")
    done
elif command -v hyperfine >/dev/null; then
    hyperfine --style basic --warmup 5 --runs "$runs" --ignore-failure \
        --export-json "$work/times.json" \
        -n hook "$hook_cmd >/dev/null" \
        -n explain "$explain_cmd >/dev/null" \
        -n cedar "$authorize_cmd >/dev/null" >&2
    for name in hook explain cedar; do
        median[$name]=$(jq -r --arg n "$name" '.results[] | select(.command == $n) | .median * 1000' "$work/times.json")
    done
else
    for name in hook explain cedar; do
        case $name in
            hook) cmd=$hook_cmd ;;
            explain) cmd=$explain_cmd ;;
            cedar) cmd=$authorize_cmd ;;
        esac
        for ((i = 0; i < 5; i++)); do bash -c "$cmd" >/dev/null 2>&1 || true; done
        : >"$work/$name.times"
        for ((i = 0; i < runs; i++)); do
            t0=$(date +%s%N)
            bash -c "$cmd" >/dev/null 2>&1 || true
            t1=$(date +%s%N)
            echo $((t1 - t0)) >>"$work/$name.times"
        done
        median[$name]=$(sort -n "$work/$name.times" | awk '{a[NR] = $1} END {printf "%.3f", a[int((NR + 1) / 2)] / 1e6}')
    done
fi

# ---- peak memory ----

declare -A rss
peak() { # the largest "Maximum resident set size" (kB) of 5 runs; stdin from $1
    local input=$1 best=0 kb i
    shift
    for ((i = 0; i < 5; i++)); do
        kb=$(/usr/bin/time -v "$@" <"$input" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}')
        ((kb > best)) && best=$kb
    done
    echo "$best"
}
if [[ -x /usr/bin/time ]]; then
    rss[hook]=$(peak "$work/event.json" "${hook[@]}")
    rss[explain]=$(peak /dev/null "${explain[@]}")
    rss[cedar]=$(peak /dev/null "${authorize[@]}")
else
    rss[hook]=? rss[explain]=? rss[cedar]=?
fi

# ---- report ----

echo
echo "whole process, one call, median of $runs runs ($(nproc) cores):"
printf '  %-44s median %8.2f ms   peak RSS %8s kB\n' \
    "zero-policy hook claude-code (Bash ls -la)" "${median[hook]}" "${rss[hook]}" \
    "zero-policy explain --format json" "${median[explain]}" "${rss[explain]}" \
    "cedar authorize ($((rules + 1)) policies)" "${median[cedar]}" "${rss[cedar]}"
awk -v h="${median[hook]}" -v e="${median[explain]}" -v c="${median[cedar]}" \
    'BEGIN {printf "  ratios: hook/cedar %.2f×   explain/cedar %.2f×\n", h / c, e / c}'
if [[ -n ${median[true]:-} ]]; then
    printf '  (starting /bin/true the same way: %.2f ms; interleaved rounds)\n' "${median[true]}"
fi
# How much of the hot path build/hot-functions.txt lists the binary has: the
# linker places those functions together (build.rs); a low share means the list
# is stale (run build/hot-functions.sh) and peak RSS grows back.
if command -v nm >/dev/null; then
    listed=$(grep -vc '^#' "$root/build/hot-functions.txt" || true)
    found=$(nm "$zp" 2>/dev/null | awk 'NR == FNR {if ($0 !~ /^#/) h[$1] = 1; next} ($3 in h) {n++} END {print n + 0}' "$root/build/hot-functions.txt" -)
    echo "  hot functions placed together: $found of the $listed build/hot-functions.txt lists"
fi
