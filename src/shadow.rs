//! Shadow mode (`settings.shadow`): a second policy decides every call beside
//! the one in force, and only its decision is logged (the record's `shadow`),
//! so a team can see what a stricter policy would change before it is in
//! force (`zero-policy log diff`).
//!
//! The shadow never changes an answer: a shadow policy that cannot be read,
//! is refused (a bundle), or does not load is an error *in the record* and
//! on stderr, and the policy in force decides alone.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::bundle::source::BundleSource;
use crate::call::Call;
use crate::loader::{self, Purpose};
use crate::log::{RuleAt, ShadowRecord};
use crate::policy::{Policy, Shadow as Spec};
use crate::registry::Registry;

/// A shadow policy, loaded and ready to decide.
pub struct Shadow {
    /// The shadow policy.
    pub policy: Arc<Policy>,
    /// Its registry, guarded and grounded as the one in force is.
    pub registry: Registry,
    /// The hash of its files, as the record's `policy`.
    pub hash: String,
    /// The version of its bundle, if it came from one.
    pub bundle: Option<String>,
    /// A refused bundle whose last good one stands in, and why.
    pub note: Option<String>,
    /// Where it was read from, for the guard.
    pub places: Vec<PathBuf>,
}

/// What a shadow spec names, for messages: the paths or the bundle.
#[must_use]
pub fn describe(spec: &Spec) -> String {
    match spec {
        Spec::Paths(p) => p.join(", "),
        Spec::Bundle { location, .. } => format!("the bundle `{location}`"),
    }
}

/// `~/` in a setting's path, as the home folder.
fn expand(path: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    match path.strip_prefix("~/") {
        Some(rest) => home
            .map(|h| h.join(rest))
            .ok_or_else(|| format!("`{path}` starts with `~/` and `HOME` is not set")),
        None => Ok(PathBuf::from(path)),
    }
}

/// Loads the shadow policy `spec` names for `purpose`.
///
/// `guarded` are the places the policy in force guards: the shadow guards
/// them too (and its own), so a write the guard refuses is not counted as a
/// change. `background_fetch`: as [`BundleSource::background_fetch`].
///
/// # Errors
/// Why there is no shadow decision: a path cannot be read, the bundle is
/// refused with no last good one, or the files do not load.
pub fn load(
    spec: &Spec,
    purpose: Purpose,
    guarded: &[PathBuf],
    background_fetch: bool,
) -> Result<Shadow, String> {
    let home = crate::log::home();
    let cache = loader::cache::Cache::from_env();
    let (loaded, places, bundle, note) = match spec {
        Spec::Paths(paths) => {
            let paths = paths
                .iter()
                .map(|p| expand(p, home.as_deref()))
                .collect::<Result<Vec<_>, _>>()?;
            let loaded = match &cache {
                Some(c) => loader::load_paths_cached(&paths, purpose, c),
                None => loader::load_paths_for(&paths, purpose),
            }
            .map_err(|e| e.to_string())?;
            (loaded, loader::policy_places(&paths), None, None)
        }
        Spec::Bundle { location, key, ca } => {
            let location = if location.contains("://") {
                PathBuf::from(location)
            } else {
                expand(location, home.as_deref())?
            };
            let key = if key.starts_with("~/") {
                expand(key, home.as_deref())?.display().to_string()
            } else {
                key.clone()
            };
            let mut source = BundleSource::new(location, key);
            source.ca = ca
                .as_deref()
                .map(|c| expand(c, home.as_deref()))
                .transpose()?;
            source.background_fetch = background_fetch;
            let resolved = source.resolve(crate::bundle::source::cache_root().as_deref())?;
            let sources = resolved.bundle.sources();
            let loaded = match &cache {
                Some(c) => loader::load_sources_cached(sources, purpose, c),
                None => loader::load_sources_for(sources, purpose),
            };
            (
                loaded,
                source.places(),
                Some(resolved.bundle.version().to_string()),
                resolved.note,
            )
        }
    };
    let Some(policy) = loaded.policy else {
        let errors: Vec<&crate::Diagnostic> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::Severity::Error)
            .collect();
        let first = errors
            .first()
            .map_or_else(String::new, |d| format!(": {}{}", d.place(), d.message));
        return Err(format!(
            "it does not load ({} error{}{first})",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
        ));
    };
    let mut registry = Registry::new(&policy).map_err(|e| format!("it cannot be used: {e}"))?;
    registry.guard(guarded);
    registry.guard(&places);
    registry
        .ground_in_host(crate::effects::ground::Host::default(), &policy.lists)
        .map_err(|e| format!("it cannot be used: {e}"))?;
    let hash = crate::log::policy_hash(&policy.files);
    Ok(Shadow {
        policy: Arc::new(policy),
        registry,
        hash,
        bundle,
        note,
        places,
    })
}

/// The message for a shadow policy that could not be loaded.
#[must_use]
pub fn failure(spec: &Spec, why: &str) -> String {
    format!("the shadow policy ({}) is ignored: {why}", describe(spec))
}

impl Shadow {
    /// The same shadow policy deciding with another registry of it (the
    /// gateway's, with its upstream servers' tools).
    #[must_use]
    pub fn with_registry(&self, registry: Registry) -> Shadow {
        Shadow {
            policy: Arc::clone(&self.policy),
            registry,
            hash: self.hash.clone(),
            bundle: self.bundle.clone(),
            note: self.note.clone(),
            places: self.places.clone(),
        }
    }

    /// Decides `call` (named as this policy names its tools) and says what
    /// it would have decided.
    #[must_use]
    pub fn decide(&self, call: &Call) -> ShadowRecord {
        let ev = self.registry.decide_call(call);
        let reason = ev
            .reason
            .as_deref()
            .or(ev.reject_reason.as_deref())
            .unwrap_or_default();
        let mut matched: Vec<String> = ev.matched.iter().map(|m| m.id.clone()).collect();
        matched.dedup();
        ShadowRecord {
            decision: ev.decision.as_str().into(),
            reason: self.registry.scrubber().scrub_str(reason).into_owned(),
            matched,
            rules: RuleAt::of(&ev.matched),
            policy: self.hash.clone(),
            bundle: self.bundle.clone(),
            note: self.note.clone(),
            error: None,
        }
    }
}

/// The record of a shadow policy that could not decide: `decision` is
/// `error`, `error` says why (scrubbed by `scrubber`).
#[must_use]
pub fn failed(message: &str, scrubber: &crate::scrub::Scrubber) -> ShadowRecord {
    ShadowRecord {
        decision: "error".into(),
        error: Some(scrubber.scrub_str(message).into_owned()),
        ..ShadowRecord::default()
    }
}
