//! The runtime half of the library: tools that run, and what they return.
//!
//! A host gives the registry code to run in two ways: a [`Tool`], which
//! carries its own name, description, parameters and safety, or an
//! [`Executor`] attached to a tool declared in a manifest. Either way the
//! registry keeps it private, and the only way to run it is
//! [`Registry::dispatch`](crate::registry::Registry::dispatch).

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;

use crate::call::Call;
use crate::model::Scope;
use crate::policy::Safety;
use crate::scrub::Scrubber;

/// What a tool returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOutput {
    /// Text for the model.
    pub text: String,
    /// Structured content, if any.
    pub structured: Option<serde_json::Value>,
    /// Notes on content that is not text (images, resources).
    pub notes: Vec<String>,
    /// The tool reported a failure (MCP `isError`).
    pub is_error: bool,
    /// An MCP tool's content blocks as its server sent them, in order (empty
    /// for other tools): what the gateway passes on. `text` and `notes`
    /// summarise them.
    pub content: Vec<rmcp::model::ContentBlock>,
    /// An MCP result's `_meta`, as sent.
    pub meta: Option<rmcp::model::MetaObject>,
}

impl ToolOutput {
    /// Plain text output.
    #[must_use]
    pub fn text(text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            text: text.into(),
            structured: None,
            notes: Vec::new(),
            is_error: false,
            content: Vec::new(),
            meta: None,
        }
    }
}

/// Why a call did not produce output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// Rejected before permissions.
    #[error("rejected: {0}")]
    Rejected(String),
    /// Denied by policy.
    #[error("denied: {0}")]
    Denied(String),
    /// The decision was `prompt` and nobody approved.
    #[error("not approved: {0}")]
    NotApproved(String),
    /// The tool is declared but the host attached nothing to run it.
    #[error("tool `{0}` has no executor")]
    NoExecutor(String),
    /// The tool ran and failed.
    #[error("tool failed: {0}")]
    Failed(String),
}

/// A boxed future, for asynchronous executors.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Code that runs a tool call synchronously.
pub trait Executor: Send + Sync {
    /// Runs the call. Only the registry calls this, after the call was decided `allow`
    /// (or `prompt` and approved).
    ///
    /// # Errors
    /// The tool failed.
    fn execute(&self, call: &Call) -> Result<ToolOutput, ToolError>;

    /// The richer capability: asynchronous execution. When present, the
    /// registry dispatches through it instead of [`Executor::execute`].
    fn as_async(&self) -> Option<&dyn AsyncExecutor> {
        None
    }
}

/// Code that runs a tool call asynchronously (MCP tools, network tools).
pub trait AsyncExecutor: Send + Sync {
    /// Runs the call.
    fn execute_async<'a>(&'a self, call: &'a Call) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// A tool defined in code: its own manifest plus the code that runs it.
pub trait Tool: Executor {
    /// The final name.
    fn name(&self) -> &str;
    /// What it does.
    fn description(&self) -> &str;
    /// JSON Schema for its arguments.
    fn parameters(&self) -> serde_json::Value;
    /// Its declared safety.
    fn safety(&self) -> Safety;
    /// The scope it needs; by default derived from its side effect.
    fn scope(&self) -> Scope {
        self.safety().side_effect.default_scope()
    }
}

/// How the registry runs a tool, chosen once at registration: the richest wins.
#[derive(Clone)]
pub(crate) enum Dispatcher {
    /// Nothing attached.
    None,
    /// Synchronous.
    Sync(std::sync::Arc<dyn Executor>),
    /// Asynchronous (the executor offered `as_async`).
    Async(std::sync::Arc<dyn Executor>),
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Dispatcher::None => "None",
            Dispatcher::Sync(_) => "Sync",
            Dispatcher::Async(_) => "Async",
        })
    }
}

impl Dispatcher {
    pub(crate) fn new(executor: std::sync::Arc<dyn Executor>) -> Dispatcher {
        if executor.as_async().is_some() {
            Dispatcher::Async(executor)
        } else {
            Dispatcher::Sync(executor)
        }
    }

    pub(crate) async fn run(&self, name: &str, call: &Call) -> Result<ToolOutput, ToolError> {
        match self {
            Dispatcher::None => Err(ToolError::NoExecutor(name.to_string())),
            Dispatcher::Sync(e) => e.execute(call),
            Dispatcher::Async(e) => match e.as_async() {
                Some(a) => a.execute_async(call).await,
                None => e.execute(call),
            },
        }
    }
}

/// Scrubs a tool's output in place.
pub fn scrub_output(scrubber: &Scrubber, out: &mut ToolOutput) {
    out.text = scrubber.scrub_str(&out.text).into_owned();
    for n in &mut out.notes {
        *n = scrubber.scrub_str(n).into_owned();
    }
    if let Some(s) = &mut out.structured {
        scrubber.scrub_json(s);
    }
    for block in &mut out.content {
        scrub_block(scrubber, block);
    }
    if let Some(meta) = &mut out.meta {
        scrub_object(scrubber, &mut meta.0);
    }
}

/// Scrubs a string in place, allocating only when something was found.
fn scrub_in_place(scrubber: &Scrubber, text: &mut String) {
    if let std::borrow::Cow::Owned(clean) = scrubber.scrub_str(text) {
        *text = clean;
    }
}

fn scrub_object(scrubber: &Scrubber, object: &mut serde_json::Map<String, serde_json::Value>) {
    for v in object.values_mut() {
        scrubber.scrub_json(v);
    }
}

/// Scrubs a value of a kind this build does not know, through its JSON form.
fn scrub_as_json<T: serde::Serialize + serde::de::DeserializeOwned>(
    scrubber: &Scrubber,
    value: &mut T,
) {
    if let Ok(mut v) = serde_json::to_value(&*value) {
        scrubber.scrub_json(&mut v);
        if let Ok(clean) = serde_json::from_value(v) {
            *value = clean;
        }
    }
}

/// Scrubs one MCP content block in place: every text a person or model
/// reads (text, an embedded text resource, a link's URI, name and
/// description, `_meta`). Base64 data (images, audio, blobs) is left as is:
/// scrubbing it would corrupt it, and a detector cannot see through it.
pub fn scrub_block(scrubber: &Scrubber, block: &mut rmcp::model::ContentBlock) {
    use rmcp::model::{ContentBlock, ResourceContents};
    let meta = match block {
        ContentBlock::Text(t) => {
            scrub_in_place(scrubber, &mut t.text);
            &mut t.meta
        }
        ContentBlock::Image(i) => &mut i.meta,
        ContentBlock::Audio(a) => &mut a.meta,
        ContentBlock::Resource(r) => {
            match &mut r.resource {
                ResourceContents::TextResourceContents {
                    uri, text, meta, ..
                } => {
                    scrub_in_place(scrubber, uri);
                    scrub_in_place(scrubber, text);
                    if let Some(m) = meta {
                        scrub_object(scrubber, &mut m.0);
                    }
                }
                ResourceContents::BlobResourceContents { uri, meta, .. } => {
                    scrub_in_place(scrubber, uri);
                    if let Some(m) = meta {
                        scrub_object(scrubber, &mut m.0);
                    }
                }
                other => scrub_as_json(scrubber, other),
            }
            &mut r.meta
        }
        ContentBlock::ResourceLink(l) => {
            scrub_in_place(scrubber, &mut l.uri);
            scrub_in_place(scrubber, &mut l.name);
            for t in [&mut l.title, &mut l.description].into_iter().flatten() {
                scrub_in_place(scrubber, t);
            }
            &mut l.meta
        }
        // A block type this build does not know: scrub it as JSON.
        other => {
            scrub_as_json(scrubber, other);
            return;
        }
    };
    if let Some(m) = meta {
        scrub_object(scrubber, &mut m.0);
    }
}

/// Scrubs every text of an evaluation (reasons, step details, rule errors).
pub fn scrub_evaluation(scrubber: &Scrubber, ev: &mut crate::report::Evaluation) {
    let s = |m: &mut String| {
        if let std::borrow::Cow::Owned(clean) = scrubber.scrub_str(m) {
            *m = clean;
        }
    };
    s(&mut ev.tool);
    for r in [&mut ev.reason, &mut ev.reject_reason]
        .into_iter()
        .flatten()
    {
        s(r);
    }
    for step in &mut ev.steps {
        s(&mut step.detail);
    }
    for e in &mut ev.errors {
        s(&mut e.message);
    }
}

/// Scrubs the message of an error.
#[must_use]
pub fn scrub_error(scrubber: &Scrubber, e: ToolError) -> ToolError {
    let s = |m: String| scrubber.scrub_str(&m).into_owned();
    match e {
        ToolError::Rejected(m) => ToolError::Rejected(s(m)),
        ToolError::Denied(m) => ToolError::Denied(s(m)),
        ToolError::NotApproved(m) => ToolError::NotApproved(s(m)),
        ToolError::NoExecutor(m) => ToolError::NoExecutor(s(m)),
        ToolError::Failed(m) => ToolError::Failed(s(m)),
    }
}
