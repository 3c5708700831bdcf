#![doc = include_str!("../README.md")]

pub mod arguments;
pub mod builtin;
pub mod bundle;
pub mod call;
pub mod cel;
pub mod cli;
pub mod diagnostic;
pub mod dispatch;
#[cfg(test)]
mod docs_block;
pub mod effects;
pub mod escape;
pub mod gateway;
pub mod guard;
pub mod hooks;
pub mod import;
pub mod lint;
pub mod loader;
pub mod lock;
pub mod log;
pub mod mcp;
pub mod model;
pub mod names;
pub mod output;
pub mod policy;
pub mod registry;
pub mod report;
pub mod runtime;
pub mod sandbox;
pub mod scrub;
pub mod shadow;
pub mod testing;
pub mod tls;

pub use call::{Call, Session};
pub use diagnostic::{Code, Diagnostic, Severity};
pub use dispatch::Evaluation;
pub use model::{Decision, Permission, Scope, SideEffect};
pub use policy::Policy;
pub use registry::Registry;
