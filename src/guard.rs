//! The self-protection guard: the places the policy is read from. A call
//! whose effects write, delete or move one of them, something under one, or a
//! folder above one is denied at the sandbox step, whatever the rules say: an
//! agent must not rewrite the policy that governs it.

use crate::effects::Effects;
use crate::effects::globs::PathGlobs;
use crate::registry::Registry;

/// The guarded places and everything under them; the folders above them.
type GuardGlobs = (Option<PathGlobs>, Option<PathGlobs>);

/// The places a registry guards.
#[derive(Debug, Default)]
pub struct Guard {
    /// Absolute, clean.
    places: Vec<String>,
    /// `places` and everything under them, as one glob list (built at first use).
    globs: std::sync::OnceLock<GuardGlobs>,
}

impl Registry {
    /// Adds places the policy is read from (files or folders, a relative path
    /// taken from the process's folder). A call whose effects write, delete or
    /// move one of them, something under one, or a folder above one is denied
    /// at the sandbox step, whatever the rules say: an agent must not rewrite
    /// the policy that governs it. Every registry guards
    /// `~/.config/zero-policy`; the front doors add the paths they loaded.
    pub fn guard<I, P>(&mut self, paths: I)
    where
        I: IntoIterator<Item = P>,
        P: AsRef<std::path::Path>,
    {
        let cwd = std::env::current_dir().ok();
        for p in paths {
            let p = p.as_ref();
            let abs = match (p.is_absolute(), &cwd) {
                (true, _) | (false, None) => p.to_path_buf(),
                (false, Some(cwd)) => cwd.join(p),
            };
            let mut forms = vec![abs.clone()];
            // A folder reached through a symbolic link is guarded by both names.
            if let Ok(real) = std::fs::canonicalize(&abs) {
                forms.push(real);
            }
            for f in forms {
                let Some(s) = f.to_str() else { continue };
                let clean = crate::effects::paths::clean(s);
                if clean != "/" && !self.guard.places.contains(&clean) {
                    self.guard.places.push(clean);
                }
            }
        }
        self.guard.globs = std::sync::OnceLock::new();
    }

    /// The places [`Registry::guard`] protects, absolute and clean.
    #[must_use]
    pub fn guarded(&self) -> &[String] {
        &self.guard.places
    }

    /// The first path or pattern of these effects that reaches a guarded
    /// place: a write of the place or of something under it, or a delete (a
    /// move's source is one) of a folder above it. A pattern too complex to
    /// compare counts as reaching one (fail closed).
    pub(crate) fn guarded_write<'a>(&self, fx: &'a Effects) -> Option<&'a str> {
        if self.guard.places.is_empty() {
            return None;
        }
        let (under, above) = self.guard.globs.get_or_init(|| {
            let ci = self.settings().case_insensitive;
            let esc = crate::effects::paths::escape;
            let under: Vec<String> = self
                .guard
                .places
                .iter()
                .flat_map(|g| [esc(g), format!("{}/**", esc(g))])
                .collect();
            let mut above: Vec<String> = self
                .guard
                .places
                .iter()
                .flat_map(|g| crate::effects::paths::ancestors(g))
                .filter(|a| a != "/")
                .map(|a| esc(&a))
                .collect();
            above.sort();
            above.dedup();
            (
                PathGlobs::new(&under, ci).ok(),
                PathGlobs::new(&above, ci).ok(),
            )
        });
        let hits = |globs: &Option<PathGlobs>, w: &str| {
            globs.as_ref().is_none_or(|g| g.matches(w).unwrap_or(true))
        };
        // A link to a guarded place or a folder above one (`ln -s
        // ~/.config/zero-policy cfg`) opens it to every later write through the link.
        let links = fx
            .commands
            .iter()
            .filter(|c| c.makes_link())
            .flat_map(|c| c.reads.iter());
        fx.writes
            .iter()
            .find(|w| hits(under, w))
            .or_else(|| fx.deletes.iter().find(|w| hits(above, w)))
            .or_else(|| links.into_iter().find(|r| hits(under, r) || hits(above, r)))
            .map(String::as_str)
    }
}
