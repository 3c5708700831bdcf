//! The shipped policy (`policies/default.yaml` over `manifests/`) written by
//! hand in Rust: what `cargo bench --bench decide` compares zero-policy with on
//! the shipped files.
//!
//! The rules of the shipped policy are written over the call's effects, so the
//! native decider computes them with the same engine (`effects::compute`, the
//! shell analysis and the catalog): there is no other shell analyser to compare
//! with. What it writes by hand is everything else a decision takes: the tool's
//! static permission and how its arguments map to effects (a `match` on the
//! tool's name instead of the manifest's CEL), and each rule's condition as a
//! plain loop over the effects with the lists' globs compiled once (`PathGlobs`,
//! the matcher the engine's `path_matches` uses). [`Native::decide`] gives the
//! decision and the ids of the rules that matched, which the bench checks equal
//! to `Registry::decide_call`'s on every call before timing either.
#![allow(dead_code, reason = "shared by benches that use parts of it")]

use std::collections::BTreeMap;

use serde_json::Value;
use zero_policy::cel::functions::{path_clean, path_under};
use zero_policy::dispatch::Call;
use zero_policy::effects::globs::PathGlobs;
use zero_policy::effects::{self, Catalog, Effects, paths, urls};
use zero_policy::model::{Decision, Permission, Scope};

/// A native tool: its scope, static permission and what its arguments do.
#[derive(Clone, Copy)]
enum Kind {
    /// `args.command` is a shell script run in `args.workdir` or the workspace.
    Shell,
    /// `[args.KEY]` is read.
    Reads(&'static str),
    /// `[args.KEY]` is written.
    Writes(&'static str),
    /// `[args.KEY]` is fetched.
    Fetches(&'static str),
}

fn tool(name: &str, agent: &str) -> Option<(Scope, Permission, Kind)> {
    Some(match (name, agent) {
        ("bash", "") => (Scope::Shell, Permission::Prompt, Kind::Shell),
        ("read_file", "") => (Scope::ReadOnly, Permission::Allow, Kind::Reads("path")),
        ("write_file", "") => (Scope::Write, Permission::Prompt, Kind::Writes("path")),
        ("web_fetch", "") => (Scope::Network, Permission::Prompt, Kind::Fetches("url")),
        ("Read", "claude-code") => (Scope::ReadOnly, Permission::Allow, Kind::Reads("file_path")),
        ("Edit", "claude-code") => (Scope::Write, Permission::Prompt, Kind::Writes("file_path")),
        _ => return None,
    })
}

/// Whether the native decider writes out the tool `name` of `agent`.
#[must_use]
pub fn knows(name: &str, agent: &str) -> bool {
    tool(name, agent).is_some()
}

/// The globs that depend on the workspace.
struct Workspace {
    path: String,
    /// `path_ancestors(ws) + lists.system_roots`.
    above: PathGlobs,
    /// `lists.protected_roots` and `lists.workspace_protected` under the workspace.
    protected: PathGlobs,
    /// `path_ancestors(ws)[0]`.
    first: String,
}

/// The lists' globs, compiled once.
pub struct Native {
    catalog: Catalog,
    home: String,
    guard: PathGlobs,
    guarded: Vec<String>,
    system_roots: Vec<String>,
    block_devices: PathGlobs,
    build_outputs: PathGlobs,
    credential_roots: PathGlobs,
    credentials: PathGlobs,
    credentials_except: PathGlobs,
    credential_files: PathGlobs,
    credential_names: PathGlobs,
    credential_folders: PathGlobs,
    protected: PathGlobs,
    protected_roots: PathGlobs,
    workspace_protected: Vec<String>,
    scratch: Vec<String>,
    metadata_hosts: Vec<String>,
    address_domains: Vec<String>,
    internal_networks: Vec<String>,
    case_insensitive: bool,
    /// The last workspace's globs, built once per workspace.
    workspace: std::cell::RefCell<Option<std::rc::Rc<Workspace>>>,
}

/// Decision and matched rule ids (sorted).
pub type Decided = (Decision, Vec<&'static str>);

impl Native {
    /// Compiles the lists of the loaded shipped policy; `guarded` are the
    /// places the registry guards.
    #[must_use]
    pub fn new(
        lists: &BTreeMap<String, Vec<String>>,
        catalog: Catalog,
        home: &str,
        case_insensitive: bool,
        guarded: &[String],
    ) -> Native {
        let list = |n: &str| lists.get(n).cloned().unwrap_or_default();
        let globs = |n: &str| PathGlobs::new(&list(n), case_insensitive).expect("list globs");
        let guard: Vec<String> = guarded
            .iter()
            .flat_map(|g| [g.clone(), format!("{g}/**")])
            .collect();
        Native {
            catalog,
            home: home.to_string(),
            guard: PathGlobs::new(&guard, case_insensitive).expect("guard globs"),
            guarded: guarded.to_vec(),
            system_roots: list("system_roots"),
            block_devices: globs("block_devices"),
            build_outputs: globs("build_outputs"),
            credential_roots: globs("credential_roots"),
            credentials: globs("credentials"),
            credentials_except: globs("credentials_except"),
            credential_files: globs("credential_files"),
            credential_names: globs("credential_names"),
            credential_folders: globs("credential_folders"),
            protected: globs("protected"),
            protected_roots: globs("protected_roots"),
            workspace_protected: list("workspace_protected"),
            scratch: list("scratch"),
            metadata_hosts: list("metadata_hosts"),
            address_domains: list("address_domains"),
            internal_networks: list("internal_networks"),
            case_insensitive,
            workspace: std::cell::RefCell::new(None),
        }
    }

    /// The globs that depend on the workspace, built once per workspace.
    fn workspace(&self, ws: &str) -> std::rc::Rc<Workspace> {
        let mut cached = self.workspace.borrow_mut();
        if let Some(w) = cached.as_ref()
            && w.path == ws
        {
            return std::rc::Rc::clone(w);
        }
        let abs = paths::clean(ws);
        let mut above = vec![paths::escape(&abs)];
        above.extend(paths::ancestors(&abs).iter().map(|a| paths::escape(a)));
        let first = above[0].clone();
        above.extend(self.system_roots.iter().cloned());
        let mut protected: Vec<String> = self.protected_roots.globs().to_vec();
        protected.extend(
            self.workspace_protected
                .iter()
                .map(|g| format!("{first}/{g}")),
        );
        let w = std::rc::Rc::new(Workspace {
            path: ws.to_string(),
            above: PathGlobs::new(&above, self.case_insensitive).expect("ancestor globs"),
            protected: PathGlobs::new(&protected, self.case_insensitive).expect("protected"),
            first,
        });
        *cached = Some(std::rc::Rc::clone(&w));
        w
    }

    /// Decides a call as the shipped policy does.
    #[must_use]
    pub fn decide(&self, call: &Call) -> Decided {
        let Some((scope, permission, kind)) = tool(&call.tool, &call.session.agent) else {
            return (Decision::Reject, Vec::new());
        };
        let ws = call.session.workspace.as_str();
        let arg = |k: &str| call.args.get(k).and_then(Value::as_str).map(str::to_string);
        let mut input = effects::Input::default();
        let one = |k: &str| Some(arg(k).map(|v| vec![v]).ok_or_else(|| k.to_string()));
        match kind {
            Kind::Shell => {
                input.shell = Some(arg("command").ok_or_else(|| "command".to_string()));
                input.cwd = Some(Ok(arg("workdir").unwrap_or_else(|| ws.to_string())));
            }
            Kind::Reads(k) => input.reads = one(k),
            Kind::Writes(k) => input.writes = one(k),
            Kind::Fetches(k) => input.fetches = one(k),
        }
        let env = effects::Env {
            catalog: &self.catalog,
            home: &self.home,
            workspace: ws,
        };
        let fx = effects::compute(&input, &env);
        self.rules(call, scope, permission, &fx)
    }

    fn rules(&self, call: &Call, scope: Scope, permission: Permission, fx: &Effects) -> Decided {
        let ws = call.session.workspace.as_str();
        let w = self.workspace(ws);
        let (above, protected_under, first) = (&w.above, &w.protected, w.first.as_str());
        let m = |g: &PathGlobs, p: &str| g.matches(p).unwrap_or(true);
        let under = |p: &str, d: &str| path_under(p, d, ws);
        let in_scratch = |p: &str| {
            self.scratch
                .iter()
                .any(|s| under(p, s) && path_clean(p) != *s)
        };
        let has = |c: &effects::Command, t: &str| c.tags.iter().any(|x| x == t);
        let strip_tree = |d: &str| d[..d.len() - 3].to_string();
        let mut hits: Vec<(&'static str, Decision)> = Vec::new();
        let mut hit = |id: &'static str, d: Decision, yes: bool| {
            if yes {
                hits.push((id, d));
            }
        };
        use Decision::{Deny, Prompt};

        hit(
            "plan-mode-read-only",
            Deny,
            call.session.mode == "plan"
                && (scope == Scope::Write
                    || scope == Scope::Network
                    || !fx.writes.is_empty()
                    || !fx.fetches.is_empty()
                    || fx.runs_code
                    || (scope == Scope::Shell
                        && !(fx.exact && fx.commands.iter().all(|c| c.read_only)))),
        );
        hit(
            "destroy-workspace-or-above",
            Deny,
            fx.deletes
                .iter()
                .any(|d| m(above, d) || path_clean(d) == "/" || d == "/"),
        );
        hit(
            "recursive-delete-outside-workspace",
            Deny,
            fx.deletes
                .iter()
                .any(|d| paths::is_tree(d) || paths::is_pattern(d))
                && fx.deletes.iter().any(|d| !under(d, ws) && !in_scratch(d)),
        );
        hit(
            "recursive-delete-in-workspace",
            Prompt,
            fx.deletes.iter().any(|d| {
                (paths::is_tree(d) || paths::is_pattern(d))
                    && under(d, ws)
                    && !(paths::is_tree(d) && m(&self.build_outputs, &strip_tree(d)))
            }),
        );
        hit(
            "disk-devices",
            Deny,
            fx.writes.iter().any(|w| m(&self.block_devices, w)),
        );
        hit(
            "raw-device-reads",
            Deny,
            fx.reads.iter().any(|r| m(&self.block_devices, r)),
        );
        hit(
            "destructive-programs",
            Deny,
            fx.commands.iter().any(|c| {
                c.program.starts_with("mkfs")
                    || [
                        "mke2fs", "mkswap", "wipefs", "shred", "fdisk", "sfdisk", "parted", "gdisk",
                    ]
                    .contains(&c.program.as_str())
            }),
        );
        hit(
            "recursive-permissions",
            Deny,
            fx.commands.iter().any(|c| {
                ["chmod", "chown", "chgrp"].contains(&c.program.as_str())
                    && has(c, "recursive")
                    && c.writes.iter().any(|w| m(above, w) || !under(w, ws))
            }),
        );
        hit(
            "fetched-code",
            Deny,
            fx.commands.iter().any(|c| c.runs_code && c.fetched_input),
        );
        hit(
            "secret-files",
            Deny,
            fx.paths.iter().any(|p| {
                if paths::is_tree(p) {
                    m(&self.credential_roots, p) || m(&self.credential_folders, &strip_tree(p))
                } else if paths::is_pattern(p) {
                    if p.contains("/**/") {
                        m(&self.credential_files, p)
                    } else {
                        m(&self.credentials, p)
                    }
                } else {
                    (m(&self.credentials, p) || m(&self.credential_names, p))
                        && !m(&self.credentials_except, p)
                }
            }),
        );
        hit(
            "credential-commands",
            Prompt,
            fx.commands.iter().any(|c| has(c, "credentials")),
        );
        hit(
            "protected-paths",
            Deny,
            fx.writes.iter().any(|w| {
                if paths::is_pattern(w) {
                    !fx.deletes.contains(w) && m(protected_under, w)
                } else {
                    m(&self.protected, w) || m(&self.protected_roots, w)
                }
            }),
        );
        hit(
            "list-outside-workspace",
            Prompt,
            fx.lists
                .iter()
                .any(|p| !under(p, ws) && !self.scratch.iter().any(|s| under(p, s))),
        );
        hit(
            "write-outside-workspace",
            Prompt,
            fx.writes.iter().any(|w| !under(w, ws) && !in_scratch(w)),
        );
        hit(
            "internal-addresses",
            Deny,
            fx.fetches.iter().any(|f| {
                let h = f.host.as_str();
                h == "*"
                    || self.metadata_hosts.iter().any(|x| x == h)
                    || h.ends_with(".localhost")
                    || h.ends_with(".internal")
                    || self
                        .address_domains
                        .iter()
                        .any(|d| h == d || h.ends_with(&format!(".{d}")))
                    || urls::ip_in(h, &self.internal_networks).unwrap_or(true)
            }),
        );
        hit(
            "shell-network",
            Prompt,
            fx.commands
                .iter()
                .any(|c| !c.fetches.is_empty() || has(c, "network")),
        );
        hit(
            "git-loses-work",
            Prompt,
            fx.commands.iter().any(|c| has(c, "vcs-lose")),
        );
        let destructive = |c: &effects::Command| {
            has(c, "destructive") && !has(c, "vcs-lose") && c.deletes.is_empty()
        };
        hit(
            "infrastructure-destruction",
            Prompt,
            fx.commands.iter().any(destructive),
        );
        hit(
            "forced-destruction",
            Deny,
            fx.commands
                .iter()
                .any(|c| destructive(c) && has(c, "force")),
        );
        let args = &call.args;
        hit(
            "sandbox-off",
            Prompt,
            ["dangerouslyDisableSandbox", "with_escalated_permissions"]
                .iter()
                .any(|k| args.get(k) == Some(&Value::Bool(true)))
                || args.get("sandbox_permissions").and_then(Value::as_str)
                    == Some("require_escalated"),
        );
        hit(
            "unparsable-script",
            Prompt,
            fx.runs_code
                && !fx.exact
                && fx.unknown.iter().any(|u| {
                    u.starts_with("the script does not parse") || u.contains("no rule can see")
                }),
        );

        // The engine's guard: a call that changes where the policy is read from.
        let guarded = fx.writes.iter().any(|w| m(&self.guard, w))
            || fx.deletes.iter().any(|d| {
                let base = if paths::is_tree(d) {
                    strip_tree(d)
                } else {
                    d.clone()
                };
                self.guarded.iter().any(|g| under(g, &base))
            })
            // A link to a guarded place or a folder above one opens it to
            // every later write through the link.
            || fx
                .commands
                .iter()
                .filter(|c| c.makes_link())
                .flat_map(|c| c.reads.iter())
                .any(|r| {
                    m(&self.guard, r)
                        || (r != "/" && self.guarded.iter().any(|g| under(g, r)))
                });

        // Relax rules are asked only of a `prompt`, and apply only to an exact account.
        let git_here = |c: &effects::Command| {
            c.program != "git" || (c.cwd == first && !has(c, "foreign-repo"))
        };
        let mut relaxed = Vec::new();
        if permission == Permission::Prompt && fx.exact {
            let read_only = fx
                .commands
                .iter()
                .all(|c| c.known && c.read_only && git_here(c))
                && fx.writes.is_empty()
                && fx.fetches.is_empty()
                && !fx.runs_code
                && fx.reads.iter().all(|p| under(p, ws))
                && fx.lists.iter().all(|p| under(p, ws));
            if read_only {
                relaxed.push("read-only");
            }
            let in_scratch_any = |p: &str| self.scratch.iter().any(|s| under(p, s));
            let dev = !fx.commands.is_empty()
                && fx.commands.iter().all(|c| {
                    c.known
                        && !c.fetched_input
                        && c.fetches.is_empty()
                        && !has(c, "network")
                        && !has(c, "destructive")
                        && !has(c, "vcs-lose")
                        && under(&c.cwd, ws)
                        && ((c.read_only && git_here(c))
                            || (has(c, "build")
                                && !has(c, "inline-code")
                                && c.reads.iter().all(|p| under(p, ws)))
                            || (c.program == "git"
                                && has(c, "vcs-write")
                                && !has(c, "vcs-config")
                                && !c.runs_code
                                && c.cwd == first)
                            || (["rm", "rmdir"].contains(&c.program.as_str())
                                && c.deletes.iter().all(|d| {
                                    let d = if paths::is_tree(d) {
                                        strip_tree(d)
                                    } else {
                                        d.clone()
                                    };
                                    m(&self.build_outputs, &d)
                                }))
                            || (["mkdir", "touch"].contains(&c.program.as_str())
                                && c.writes.iter().all(|w| under(w, ws))))
                })
                && fx.writes.iter().all(|w| under(w, ws) || in_scratch_any(w))
                && fx.reads.iter().all(|p| under(p, ws) || in_scratch_any(p))
                && fx.lists.iter().all(|p| under(p, ws) || in_scratch_any(p));
            if dev {
                relaxed.push("dev-workflow");
            }
        }
        let effective = if !relaxed.is_empty() {
            Permission::Allow
        } else {
            permission
        };
        let mut decision = match effective {
            Permission::Allow => Decision::Allow,
            Permission::Prompt => Decision::Prompt,
            Permission::Deny => Decision::Deny,
        };
        for (_, d) in &hits {
            if *d == Deny || (*d == Prompt && decision == Decision::Allow) {
                decision = *d;
            }
        }
        if guarded {
            decision = Deny;
        }
        let mut ids: Vec<&'static str> = hits.iter().map(|(id, _)| *id).collect();
        ids.extend(relaxed);
        ids.sort_unstable();
        (decision, ids)
    }
}
