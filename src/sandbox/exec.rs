//! A sandbox-aware shell executor for the library (the seed's
//! `RunWithSandbox`): a shell tool whose calls run confined to the envelope
//! the policy and each call's own effects allow.
//!
//! Attach it to a manifest's shell tool with `Registry::attach_executor`, and
//! make the tool's calls with `Call::confined` set, so that they are decided
//! as confined calls (`call.confined`) and then run so.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::call::Call;
use crate::effects::{self, Catalog};
use crate::policy::Enforce;
use crate::runtime::{Executor, ToolError, ToolOutput};

use super::plan::{self, Context};

/// Runs the script in one argument of a shell tool, confined.
#[derive(Debug, Clone)]
pub struct ConfinedShell {
    /// The argument that holds the script (`command`).
    pub key: String,
    /// The shell (`/bin/sh`).
    pub shell: String,
    /// `settings.enforce`.
    pub enforce: Enforce,
    /// The policy's lists.
    pub lists: Arc<BTreeMap<String, Vec<String>>>,
    /// What `~` means.
    pub home: String,
    /// The catalog the call's effects are computed with.
    pub catalog: Catalog,
    /// The `zero-policy` program that confines; `None`: [`plan::confine_program`].
    pub program: Option<std::path::PathBuf>,
}

impl ConfinedShell {
    /// For a policy: its `settings.enforce`, lists and catalog; the script is
    /// the call's argument `key`.
    #[must_use]
    pub fn new(policy: &crate::policy::Policy, key: &str) -> ConfinedShell {
        ConfinedShell {
            key: key.to_string(),
            shell: "/bin/sh".into(),
            enforce: policy.settings.enforce.clone(),
            lists: Arc::clone(&policy.lists),
            home: policy.settings.home.clone(),
            catalog: Catalog::with_additions(policy.catalog, &policy.commands),
            program: None,
        }
    }

    /// Runs `script` in `workspace` confined to its envelope: its output, or
    /// why it could not be confined (then it did not run).
    ///
    /// # Errors
    /// The envelope cannot be built, or the confining program cannot start.
    pub fn run(&self, script: &str, workspace: &str) -> Result<std::process::Output, String> {
        let env = effects::Env {
            catalog: &self.catalog,
            home: &self.home,
            workspace,
        };
        let input = effects::Input {
            shell: Some(Ok(script.to_string())),
            ..effects::Input::default()
        };
        let fx = effects::compute(&input, &env);
        let cx = Context {
            enforce: &self.enforce,
            lists: &self.lists,
            home: &self.home,
            workspace,
        };
        let envelope = plan::envelope(&cx, &fx).map_err(|e| e.to_string())?;
        let program = match &self.program {
            Some(p) => p.clone(),
            None => plan::confine_program().map_err(|e| e.to_string())?,
        };
        let confined = plan::confined_command_by(
            &program,
            &envelope,
            &self.shell,
            &["-c".into(), script.to_string()],
        )
        .map_err(|e| e.to_string())?;
        std::process::Command::new(confined.program)
            .args(confined.args)
            .env(confined.env.0, confined.env.1)
            .current_dir(workspace)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot start the confined call: {e}"))
    }
}

impl Executor for ConfinedShell {
    fn execute(&self, call: &Call) -> Result<ToolOutput, ToolError> {
        let script = call
            .args
            .get(&self.key)
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| {
                ToolError::Failed(format!("no `{}` string in the arguments", self.key))
            })?;
        let out = self
            .run(script, &call.session.workspace)
            .map_err(ToolError::Failed)?;
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        match out.status.code() {
            Some(0) => Ok(ToolOutput::text(text)),
            Some(125) => Err(ToolError::Failed(format!(
                "the call could not be confined: {text}"
            ))),
            code => Ok(ToolOutput {
                is_error: true,
                ..ToolOutput::text(format!(
                    "{text}\nexit status {}",
                    code.map_or_else(|| "by signal".into(), |c| c.to_string())
                ))
            }),
        }
    }
}
