//! The hook in the real agents: Claude Code, Codex, Gemini CLI and Copilot CLI,
//! installed from npm by `.ci/agent-deps.sh` (pinned), each driven offline by
//! a stand-in model API on 127.0.0.1 (`tests/fixtures/agents/model_api.py`)
//! that makes the agent call tools and then stop.
//!
//! `zero-policy init AGENT` installs the hook in a fresh home and project; the
//! agent runs non-interactively as an unprivileged user (Claude Code refuses
//! to skip permissions as root, and `zero-policy run` needs a user the process
//! limit binds). What is checked is what happened: the tool results the agent
//! sent back to the model, files that were or were not written, and the
//! decision log, never only what the policy decided.
//!
//! Without the agents installed these tests fail under `CI=true`, and say why
//! and pass elsewhere (a developer machine without the 1 GB of agents).
#![expect(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;

const EXE: &str = env!("CARGO_BIN_EXE_zero-policy");
const MODEL_API: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/agents/model_api.py"
);
/// The uid and gid the agents run as when the tests run as root (`nobody`).
const UNPRIVILEGED: u32 = 65534;
/// An agent that has not finished by then is taken as hung.
const AGENT_TIMEOUT: Duration = Duration::from_secs(180);
const CANARY: &str = "ZP-CANARY-PRIVATE-KEY-7f3a";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
    Copilot,
}

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
            Agent::Copilot => "copilot",
        }
    }

    fn bin(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini",
            Agent::Copilot => "copilot",
        }
    }

    /// The version `.ci/agent-deps.sh` installs.
    fn version(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "2.1.332",
            Agent::Codex => "0.171.0",
            Agent::GeminiCli => "0.61.0",
            Agent::Copilot => "1.0.102",
        }
    }

    /// Whether the agent's shell keeps its working folder from one call to the next.
    fn keeps_cwd(self) -> bool {
        self == Agent::ClaudeCode
    }

    /// A call of the agent's shell tool, as its model would make it.
    fn shell(self, command: &str) -> Value {
        match self {
            Agent::ClaudeCode => {
                json!({"name": "Bash", "input": {"command": command, "description": "run"}})
            }
            Agent::Codex => json!({"name": "exec_command", "input": {"cmd": command}}),
            Agent::GeminiCli => json!({"name": "run_shell_command", "input": {"command": command}}),
            Agent::Copilot => {
                json!({"name": "bash", "input": {"command": command, "description": "run"}})
            }
        }
    }

    /// A call of the agent's file-writing tool, where it has a plain one.
    fn write_file(self, path: &Path, content: &str) -> Option<Value> {
        let path = path.display().to_string();
        match self {
            Agent::ClaudeCode => {
                Some(json!({"name": "Write", "input": {"file_path": path, "content": content}}))
            }
            Agent::GeminiCli => Some(
                json!({"name": "write_file", "input": {"file_path": path, "content": content}}),
            ),
            Agent::Copilot => {
                Some(json!({"name": "create", "input": {"path": path, "file_text": content}}))
            }
            // Codex writes files with `apply_patch`, through its shell.
            Agent::Codex => None,
        }
    }
}

/// The installed agents' `node_modules/.bin`, or `None` (with the reason
/// printed) outside CI when they are not installed. Under `CI=true` a missing
/// agent fails the test.
fn agents_bin() -> Option<PathBuf> {
    let bin = common::deps_dir().join("agents/node_modules/.bin");
    let all = ["claude", "codex", "gemini", "copilot"]
        .iter()
        .all(|b| bin.join(b).exists());
    if all {
        return Some(bin);
    }
    let why = format!(
        "the real agents are not installed in {}: run `.ci/agent-deps.sh`",
        bin.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
    eprintln!("skipped: {why}");
    None
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Gives `path` and everything under it to the unprivileged user.
fn chown_tree(path: &Path) {
    std::os::unix::fs::lchown(path, Some(UNPRIVILEGED), Some(UNPRIVILEGED)).unwrap();
    if path.is_dir() && !path.is_symlink() {
        for e in std::fs::read_dir(path).unwrap() {
            chown_tree(&e.unwrap().path());
        }
    }
}

/// The stand-in model API, stopped on drop.
struct ModelApi {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl ModelApi {
    fn start(dir: &Path, script: &[Value]) -> ModelApi {
        let script_file = dir.join("script.json");
        std::fs::write(&script_file, serde_json::to_string(script).unwrap()).unwrap();
        let log = dir.join("requests.jsonl");
        let port_file = dir.join("port");
        let child = Command::new("python3")
            .arg(MODEL_API)
            .args([&script_file, &log, &port_file])
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let port = loop {
            if let Some(p) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                break p;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the stand-in model API did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        ModelApi { child, port, log }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request the agent made, as `{path, body}`.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The tool results the agent sent back, in order, as text: from the
    /// request that carries the most of them.
    fn tool_results(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| results_of(&r["body"]))
            .max_by_key(Vec::len)
            .unwrap_or_default()
    }
}

impl Drop for ModelApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The tool results in one request body, in any of the three wire formats.
fn results_of(body: &Value) -> Vec<String> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| p["text"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    };
    let mut out = Vec::new();
    // Anthropic Messages.
    for m in body["messages"].as_array().into_iter().flatten() {
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" {
                out.push(text(&b["content"]));
            }
        }
    }
    // OpenAI Responses.
    for i in body["input"].as_array().into_iter().flatten() {
        if i["type"] == "function_call_output" {
            out.push(text(&i["output"]));
        }
    }
    // Gemini generateContent.
    for c in body["contents"].as_array().into_iter().flatten() {
        for p in c["parts"].as_array().into_iter().flatten() {
            if let Some(r) = p.get("functionResponse") {
                let r = &r["response"];
                out.push(match (r["output"].as_str(), r["error"].as_str()) {
                    (Some(t), _) | (None, Some(t)) => t.to_string(),
                    (None, None) => r.to_string(),
                });
            }
        }
    }
    out
}

/// What one run of an agent left behind.
struct Outcome {
    /// The tool results, in the order of the calls.
    results: Vec<String>,
    /// The decision log's lines.
    log: Vec<Value>,
    /// The agent's exit status, stdout and stderr.
    status: Option<i32>,
    output: String,
}

impl Outcome {
    fn result(&self, i: usize) -> &str {
        self.results.get(i).map_or_else(
            || {
                panic!(
                    "no tool result {i}: {:?}\nagent output:\n{}",
                    self.results, self.output
                )
            },
            String::as_str,
        )
    }

    /// The hook's log lines (not `run`'s) for the agent.
    fn hook_lines(&self, agent: Agent) -> Vec<&Value> {
        let front = format!("hook:{}", agent.name());
        self.log.iter().filter(|l| l["front"] == front).collect()
    }
}

/// A home folder and a project of the test's own, for one agent.
struct World {
    agent: Agent,
    bin: PathBuf,
    root: tempfile::TempDir,
    /// Extra environment for the agent (and so for its hook).
    env: Vec<(String, String)>,
    /// Extra arguments for `init` (`--http URL`).
    init_extra: Vec<String>,
    /// The hook is installed by hand: `run` does not run `init`.
    no_init: bool,
}

impl World {
    fn new(agent: Agent, bin: PathBuf) -> World {
        let root = tempfile::Builder::new()
            .prefix(&format!("zp-agent-{}-", agent.name()))
            .tempdir()
            .unwrap();
        let w = World {
            agent,
            bin,
            root,
            env: Vec::new(),
            init_extra: Vec::new(),
            no_init: false,
        };
        std::fs::create_dir_all(w.home().join(".ssh")).unwrap();
        std::fs::create_dir_all(w.project()).unwrap();
        std::fs::write(w.home().join(".ssh/id_rsa"), format!("{CANARY}\n")).unwrap();
        w
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// A command run as the agents' user, in the project, with a clean environment.
    fn command(&self, program: &Path) -> Command {
        let mut c = if running_as_root() {
            let mut c = Command::new("setpriv");
            c.args([
                format!("--reuid={UNPRIVILEGED}"),
                format!("--regid={UNPRIVILEGED}"),
                "--clear-groups".into(),
            ])
            .arg(program);
            c
        } else {
            Command::new(program)
        };
        c.current_dir(self.project())
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LANG", "C.UTF-8")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null());
        c
    }

    /// `zero-policy init AGENT --trust`, as the agent's user: the hook, and
    /// the trust the agent needs to run it (Codex: the hook's hash and the
    /// project; Gemini CLI and Copilot CLI: the project folder).
    fn init(&self) {
        let args = ["init", self.agent.name(), "--trust"];
        self.own();
        let out = self
            .command(Path::new(EXE))
            .args(args)
            .args(&self.init_extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "init failed (run as root, the tests run the agents and zero-policy as uid \
             {UNPRIVILEGED}, who must be able to reach the build and target/test-deps): {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn own(&self) {
        if running_as_root() {
            chown_tree(self.root.path());
        }
    }

    /// The agent's own settings: its model pointed at the stand-in. (Trust
    /// is left to `init --trust`.)
    fn configure(&self, api: &ModelApi) {
        let home = self.home();
        match self.agent {
            Agent::ClaudeCode | Agent::Copilot => {}
            Agent::Codex => {
                std::fs::create_dir_all(home.join(".codex")).unwrap();
                let config = format!(
                    "model = \"stand-in\"\nmodel_provider = \"standin\"\n\n\
                     [model_providers.standin]\nname = \"stand-in\"\n\
                     base_url = \"{}/v1\"\nwire_api = \"responses\"\n",
                    api.url()
                );
                std::fs::write(home.join(".codex/config.toml"), config).unwrap();
            }
            Agent::GeminiCli => {
                std::fs::create_dir_all(home.join(".gemini")).unwrap();
                std::fs::write(
                    home.join(".gemini/settings.json"),
                    json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
                )
                .unwrap();
            }
        }
    }

    /// Runs the agent once on `script` (its model's tool calls, in order).
    fn run(&self, script: &[Value]) -> Outcome {
        let model_dir = tempfile::tempdir().unwrap();
        let api = ModelApi::start(model_dir.path(), script);
        self.configure(&api);
        if !self.no_init {
            self.init();
        }
        self.own();
        let bin = self.bin.join(self.agent.bin());
        let mut c = self.command(&bin);
        let prompt = "Do the task.";
        match self.agent {
            Agent::ClaudeCode => {
                c.args(["-p", prompt, "--allowedTools", "Bash,Write"])
                    .env("ANTHROPIC_BASE_URL", api.url())
                    .env("ANTHROPIC_API_KEY", "sk-stand-in")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .env("DISABLE_AUTOUPDATER", "1");
            }
            Agent::Codex => {
                c.args(["exec", "--skip-git-repo-check", prompt]);
            }
            Agent::GeminiCli => {
                c.args(["--approval-mode", "yolo", "-p", prompt])
                    .env("GEMINI_API_KEY", "stand-in")
                    .env("GOOGLE_GEMINI_BASE_URL", api.url());
            }
            Agent::Copilot => {
                c.args(["-p", prompt, "--allow-all-tools"])
                    .env("COPILOT_PROVIDER_BASE_URL", api.url())
                    .env("COPILOT_PROVIDER_TYPE", "anthropic")
                    .env("COPILOT_PROVIDER_API_KEY", "stand-in")
                    .env("COPILOT_MODEL", "claude-sonnet-4.5")
                    .env("COPILOT_OFFLINE", "1");
            }
        }
        let out_file = model_dir.path().join("agent.out");
        let out = std::fs::File::create(&out_file).unwrap();
        let mut child = c
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        let started = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if started.elapsed() > AGENT_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{} hung for {AGENT_TIMEOUT:?}:\n{}",
                    self.agent.name(),
                    std::fs::read_to_string(&out_file).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let log =
            std::fs::read_to_string(self.home().join(".local/state/zero-policy/decisions.jsonl"))
                .unwrap_or_default()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        Outcome {
            results: api.tool_results(),
            log,
            status: status.code(),
            output: std::fs::read_to_string(&out_file).unwrap_or_default(),
        }
    }
}

/// The denied call's result says zero-policy blocked it and holds no secret.
fn assert_blocked(o: &Outcome, i: usize, why: &str) {
    let r = o.result(i);
    assert!(
        r.contains("zero-policy:") && r.contains(why),
        "call {i} was not blocked by the hook with `{why}`: {r}\nagent output:\n{}",
        o.output
    );
    assert!(!r.contains(CANARY), "call {i} leaked the key: {r}");
}

/// Shell and file tools: the key is not read, writes to the home folder do
/// not happen, the safe command runs (through `zero-policy run`) with its
/// output, exit status and working folder as without the hook.
fn shell_and_files(agent: Agent) {
    let Some(bin) = agents_bin() else { return };
    let w = World::new(agent, bin);
    let bashrc = w.home().join(".bashrc");
    // The agent's own settings, where `init` put the hook: a write there
    // would take the hook out.
    let settings = w.project().join(match agent {
        Agent::ClaudeCode => ".claude/settings.json",
        Agent::Codex => ".codex/hooks.json",
        Agent::GeminiCli => ".gemini/settings.json",
        Agent::Copilot => ".github/hooks/zero-policy.json",
    });
    let mut script = vec![
        agent.shell("cat ~/.ssh/id_rsa"),
        agent.shell("echo pwned > ~/.bashrc"),
        agent.shell("echo zp-safe-ok > marker.txt && mkdir -p sub && cd sub && pwd"),
        agent.shell("pwd; exit 3"),
    ];
    script.extend(agent.write_file(&settings, "{}"));
    let o = w.run(&script);

    assert_blocked(&o, 0, "credential files are off limits");
    assert_blocked(&o, 1, "");
    assert!(!bashrc.exists(), "~/.bashrc was written:\n{}", o.output);

    let marker = w.project().join("marker.txt");
    assert_eq!(
        std::fs::read_to_string(&marker).ok().as_deref(),
        Some("zp-safe-ok\n"),
        "the safe command did not run: {:?}\n{}",
        o.results,
        o.output
    );
    let sub = w.project().join("sub").display().to_string();
    assert!(
        o.result(2).contains(&sub),
        "the safe command's output: {}",
        o.result(2)
    );
    // The next call's status is its own, and it starts where the agent's
    // shell would have started it without the hook: Claude Code's shell keeps
    // its working folder between calls; Codex, Gemini CLI and Copilot CLI
    // start each call in the project.
    let next = if agent.keeps_cwd() {
        sub.clone()
    } else {
        w.project().display().to_string()
    };
    let r3 = o.result(3);
    assert!(
        r3.lines()
            .any(|l| l.trim_start_matches("Output: ").trim() == next)
            && r3.contains('3'),
        "the next call did not start in `{next}` or lost its exit status: {r3}"
    );
    if script.len() > 4 {
        assert_blocked(&o, 4, "the file controls what runs next");
        let text = std::fs::read_to_string(&settings).unwrap();
        assert!(
            text.contains("zero-policy") && text.contains("hook"),
            "the agent's settings were overwritten: {text}"
        );
    }

    // The log: one line per decision, the denials as denials, and the safe
    // commands rewritten to run confined (`run`'s own lines).
    let hook = o.hook_lines(agent);
    let answers: Vec<&str> = hook.iter().map(|l| l["answer"].as_str().unwrap()).collect();
    assert_eq!(
        &answers[..4],
        ["deny", "deny", "allow", "allow"],
        "{:#?}",
        o.log
    );
    // `doctor` finds the hook as installed, trusted and blocking, and the
    // agent's version on `PATH`.
    let out = w
        .command(Path::new(EXE))
        .args(["doctor", agent.name()])
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", w.bin.display()),
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let version = text
        .lines()
        .find(|l| l.contains(&format!("{} version", agent.name())))
        .unwrap_or_default();
    assert!(
        version.starts_with("ok") && version.contains(agent.version()),
        "{text}"
    );
    let runs = o.log.iter().filter(|l| l["front"] == "run").count();
    assert_eq!(
        runs, 2,
        "the safe commands did not run through `run`: {:#?}",
        o.log
    );
    assert_eq!(o.status, Some(0), "{}", o.output);
}

#[test]
fn claude_code_shell_and_files() {
    shell_and_files(Agent::ClaudeCode);
}

#[test]
fn codex_shell_and_files() {
    shell_and_files(Agent::Codex);
}

#[test]
fn gemini_cli_shell_and_files() {
    shell_and_files(Agent::GeminiCli);
}

#[test]
fn copilot_shell_and_files() {
    shell_and_files(Agent::Copilot);
}

/// A call the policy would ask about, where nobody can answer (`-p`, `exec`):
/// the agent does not hang and the call does not run. Where the agent cannot
/// ask (Codex, Copilot) or would wait for ever (headless Gemini CLI),
/// `settings.on_prompt: deny` blocks it with the reason.
fn ask_with_nobody_there(agent: Agent) {
    let Some(bin) = agents_bin() else { return };
    let w = World::new(agent, bin);
    let o = w.run(&[agent.shell("touch asked.txt && git push --force origin main")]);
    assert!(
        !w.project().join("asked.txt").exists(),
        "the asked call ran: {:?}\n{}",
        o.results,
        o.output
    );
    let hook = o.hook_lines(agent);
    assert_eq!(hook.len(), 1, "{:#?}", o.log);
    assert_eq!(hook[0]["decision"], "prompt", "{:#?}", o.log);
    if agent == Agent::ClaudeCode {
        // Claude Code asks its own permission check, which under `-p` refuses.
        assert_eq!(hook[0]["answer"], "ask", "{:#?}", o.log);
    } else {
        assert_eq!(hook[0]["answer"], "deny", "{:#?}", o.log);
        assert_blocked(&o, 0, "unpushed work");
    }
    assert_eq!(o.status, Some(0), "{}", o.output);
}

#[test]
fn claude_code_ask_with_nobody_there() {
    ask_with_nobody_there(Agent::ClaudeCode);
}

#[test]
fn codex_ask_with_nobody_there() {
    ask_with_nobody_there(Agent::Codex);
}

#[test]
fn gemini_cli_ask_with_nobody_there() {
    ask_with_nobody_there(Agent::GeminiCli);
}

#[test]
fn copilot_ask_with_nobody_there() {
    ask_with_nobody_there(Agent::Copilot);
}

/// A policy that does not load blocks every call, a harmless one included.
fn policy_does_not_load(agent: Agent) {
    let Some(bin) = agents_bin() else { return };
    let mut w = World::new(agent, bin);
    let policy = w.root.path().join("policy/broken.yaml");
    std::fs::create_dir_all(policy.parent().unwrap()).unwrap();
    std::fs::write(
        &policy,
        "version: 1\nrules:\n  - id: half-written\n    tools: ['*']\n    deny: args.command ==\n",
    )
    .unwrap();
    w.env.push((
        "ZERO_POLICY_PATH".into(),
        policy.parent().unwrap().display().to_string(),
    ));
    let o = w.run(&[agent.shell("echo zp-safe-ok > marker.txt")]);
    assert_blocked(&o, 0, "the call is blocked");
    assert!(
        !w.project().join("marker.txt").exists(),
        "the call ran under a policy that does not load"
    );
    let hook = o.hook_lines(agent);
    assert_eq!(hook.len(), 1, "{:#?}", o.log);
    assert_eq!(hook[0]["decision"], "error", "{:#?}", o.log);
}

#[test]
fn claude_code_policy_does_not_load() {
    policy_does_not_load(Agent::ClaudeCode);
}

#[test]
fn codex_policy_does_not_load() {
    policy_does_not_load(Agent::Codex);
}

#[test]
fn gemini_cli_policy_does_not_load() {
    policy_does_not_load(Agent::GeminiCli);
}

#[test]
fn copilot_policy_does_not_load() {
    policy_does_not_load(Agent::Copilot);
}

/// `serve --hooks` as the agents' user, with their home (so the log is
/// theirs), stopped (SIGTERM, exit 0) by `stop` or when dropped.
struct HookService {
    child: Child,
    url: String,
}

impl HookService {
    fn start(w: &World) -> HookService {
        use std::io::BufRead;
        let mut child = w
            .command(Path::new(EXE))
            .args(["serve", "--hooks", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let port: u16 = loop {
            let mut line = String::new();
            assert!(
                err.read_line(&mut line).unwrap() > 0,
                "the service did not start"
            );
            if let Some(rest) = line.split("on http://127.0.0.1:").nth(1) {
                break rest.split('/').next().unwrap().parse().unwrap();
            }
        };
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        HookService {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    fn stop(&mut self) -> Option<i32> {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        self.child.wait().unwrap().code()
    }
}

impl Drop for HookService {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The key is not read and the safe command runs; the log has both.
fn blocks_and_runs(w: &World, agent: Agent, marker: &str) {
    let o = w.run(&[
        agent.shell("cat ~/.ssh/id_rsa"),
        agent.shell(&format!("echo zp-safe-ok > {marker}")),
    ]);
    assert_blocked(&o, 0, "credential files are off limits");
    assert_eq!(
        std::fs::read_to_string(w.project().join(marker))
            .ok()
            .as_deref(),
        Some("zp-safe-ok\n"),
        "the safe command did not run: {:?}\n{}",
        o.results,
        o.output
    );
    let hook = o.hook_lines(agent);
    let answers: Vec<&str> = hook.iter().map(|l| l["answer"].as_str().unwrap()).collect();
    assert_eq!(
        &answers[answers.len() - 2..],
        ["deny", "allow"],
        "{:#?}",
        o.log
    );
}

/// No call runs: the service is down.
fn blocked_while_down(w: &World, agent: Agent) {
    let o = w.run(&[agent.shell("echo zp-safe-ok > down.txt")]);
    assert!(
        !w.project().join("down.txt").exists(),
        "a call ran with the service down: {:?}\n{}",
        o.results,
        o.output
    );
}

/// The hook through `zero-policy serve --hooks`, installed by `init --http`:
/// Claude Code's `http` hook, the `hook --via` client for the others. With
/// the service stopped, a call is blocked, not run.
fn through_the_service(agent: Agent) {
    let Some(bin) = agents_bin() else { return };
    let mut w = World::new(agent, bin);
    w.own();
    let mut service = HookService::start(&w);
    w.init_extra = vec!["--http".into(), service.url.clone()];
    blocks_and_runs(&w, agent, "marker.txt");
    assert_eq!(service.stop(), Some(0));
    blocked_while_down(&w, agent);
}

#[test]
fn claude_code_through_the_service() {
    through_the_service(Agent::ClaudeCode);
}

#[test]
fn codex_through_the_service() {
    through_the_service(Agent::Codex);
}

#[test]
fn gemini_cli_through_the_service() {
    through_the_service(Agent::GeminiCli);
}

#[test]
fn copilot_through_the_service() {
    through_the_service(Agent::Copilot);
}

/// Copilot CLI's own `http` hook, installed by hand, answered natively by
/// the service: it fires only with `COPILOT_HOOK_ALLOW_LOCALHOST=1` (without
/// it Copilot 1.0.102 skips the hook and the key is read, which is why
/// `init --http` gives Copilot the client); a service that is down blocks.
#[test]
fn copilot_http_hook_answered_by_the_service() {
    let Some(bin) = agents_bin() else { return };
    let mut w = World::new(Agent::Copilot, bin);
    w.own();
    let mut service = HookService::start(&w);
    w.init_extra = vec!["--http".into(), service.url.clone()];
    w.init();
    let hooks = w.project().join(".github/hooks/zero-policy.json");
    std::fs::write(
        &hooks,
        json!({"version": 1, "hooks": {"preToolUse": [
            {"type": "http", "url": format!("{}/hooks/copilot", service.url), "timeoutSec": 30}
        ]}})
        .to_string(),
    )
    .unwrap();
    w.no_init = true;
    w.env
        .push(("COPILOT_HOOK_ALLOW_LOCALHOST".into(), "1".into()));
    blocks_and_runs(&w, Agent::Copilot, "marker.txt");
    assert_eq!(service.stop(), Some(0));
    blocked_while_down(&w, Agent::Copilot);
}

/// `init gemini-cli --managed`: the hook in Gemini CLI's system settings
/// (moved to a throwaway file by `GEMINI_CLI_SYSTEM_SETTINGS_PATH`, which the
/// agent reads too, so nothing is written under `/etc`), written by root;
/// nothing in the user's or the project's settings. The agent, run as its
/// user in a folder it trusts, fires it: the key is not read, the safe call runs.
#[test]
fn gemini_cli_managed_hook() {
    let Some(bin) = agents_bin() else { return };
    let mut w = World::new(Agent::GeminiCli, bin);
    // Gemini CLI skips a system settings file unless it and every folder
    // above it are root's and not writable by group or others: not under
    // `/tmp` (1777), but in the build's own folder, root's when the tests
    // run as root.
    let admin = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::set_permissions(
        admin.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let system = admin.path().join("gemini-cli/settings.json");
    w.env.push((
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH".into(),
        system.display().to_string(),
    ));
    w.no_init = true;
    let out = Command::new(EXE)
        .args(["init", "gemini-cli", "--managed"])
        .current_dir(w.project())
        .env("HOME", w.root.path().join("admin"))
        .env("GEMINI_CLI_SYSTEM_SETTINGS_PATH", &system)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Gemini CLI runs settings hooks, system ones too, only in a trusted folder.
    std::fs::create_dir_all(w.home().join(".gemini")).unwrap();
    std::fs::write(
        w.home().join(".gemini/trustedFolders.json"),
        json!({w.project().display().to_string(): "TRUST_FOLDER"}).to_string(),
    )
    .unwrap();
    blocks_and_runs(&w, Agent::GeminiCli, "marker.txt");
    assert!(!w.project().join(".gemini").exists());
    let user = std::fs::read_to_string(w.home().join(".gemini/settings.json")).unwrap();
    assert!(!user.contains("zero-policy"), "{user}");
    // `doctor` finds it as the managed installation.
    let out = w
        .command(Path::new(EXE))
        .args(["doctor", "gemini-cli"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("ok")
            && l.contains(&format!("{} (managed, for every user)", system.display()))),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("ok") && l.contains("hook gemini-cli probe")),
        "{text}"
    );
}
