# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_zero_policy_global_optspecs
    string join \n h/help V/version
end

function __fish_zero_policy_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_zero_policy_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_zero_policy_using_subcommand
    set -l cmd (__fish_zero_policy_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c zero-policy -n "__fish_zero_policy_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -s V -l version -d 'Print version'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "lint" -d 'Load every file, run every check, print diagnostics (exit 1 on errors)'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "explain" -d 'Show how one call is decided, step by step'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "test" -d 'Run every `tests:` case and every rule example (ends with `N passed, M failed`)'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "tools" -d 'List the registry: every tool with its source, scope, side effect and permission'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "schema" -d 'Print the JSON Schema of the document format'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "hook" -d 'Answer one agent hook event on stdin, in the agent\'s protocol (exit per agent).'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "init" -d 'Install the hook in an agent\'s settings file (exit 2 if that file is not JSON).'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "serve" -d 'Serve MCP over stdio (or `--listen ADDR`) in front of the manifests\' MCP servers.'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "pin" -d 'Pin each upstream MCP tool\'s definition into `zero-policy.lock` (exit 2 if a server failed)'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "import" -d 'Turn Claude Code or Gemini CLI permission rules into a policy with tests.'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "doctor" -d 'Check the policy, confinement on this machine and each agent\'s hook (exit 1 on a failure)'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "run" -d 'Decide a shell call through the dispatch path, then run it confined by the kernel.'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "bundle" -d 'Build, sign and verify signed policy bundles (docs/fleet.md)'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "log" -d 'Check a hash-chained decision log (`log verify FILE`)'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "completions" -d 'Print shell completions (bash, zsh, fish, elvish, powershell) or the man pages.'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "__confine" -d 'Confine this process to the envelope in `ZERO_POLICY_ENVELOPE`, then exec PROGRAM'
complete -c zero-policy -n "__fish_zero_policy_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand lint" -l format -d 'Output format' -r -f -a "human\t'miette reports with labels on the exact span, and a summary line'
json\t'One JSON document listing every diagnostic'
sarif\t'SARIF 2.1.0, for code-scanning tools'
github\t'GitHub Actions workflow commands (`::error file=…`)'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand lint" -l explain -d 'Print what a diagnostic code means and how to fix it, then exit' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand lint" -l deny-warnings -d 'Fail (exit 1) on warnings too'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand lint" -l verbose -d 'Also say how each expression is evaluated: planned, or by the `cel` crate and why'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand lint" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -l tool -d 'The tool\'s final name' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -l args -d 'The arguments as a JSON object' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -l call -d 'A JSON file with `{tool, args, session}`; `-` for standard input' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -l session -d 'Session settings: `mode=plan`, `workspace=/path`, `scopes=read_only,write`, `labels.KEY=VALUE`' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -l agent -d 'The agent the call is made for (`claude-code`, `codex`, …): its own tools resolve first' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -l format -d 'Output format' -r -f -a "human\t'Readable text'
json\t'One JSON document'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -l confined -d 'Decide as `zero-policy run` does: the call will run confined by the kernel (`call.confined` is true for a shell tool)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -l run -d 'Also run the call, if it is an allowed shell call, confined and traced, and show its exit status and what the sandbox refused it (implies `--confined`; needs strace)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -l connect -d 'Connect to the declared MCP servers first, so calls to their tools can be decided'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -l host -d 'Decide as a hook on this machine does: paths are also checked as the files they reach (links resolved) and searches against the tree they would walk; the account shows what was seen. Without it the decision is the same on every machine'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand test" -l format -d 'Output format' -r -f -a "human\t'Readable text'
json\t'One JSON document'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand test" -l min-coverage -d 'Fail when fewer than this percent of rules are matched by some test or example' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand test" -l coverage -d 'List the rules that no test or example matched'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand test" -l connect -d 'Connect to the declared MCP servers first, so cases calling their tools run too'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand test" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand tools" -l format -d 'Output format' -r -f -a "human\t'Readable text'
json\t'One JSON document'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand tools" -l connect -d 'Connect to the declared MCP servers, register their tools, and list skipped servers with their reasons'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand tools" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand schema" -l format -d 'Output format (the schema is always JSON)' -r -f -a "json\t'JSON'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand schema" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand hook" -l bundle -d 'Take the policy from this signed bundle instead of files: a file (its signature is `FILE.minisig`) or an `https://` URL (its signature at `URL.minisig`; fetched into the cache, then asked for again every `ZERO_POLICY_BUNDLE_POLL` seconds, default 300, in the background). Needs `--key`. A bundle that does not verify, or was signed before the one in force, is refused and the last good one kept; with none, every call is blocked' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand hook" -l key -d 'The minisign public key the bundle must be signed with: a `.pub` file, or the key itself (`RW…`)' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand hook" -l bundle-ca -d 'For a bundle at an `https://` URL: a PEM file of CA certificates to trust besides the system\'s' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand hook" -l via -d 'Ask a running `zero-policy serve --hooks` for the answer instead of loading the policy here: its URL, `http://127.0.0.1:PORT`. The token, if the service has one, is read from `ZERO_POLICY_HOOK_TOKEN`. If the service does not answer within 10 s, the call is blocked' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand hook" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand init" -l http -d 'Send the agent\'s events to a running `zero-policy serve --hooks` at this URL (`http://127.0.0.1:PORT`): Claude Code gets an `http` hook that blocks when the service is down, the other agents `zero-policy hook AGENT --via URL`, which blocks the call when the service does not answer (Copilot CLI skips a loopback `http` hook unless `COPILOT_HOOK_ALLOW_LOCALHOST=1` is set where it runs). Without it, an `http` hook installed before is turned back into the command' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand init" -l user -d 'Install in the user\'s settings, under the home folder'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand init" -l project -d 'Install in this project\'s settings, under the current folder (the default)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand init" -l managed -d 'Install in the agent\'s admin-managed file, for every user of this machine (needs root): Claude Code `/etc/claude-code/managed-settings.d/zero-policy.json`, Codex `/etc/codex/requirements.toml`, Gemini CLI `/etc/gemini-cli/settings.json` (`$GEMINI_CLI_SYSTEM_SETTINGS_PATH`), Cursor `/etc/cursor/hooks.json` (the macOS folders under `/Library/Application Support/`). Copilot CLI takes no hooks from its managed settings, and is refused. `ZERO_POLICY_MANAGED_ROOT` puts these paths under another folder (for packaging and tests)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand init" -l lock -d 'With `--managed`: let only managed hooks run, so a user cannot take the hook out or run around it: Claude Code `allowManagedHooksOnly`, Codex `allow_managed_hooks_only`; Gemini CLI gets `hooksConfig.enabled: true`, which overrides a user\'s switch to turn every hook off (it has no managed-only switch). Every other hook of those agents\' users stops running'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand init" -l dry-run -d 'Print the change without writing anything'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand init" -l trust -d 'Record the trust the agent needs before it runs the hook. Codex: the hook, by its hash, in Codex\'s `config.toml` (as its `/hooks` review does), and for a project hook the project. Gemini CLI and Copilot CLI: the project folder (`~/.gemini/trustedFolders.json`, `trustedFolders` in `~/.copilot/config.json`). Without it, `init` prints that step left: these agents skip a hook that is not trusted'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand serve" -l listen -d 'Serve streamable HTTP on this address (endpoint `/mcp`) instead of stdio. A non-loopback address needs `--token-env`' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand serve" -l hooks -d 'Answer agents\' hook events over HTTP on this address instead of serving MCP: `POST /hooks/AGENT` with the agent\'s event, answered as `zero-policy hook AGENT` answers it (the policy as `hook` reads it). A non-loopback address needs a token' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand serve" -l token-env -d 'With `--listen` or `--hooks`: the environment variable holding the bearer token every request must send (`Authorization: Bearer TOKEN`; else 401, or for `--hooks` the agent\'s blocking answer). `--hooks` reads `ZERO_POLICY_HOOK_TOKEN` when this is not given' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand serve" -l allow-origin -d 'With `--listen`: a browser origin allowed besides loopback ones (`https://app.example.com`); repeatable. Other origins get 403' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand serve" -l bundle -d 'Take the policy from this signed bundle instead of files: a file (its signature is `FILE.minisig`) or an `https://` URL (its signature at `URL.minisig`; fetched into the cache, then asked for again every `ZERO_POLICY_BUNDLE_POLL` seconds, default 300, in the background). Needs `--key`. A bundle that does not verify, or was signed before the one in force, is refused and the last good one kept; with none, every call is blocked' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand serve" -l key -d 'The minisign public key the bundle must be signed with: a `.pub` file, or the key itself (`RW…`)' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand serve" -l bundle-ca -d 'For a bundle at an `https://` URL: a PEM file of CA certificates to trust besides the system\'s' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand pin" -l format -d 'Output format' -r -f -a "human\t'Readable text'
json\t'One JSON document'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand pin" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand import" -l out -d 'The folder to write the policy and its tests into (created if missing)' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand import" -l manifests -d 'Manifests to check the examples against; default: the shipped ones' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand import" -l format -d 'Output format of the report' -r -f -a "human\t'Readable text'
json\t'One JSON document'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand doctor" -l format -d 'Output format: `human`, or `json` (`{"ok", "checks": [{"check", "level", "detail"}]}`)' -r -f -a "human\t'Readable text'
json\t'One JSON document'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand doctor" -l bundle -d 'Take the policy from this signed bundle instead of files: a file (its signature is `FILE.minisig`) or an `https://` URL (its signature at `URL.minisig`; fetched into the cache, then asked for again every `ZERO_POLICY_BUNDLE_POLL` seconds, default 300, in the background). Needs `--key`. A bundle that does not verify, or was signed before the one in force, is refused and the last good one kept; with none, every call is blocked' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand doctor" -l key -d 'The minisign public key the bundle must be signed with: a `.pub` file, or the key itself (`RW…`)' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand doctor" -l bundle-ca -d 'For a bundle at an `https://` URL: a PEM file of CA certificates to trust besides the system\'s' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -s c -d 'The script to decide and run, as the shared shell tool `bash` runs it' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l agent -d 'The agent the call is made for (`claude-code`, `codex`, …); it is recorded in `session.agent`' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l session -d 'Session settings: `mode=plan`, `workspace=/path`, `labels.KEY=VALUE` (the workspace defaults to the current folder)' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l shell -d 'The shell that runs `-c SCRIPT` (default: bash where it is installed, else sh)' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l policy -d 'Policy and manifest files or folders, `:`-separated in one argument or repeated; default `$ZERO_POLICY_PATH`, else `~/.config/zero-policy/`, else the built-in default' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l ticket -d 'A ticket left by `zero-policy hook` for a call the person approved in the agent: a `prompt` is then taken as approved (a deny stays a deny). Used once' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l cwd-fd -d 'Write the folder where the script ended to this open descriptor (the hooks\' rewrite keeps the agent\'s shell there)' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l bundle -d 'Take the policy from this signed bundle instead of files: a file (its signature is `FILE.minisig`) or an `https://` URL (its signature at `URL.minisig`; fetched into the cache, then asked for again every `ZERO_POLICY_BUNDLE_POLL` seconds, default 300, in the background). Needs `--key`. A bundle that does not verify, or was signed before the one in force, is refused and the last good one kept; with none, every call is blocked' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l key -d 'The minisign public key the bundle must be signed with: a `.pub` file, or the key itself (`RW…`)' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l bundle-ca -d 'For a bundle at an `https://` URL: a PEM file of CA certificates to trust besides the system\'s' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l findings -d 'Trace the confined call (with strace) and report what the sandbox refused it: on stderr, and as `blocked` in the decision log line, written when it ends'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -l print-envelope -d 'Decide and print the envelope as JSON instead of running the call'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and not __fish_seen_subcommand_from build sign verify fetch help" -s h -l help -d 'Print help'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and not __fish_seen_subcommand_from build sign verify fetch help" -f -a "build" -d 'Pack the YAML files of folders and files into one bundle (same input, same bytes)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and not __fish_seen_subcommand_from build sign verify fetch help" -f -a "sign" -d 'Sign a bundle with a minisign secret key, writing `FILE.minisig`'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and not __fish_seen_subcommand_from build sign verify fetch help" -f -a "verify" -d 'Check a bundle\'s signature (`FILE.minisig`) and every digest in it'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and not __fish_seen_subcommand_from build sign verify fetch help" -f -a "fetch" -d 'Fetch a bundle from an `https://` URL into the cache now, as `hook`, `run` and `serve` do on their schedule'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and not __fish_seen_subcommand_from build sign verify fetch help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from build" -s o -l output -d 'The bundle file to write' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from build" -l version -d 'The bundle\'s version; default `sha256:` and a hash of its files' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from build" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from sign" -l key -d 'The minisign secret key file' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from sign" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from verify" -l key -d 'The minisign public key: a `.pub` file, or the key itself (`RW…`)' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from verify" -l format -d 'Output format' -r -f -a "human\t'Readable text'
json\t'One JSON document'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from fetch" -l key -d 'The minisign public key: a `.pub` file, or the key itself (`RW…`)' -r
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from fetch" -l ca -d 'A PEM file of CA certificates to trust besides the system\'s' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from fetch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "build" -d 'Pack the YAML files of folders and files into one bundle (same input, same bytes)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "sign" -d 'Sign a bundle with a minisign secret key, writing `FILE.minisig`'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "verify" -d 'Check a bundle\'s signature (`FILE.minisig`) and every digest in it'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "fetch" -d 'Fetch a bundle from an `https://` URL into the cache now, as `hook`, `run` and `serve` do on their schedule'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and not __fish_seen_subcommand_from verify diff help" -s h -l help -d 'Print help'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and not __fish_seen_subcommand_from verify diff help" -f -a "verify" -d 'Check a log written with `settings.log.chain: true`: report the first removed, reordered, edited or unchained line'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and not __fish_seen_subcommand_from verify diff help" -f -a "diff" -d 'Compare the decisions in force with the shadow policy\'s (`settings.shadow`), line by line: counts by change (allow → deny …), then each call that changed with the rules that made the difference'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and not __fish_seen_subcommand_from verify diff help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and __fish_seen_subcommand_from verify" -l format -d 'Output format' -r -f -a "human\t'Readable text'
json\t'One JSON document'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and __fish_seen_subcommand_from verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and __fish_seen_subcommand_from diff" -l format -d 'Output format' -r -f -a "human\t'Readable text'
json\t'One JSON document'"
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and __fish_seen_subcommand_from diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and __fish_seen_subcommand_from help" -f -a "verify" -d 'Check a log written with `settings.log.chain: true`: report the first removed, reordered, edited or unchained line'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and __fish_seen_subcommand_from help" -f -a "diff" -d 'Compare the decisions in force with the shadow policy\'s (`settings.shadow`), line by line: counts by change (allow → deny …), then each call that changed with the rules that made the difference'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand log; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand completions" -l man-dir -d 'Write every man page (zero-policy.1, zero-policy-lint.1, …) into this folder' -r -F
complete -c zero-policy -n "__fish_zero_policy_using_subcommand completions" -l man -d 'Print the main man page (roff) instead'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand __confine" -s h -l help -d 'Print help'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "lint" -d 'Load every file, run every check, print diagnostics (exit 1 on errors)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "explain" -d 'Show how one call is decided, step by step'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "test" -d 'Run every `tests:` case and every rule example (ends with `N passed, M failed`)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "tools" -d 'List the registry: every tool with its source, scope, side effect and permission'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "schema" -d 'Print the JSON Schema of the document format'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "hook" -d 'Answer one agent hook event on stdin, in the agent\'s protocol (exit per agent).'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "init" -d 'Install the hook in an agent\'s settings file (exit 2 if that file is not JSON).'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "serve" -d 'Serve MCP over stdio (or `--listen ADDR`) in front of the manifests\' MCP servers.'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "pin" -d 'Pin each upstream MCP tool\'s definition into `zero-policy.lock` (exit 2 if a server failed)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "import" -d 'Turn Claude Code or Gemini CLI permission rules into a policy with tests.'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "doctor" -d 'Check the policy, confinement on this machine and each agent\'s hook (exit 1 on a failure)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "run" -d 'Decide a shell call through the dispatch path, then run it confined by the kernel.'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "bundle" -d 'Build, sign and verify signed policy bundles (docs/fleet.md)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "log" -d 'Check a hash-chained decision log (`log verify FILE`)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "completions" -d 'Print shell completions (bash, zsh, fish, elvish, powershell) or the man pages.'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "__confine" -d 'Confine this process to the envelope in `ZERO_POLICY_ENVELOPE`, then exec PROGRAM'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and not __fish_seen_subcommand_from lint explain test tools schema hook init serve pin import doctor run bundle log completions __confine help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "build" -d 'Pack the YAML files of folders and files into one bundle (same input, same bytes)'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "sign" -d 'Sign a bundle with a minisign secret key, writing `FILE.minisig`'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "verify" -d 'Check a bundle\'s signature (`FILE.minisig`) and every digest in it'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "fetch" -d 'Fetch a bundle from an `https://` URL into the cache now, as `hook`, `run` and `serve` do on their schedule'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and __fish_seen_subcommand_from log" -f -a "verify" -d 'Check a log written with `settings.log.chain: true`: report the first removed, reordered, edited or unchained line'
complete -c zero-policy -n "__fish_zero_policy_using_subcommand help; and __fish_seen_subcommand_from log" -f -a "diff" -d 'Compare the decisions in force with the shadow policy\'s (`settings.shadow`), line by line: counts by change (allow → deny …), then each call that changed with the rules that made the difference'
