//! Path glob lists, matched against literal paths and compared exactly with
//! other globs.
//!
//! The syntax is globset's with `literal_separator(true)` and
//! `backslash_escape(true)`: `*`, `?` and `[...]` never match `/`, `**` as a
//! whole segment crosses segments, `{a,b}` is an alternation, `[!x]` a negated
//! class and `\` escapes the next character.
//!
//! globset's semantics, which [`PathGlobs::overlaps`] follows exactly:
//! - `/**` is `/` followed by anything, so it matches `/` itself and every
//!   absolute path, but not the empty string;
//! - `foo/**` matches `foo/` and everything below it, but not `foo`;
//! - `**/foo` matches `foo`, `/foo` and `a/b/foo`; `a/**/b` matches `a/b`;
//! - `**` alone matches everything, the empty string included;
//! - `*` matches a leading dot (`*` matches `.env`);
//! - `?`, `*` and classes work on bytes: `?` matches one byte, so it does not
//!   match `é` (two bytes), and `[é]` matches neither byte alone;
//! - an empty alternative is dropped: `a{,b}` matches `ab` only;
//! - a newline is an ordinary character (`*` and `**` match it).
//!
//! Literal paths are matched with the globs' own regexes (`Glob::regex`, the
//! semantics of `GlobMatcher`), not with `GlobSet`: `GlobSet`'s literal and
//! extension shortcuts skip a final `..` component, so `GlobSet` says `*.`
//! does not match `..` where the glob's regex says it does.
//!
//! Overlap is decided on valid UTF-8 strings, the only paths a `&str` can
//! hold: two globs overlap iff some string matches both.

use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use globset::{Glob, GlobBuilder};
use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::meta;
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::{start, syntax};
use regex_automata::{Anchored, Input, MatchKind, PatternSet};

/// The most bytes a glob list's automata may take together.
const LIST_DFA_LIMIT: usize = 16 << 20;
/// The most bytes the automaton of one compared pattern may take.
const PATTERN_DFA_LIMIT: usize = 4 << 20;
/// The most bytes a Thompson NFA may take (globset's own limit).
const NFA_LIMIT: usize = 10 << 20;
/// The most state triples one overlap search visits before giving up.
pub const VISIT_LIMIT: usize = 250_000;

/// Why a glob or a glob list cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlobError {
    /// A glob of a list does not parse.
    #[error("glob {index} `{glob}` is invalid: {reason}")]
    Invalid {
        /// Position of the glob in the list.
        index: usize,
        /// The glob as written.
        glob: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A glob of a list is too large to turn into an automaton.
    #[error("glob {index} `{glob}` is too complex to compare: {reason}")]
    TooComplex {
        /// Position of the glob in the list.
        index: usize,
        /// The glob as written.
        glob: String,
        /// What limit it went over.
        reason: String,
    },
    /// Each glob compiles alone but the list together is too large.
    #[error("the {count} globs together are too complex to compare: {reason}")]
    ListTooComplex {
        /// How many globs the list has.
        count: usize,
        /// What limit they went over.
        reason: String,
    },
    /// A pattern given for comparison does not parse.
    #[error("pattern `{glob}` is invalid: {reason}")]
    InvalidPattern {
        /// The pattern as written.
        glob: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A pattern given for comparison is too large to turn into an automaton.
    #[error("pattern `{glob}` is too complex to compare: {reason}")]
    PatternTooComplex {
        /// The pattern as written.
        glob: String,
        /// What limit it went over.
        reason: String,
    },
    /// The search for a path matching both sides went over its bound.
    #[error("comparing pattern `{glob}` gave up after {limit} states")]
    SearchLimit {
        /// The pattern being compared.
        glob: String,
        /// The bound on visited states.
        limit: usize,
    },
}

/// Whether glob lists are compiled when first used rather than when loaded
/// (`hook` and `explain` defer: one call compares a path with a few lists;
/// `lint`, `test` and the library compile all, so a glob that does not parse,
/// or a list too complex to compile, is a load error).
static DEFERRED: AtomicBool = AtomicBool::new(false);

/// Defers (or not) compiling glob lists to their first use. A list that then
/// fails to compile (a glob that does not parse, automata over their limit)
/// makes each rule that reads it fail closed, as a rule error; `lint` reports
/// the same list as a load error.
pub fn defer_automata(deferred: bool) {
    DEFERRED.store(deferred, Ordering::Relaxed);
}

/// A compiled list of path globs, matched as one set.
#[derive(Clone)]
pub struct PathGlobs {
    globs: Vec<String>,
    /// Each glob's regex (the semantics of `GlobMatcher`), made when first
    /// needed if the list is deferred.
    regexes: OnceLock<Result<Vec<String>, GlobError>>,
    /// The globs' regexes as one set, for literal paths; `None` for no globs.
    set: OnceLock<Result<Option<meta::Regex>, GlobError>>,
    /// One anchored DFA per glob, built from the glob's own regex.
    dfas: OnceLock<Result<Vec<Dfa>, GlobError>>,
    case_insensitive: bool,
}

type Dfa = dense::DFA<Vec<u32>>;

impl fmt::Debug for PathGlobs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PathGlobs")
            .field("globs", &self.globs)
            .field("case_insensitive", &self.case_insensitive)
            .finish_non_exhaustive()
    }
}

impl PathGlobs {
    /// Compiles the globs into one set and one automaton per glob; if
    /// [`defer_automata`] is on, nothing is compiled until the list is first
    /// used, and a glob that does not parse is an error then.
    ///
    /// # Errors
    /// A glob does not parse, or the automaton goes over its size limit.
    pub fn new(globs: &[String], case_insensitive: bool) -> Result<PathGlobs, GlobError> {
        if DEFERRED.load(Ordering::Relaxed) {
            return Ok(PathGlobs::unbuilt(globs, case_insensitive));
        }
        let list = PathGlobs::unbuilt(globs, case_insensitive);
        list.set()?;
        list.dfas()?;
        Ok(list)
    }

    /// As [`PathGlobs::new`], the automata built when first used: only a glob
    /// that does not parse is an error here.
    ///
    /// # Errors
    /// A glob does not parse.
    pub fn deferred(globs: &[String], case_insensitive: bool) -> Result<PathGlobs, GlobError> {
        let list = PathGlobs::unbuilt(globs, case_insensitive);
        list.regexes()?;
        Ok(list)
    }

    fn unbuilt(globs: &[String], case_insensitive: bool) -> PathGlobs {
        PathGlobs {
            globs: globs.to_vec(),
            regexes: OnceLock::new(),
            set: OnceLock::new(),
            dfas: OnceLock::new(),
            case_insensitive,
        }
    }

    fn regexes(&self) -> Result<&[String], GlobError> {
        let made = self.regexes.get_or_init(|| {
            let mut regexes = Vec::with_capacity(self.globs.len());
            for (index, glob) in self.globs.iter().enumerate() {
                let g =
                    compile(glob, self.case_insensitive).map_err(|reason| GlobError::Invalid {
                        index,
                        glob: glob.clone(),
                        reason,
                    })?;
                regexes.push(g.regex().to_string());
            }
            Ok(regexes)
        });
        made.as_deref().map_err(Clone::clone)
    }

    fn set(&self) -> Result<Option<&meta::Regex>, GlobError> {
        let regexes = self.regexes()?;
        let built = self.set.get_or_init(|| {
            if regexes.is_empty() {
                return Ok(None);
            }
            let regexes: Vec<&str> = regexes.iter().map(String::as_str).collect();
            regex_set(&regexes)
                .map(Some)
                .map_err(|reason| GlobError::ListTooComplex {
                    count: self.globs.len(),
                    reason,
                })
        });
        built.as_ref().map(Option::as_ref).map_err(Clone::clone)
    }

    fn dfas(&self) -> Result<&[Dfa], GlobError> {
        let regexes = self.regexes()?;
        let built = self.dfas.get_or_init(|| {
            let mut dfas = Vec::with_capacity(regexes.len());
            let mut total = 0usize;
            for (index, regex) in regexes.iter().enumerate() {
                let dfa = build_dfa(&[regex], PATTERN_DFA_LIMIT).map_err(|reason| {
                    GlobError::TooComplex {
                        index,
                        glob: self.globs.get(index).cloned().unwrap_or_default(),
                        reason,
                    }
                })?;
                total += dfa.memory_usage();
                if total > LIST_DFA_LIMIT {
                    return Err(GlobError::ListTooComplex {
                        count: self.globs.len(),
                        reason: format!("automata take more than {LIST_DFA_LIMIT} bytes"),
                    });
                }
                dfas.push(dfa);
            }
            Ok(dfas)
        });
        built.as_deref().map_err(Clone::clone)
    }

    /// Whether a literal path matches one of the globs.
    ///
    /// # Errors
    /// The list's automaton, built at first use, is too large.
    pub fn is_match(&self, path: &str) -> Result<bool, GlobError> {
        Ok(self
            .set()?
            .is_some_and(|re| re.is_match(Input::new(path).anchored(Anchored::Yes))))
    }

    /// Whether some path matches both `pattern` (a glob) and one of the globs.
    ///
    /// # Errors
    /// The pattern does not parse, its automaton is too large, or the search
    /// goes over [`VISIT_LIMIT`].
    pub fn overlaps(&self, pattern: &str) -> Result<bool, GlobError> {
        let dfas = self.dfas()?;
        let other = pattern_dfa(pattern, self.case_insensitive)?;
        let mut search = Search::new(&other, pattern)?;
        for dfa in dfas {
            if search.intersects(dfa)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a path, or any path a pattern stands for, matches the list.
    ///
    /// # Errors
    /// As [`PathGlobs::is_match`] and [`PathGlobs::overlaps`]: a pattern too
    /// complex to compare is an error, never a guess either way (the rule
    /// that asked fails closed).
    pub fn matches(&self, path_or_pattern: &str) -> Result<bool, GlobError> {
        if self.is_match(path_or_pattern)? {
            return Ok(true);
        }
        if is_pattern(path_or_pattern) {
            self.overlaps(path_or_pattern)
        } else {
            Ok(false)
        }
    }

    /// How many globs the list has.
    #[must_use]
    pub fn len(&self) -> usize {
        self.globs.len()
    }

    /// Whether the list has no globs.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.globs.is_empty()
    }

    /// The globs as written.
    #[must_use]
    pub fn globs(&self) -> &[String] {
        &self.globs
    }

    /// Whether the globs ignore case.
    #[must_use]
    pub fn case_insensitive(&self) -> bool {
        self.case_insensitive
    }

    /// Whether the path matches one of the automata (tests check that they
    /// agree with the regex set).
    #[cfg(test)]
    fn dfa_is_match(&self, path: &str) -> bool {
        let cfg = start::Config::new().anchored(Anchored::Yes);
        self.dfas().unwrap_or_default().iter().any(|dfa| {
            let Ok(mut s) = dfa.start_state(&cfg) else {
                return false;
            };
            for &b in path.as_bytes() {
                s = dfa.next_state(s, b);
            }
            accepts(dfa, s)
        })
    }
}

/// Whether the string holds unescaped glob syntax (`*`, `?`, `[`, `{`).
#[must_use]
pub fn is_pattern(s: &str) -> bool {
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '*' | '?' | '[' | '{' => return true,
            _ => {}
        }
    }
    false
}

/// Escapes a literal path so it matches only itself (globset::escape, plus `\`).
#[must_use]
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '?' | '*' | '[' | ']' | '{' | '}' | '\\' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}

/// Standalone: whether two globs overlap (both sides may be patterns).
///
/// # Errors
/// A glob does not parse, its automaton is too large, or the search goes
/// over [`VISIT_LIMIT`].
pub fn globs_overlap(a: &str, b: &str, case_insensitive: bool) -> Result<bool, GlobError> {
    let da = pattern_dfa(a, case_insensitive)?;
    let db = pattern_dfa(b, case_insensitive)?;
    Search::new(&db, b)?.intersects(&da)
}

/// Parses one glob with the house options.
fn compile(glob: &str, case_insensitive: bool) -> Result<Glob, String> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|e| e.kind().to_string())
}

/// Globs matched together with their own regexes: the semantics of
/// `GlobMatcher` (what `glob()` uses), not of `globset::GlobSet`, whose
/// literal and extension shortcuts skip a final `..` (see the module's notes).
#[derive(Debug, Clone)]
pub struct GlobRegexSet {
    set: meta::Regex,
    /// The globs, as written.
    globs: Vec<String>,
}

impl GlobRegexSet {
    /// One set of the globs' regexes, in their order.
    ///
    /// # Errors
    /// The set goes over its size limit.
    pub fn new<'g>(globs: impl IntoIterator<Item = &'g Glob>) -> Result<GlobRegexSet, String> {
        let globs: Vec<&Glob> = globs.into_iter().collect();
        let regexes: Vec<&str> = globs.iter().map(|g| g.regex()).collect();
        regex_set(&regexes).map(|set| GlobRegexSet {
            set,
            globs: globs.iter().map(|g| g.glob().to_string()).collect(),
        })
    }

    /// The globs, as written, in their order.
    #[must_use]
    pub fn globs(&self) -> &[String] {
        &self.globs
    }

    /// Whether the literal path matches one of the globs.
    #[must_use]
    pub fn is_match(&self, path: &str) -> bool {
        self.set.is_match(Input::new(path).anchored(Anchored::Yes))
    }

    /// The positions of the globs the literal path matches, in order.
    #[must_use]
    pub fn matches(&self, path: &str) -> Vec<usize> {
        let mut found = PatternSet::new(self.set.pattern_len());
        self.set
            .which_overlapping_matches(&Input::new(path).anchored(Anchored::Yes), &mut found);
        found.iter().map(|p| p.as_usize()).collect()
    }
}

/// Builds the regex set that matches literal paths, configured as globset
/// configures its own.
fn regex_set(regexes: &[&str]) -> Result<meta::Regex, String> {
    meta::Regex::builder()
        .syntax(syntax::Config::new().utf8(false).dot_matches_new_line(true))
        .configure(
            meta::Regex::config()
                .match_kind(MatchKind::All)
                .utf8_empty(false)
                .nfa_size_limit(Some(NFA_LIMIT))
                .hybrid_cache_capacity(NFA_LIMIT),
        )
        .build_many(regexes)
        .map_err(|e| e.to_string())
}

/// Compiles a pattern to compare into its anchored DFA.
fn pattern_dfa(pattern: &str, case_insensitive: bool) -> Result<Dfa, GlobError> {
    let g = compile(pattern, case_insensitive).map_err(|reason| GlobError::InvalidPattern {
        glob: pattern.to_string(),
        reason,
    })?;
    build_dfa(&[g.regex()], PATTERN_DFA_LIMIT).map_err(|reason| GlobError::PatternTooComplex {
        glob: pattern.to_string(),
        reason,
    })
}

/// Builds an anchored DFA for the regexes, read as globset reads them.
fn build_dfa(regexes: &[&str], limit: usize) -> Result<Dfa, String> {
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::All)
                .start_kind(StartKind::Anchored)
                .minimize(false)
                .accelerate(false)
                .dfa_size_limit(Some(limit))
                .determinize_size_limit(Some(limit)),
        )
        .syntax(syntax::Config::new().utf8(false).dot_matches_new_line(true))
        .thompson(
            thompson::Config::new()
                .utf8(false)
                .nfa_size_limit(Some(NFA_LIMIT)),
        )
        .build_many(regexes)
        .map_err(|e| e.to_string())
}

/// The DFA accepting exactly the valid UTF-8 strings.
fn utf8_dfa() -> Result<&'static Dfa, String> {
    static UTF8: OnceLock<Result<Dfa, String>> = OnceLock::new();
    UTF8.get_or_init(|| {
        dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(MatchKind::All)
                    .start_kind(StartKind::Anchored),
            )
            .build(r"(?s)^.*$")
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Whether the string that led to state `s` is a match (matches are delayed
/// by one byte, so the end-of-input transition decides).
fn accepts(dfa: &Dfa, s: StateID) -> bool {
    dfa.is_match_state(dfa.next_eoi_state(s))
}

/// A state of the product of two DFAs and the UTF-8 DFA.
type Triple = (StateID, StateID, StateID);

/// A small multiplicative hasher for state triples (the std one is slow for
/// this, and no hashing crate is a dependency).
#[derive(Default)]
struct TripleHasher(u64);

impl Hasher for TripleHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// The most bits the visited-set bitmap of one product search may take.
const BITMAP_LIMIT: usize = 1 << 24;

/// An upper bound on a dense DFA's state count, from its table's size.
fn state_bound(dfa: &Dfa) -> usize {
    dfa.memory_usage() / (StateID::SIZE * dfa.stride()) + 1
}

/// The visited state triples: a bitmap over the three DFAs' state indices
/// when it is small enough, else (and for any index beyond the bounds) a hash
/// set.
#[derive(Default)]
struct Seen {
    bits: Vec<u64>,
    /// State counts (upper bounds) of the three DFAs.
    dims: [usize; 3],
    /// `stride2` of the three DFAs: a state's index is its id shifted right.
    shifts: [usize; 3],
    spill: HashSet<Triple, BuildHasherDefault<TripleHasher>>,
}

impl Seen {
    /// Empties the set for DFAs of these state bounds and strides.
    fn reset(&mut self, dims: [usize; 3], shifts: [usize; 3]) {
        let len = dims[0].saturating_mul(dims[1]).saturating_mul(dims[2]);
        self.bits.clear();
        if len <= BITMAP_LIMIT {
            self.bits.resize(len.div_ceil(64), 0);
            self.dims = dims;
        } else {
            self.dims = [0; 3];
        }
        self.shifts = shifts;
        self.spill.clear();
    }

    /// Adds a triple; whether it was new.
    fn insert(&mut self, t: Triple) -> bool {
        let i = t.0.as_usize() >> self.shifts[0];
        let j = t.1.as_usize() >> self.shifts[1];
        let k = t.2.as_usize() >> self.shifts[2];
        let [di, dj, dk] = self.dims;
        if i < di && j < dj && k < dk {
            let n = (i * dj + j) * dk + k;
            if let Some(word) = self.bits.get_mut(n / 64) {
                let mask = 1u64 << (n % 64);
                let new = *word & mask == 0;
                *word |= mask;
                return new;
            }
        }
        self.spill.insert(t)
    }
}

/// The product search of one pattern against one DFA after another, its
/// buffers reused.
struct Search<'p> {
    pattern: &'p Dfa,
    glob: &'p str,
    utf8: &'static Dfa,
    /// Class of each byte in the pattern's and the UTF-8 DFA's alphabets.
    keys: [(u8, u8); 256],
    seen: Seen,
    stack: Vec<Triple>,
    reps: Vec<u8>,
    /// State triples the search may still visit, over all DFAs.
    budget: usize,
}

impl<'p> Search<'p> {
    /// Prepares to compare `pattern` (written as `glob`) with other DFAs.
    fn new(pattern: &'p Dfa, glob: &'p str) -> Result<Search<'p>, GlobError> {
        let utf8 = utf8_dfa().map_err(|reason| GlobError::PatternTooComplex {
            glob: glob.to_string(),
            reason,
        })?;
        let mut keys = [(0u8, 0u8); 256];
        for (byte, key) in (0..=u8::MAX).zip(keys.iter_mut()) {
            *key = (
                pattern.byte_classes().get(byte),
                utf8.byte_classes().get(byte),
            );
        }
        Ok(Search {
            pattern,
            glob,
            utf8,
            keys,
            seen: Seen::default(),
            stack: Vec::new(),
            reps: Vec::new(),
            budget: VISIT_LIMIT,
        })
    }

    fn too_complex(&self, reason: String) -> GlobError {
        GlobError::PatternTooComplex {
            glob: self.glob.to_string(),
            reason,
        }
    }

    /// Product-construction search: whether some valid UTF-8 string is
    /// accepted by both `other` and the pattern.
    ///
    /// Each visited state triple spends one unit of the budget; running out
    /// is an error.
    fn intersects(&mut self, other: &Dfa) -> Result<bool, GlobError> {
        let (a, b, u) = (other, self.pattern, self.utf8);
        let cfg = start::Config::new().anchored(Anchored::Yes);
        let start = |d: &Dfa| {
            d.start_state(&cfg)
                .map_err(|e| self.too_complex(e.to_string()))
        };
        let first = (start(a)?, start(b)?, start(u)?);

        // Representative bytes: a byte whose classes in all three DFAs equal
        // the previous byte's has the same transitions, so it is skipped.
        self.reps.clear();
        self.reps.push(0);
        let mut prev = (a.byte_classes().get(0), self.keys[0]);
        for byte in 1..=u8::MAX {
            let key = (a.byte_classes().get(byte), self.keys[usize::from(byte)]);
            if key != prev {
                self.reps.push(byte);
            }
            prev = key;
        }

        self.seen.reset(
            [state_bound(a), state_bound(b), state_bound(u)],
            [a.stride2(), b.stride2(), u.stride2()],
        );
        self.stack.clear();
        self.seen.insert(first);
        self.stack.push(first);
        while let Some((x, y, z)) = self.stack.pop() {
            if accepts(a, x) && accepts(b, y) && accepts(u, z) {
                return Ok(true);
            }
            for &byte in &self.reps {
                let nx = a.next_state(x, byte);
                if a.is_dead_state(nx) {
                    continue;
                }
                let ny = b.next_state(y, byte);
                if b.is_dead_state(ny) {
                    continue;
                }
                let nz = u.next_state(z, byte);
                if u.is_dead_state(nz) {
                    continue;
                }
                if a.is_quit_state(nx) || b.is_quit_state(ny) || u.is_quit_state(nz) {
                    return Err(GlobError::PatternTooComplex {
                        glob: self.glob.to_string(),
                        reason: format!("the automaton quit on byte {byte:#04x}"),
                    });
                }
                let next = (nx, ny, nz);
                if self.seen.insert(next) {
                    if self.budget == 0 {
                        return Err(GlobError::SearchLimit {
                            glob: self.glob.to_string(),
                            limit: VISIT_LIMIT,
                        });
                    }
                    self.budget -= 1;
                    self.stack.push(next);
                }
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn list(globs: &[&str]) -> PathGlobs {
        let v: Vec<String> = globs.iter().map(|s| (*s).to_string()).collect();
        PathGlobs::new(&v, false).unwrap()
    }

    fn list_ci(globs: &[&str]) -> PathGlobs {
        let v: Vec<String> = globs.iter().map(|s| (*s).to_string()).collect();
        PathGlobs::new(&v, true).unwrap()
    }

    fn glob_match(glob: &str, path: &str) -> bool {
        compile(glob, false)
            .unwrap()
            .compile_matcher()
            .is_match(path)
    }

    #[test]
    fn literal_paths() {
        let env = list(&["**/.env"]);
        assert!(env.is_match("/repo/.env").unwrap());
        assert!(env.is_match(".env").unwrap());
        assert!(!env.is_match("/repo/.envrc").unwrap());
        assert!(!env.is_match("/repo/x.env").unwrap());
        assert!(env.matches("/repo/.env").unwrap());
        assert!(!env.matches("/repo/.envrc").unwrap());
        assert_eq!(env.len(), 1);
        assert!(!env.is_empty());
    }

    #[test]
    fn dotdot_follows_the_regex_not_globset_set() {
        let mut b = globset::GlobSetBuilder::new();
        b.add(compile("*.", false).unwrap());
        let set = b.build().unwrap();
        assert!(!set.is_match(".."));
        assert!(glob_match("*.", ".."));
        let l = list(&["*.", "**/*."]);
        assert!(l.is_match("..").unwrap());
        assert!(l.is_match("/a/..").unwrap());
        assert!(l.overlaps("..").unwrap());
        assert!(l.overlaps("/a/..").unwrap());
    }

    #[test]
    fn overlap_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("/home/u/project/*", "**/.env", true),
            ("/home/u/project/src/*.rs", "**/.env", false),
            ("/home/u/.e?v", "**/.env", true),
            ("/home/u/**", "/home/u/.ssh/**", true),
            ("/tmp/**", "/home/u/.ssh/**", false),
            ("/home/u/[.]env", "**/.env", true),
            ("/home/u/[!.]env", "**/.env", false),
            ("{/a,/b}/x", "/b/*", true),
            ("{/a,/b}/x", "/c/*", false),
            ("/a/{x,y}.pem", "**/*.pem", true),
            ("/a/{x,y}.pem", "**/*.key", false),
            ("/x/[!.]*", "**/.env", false),
            ("/x/[!.]*", "**/env", true),
            ("/x/[!.]*", "/x/.*", false),
            ("/**", "/x", true),
            ("/**", "/", true),
            ("/**", "**", true),
            ("/**", "a/b", false),
            ("/**", "relative/**", false),
            ("/home/u/.ssh", "/home/u/.ssh/**", false),
            ("/home/u/.ssh/", "/home/u/.ssh/**", true),
            ("/home/u/.ssh/id_rsa", "/home/u/.ssh/**", true),
            ("/a/**/b", "/a/b", true),
            ("/a/**/b", "/a/x/y/b", true),
            ("/a/**/b", "/a/xb", false),
            ("/a/*", "/a/*/*", false),
            ("/a/*/b", "/a/**", true),
            ("/a/?", "/a/??", false),
            ("/a/*a", "/a/b*", true),
            ("/a/[a-c]", "/a/[c-e]", true),
            ("/a/[a-b]", "/a/[c-e]", false),
            ("/a/[/]", "/a/*", false),
            ("/a\\*", "/a*", true),
            ("/a\\*", "/ab", false),
            ("/a[[:digit:]]", "/a5", true),
            ("/a[[:digit:]]", "/ax", false),
        ];
        for &(a, b, want) in cases {
            assert_eq!(globs_overlap(a, b, false).unwrap(), want, "{a} vs {b}");
            assert_eq!(globs_overlap(b, a, false).unwrap(), want, "{b} vs {a}");
            assert_eq!(list(&[b]).overlaps(a).unwrap(), want, "{a} vs list [{b}]");
            // `[é]` matches no string, so these fillers change nothing.
            let filled = list(&["/[é]", b, "[é]/**"]);
            assert_eq!(
                filled.overlaps(a).unwrap(),
                want,
                "{a} vs filled list [{b}]"
            );
        }
    }

    #[test]
    fn recursive_edges_follow_globset() {
        // `/**` matches `/` but not ``; `foo/**` does not match `foo`.
        assert!(glob_match("/**", "/"));
        assert!(!glob_match("/**", ""));
        assert!(glob_match("foo/**", "foo/"));
        assert!(!glob_match("foo/**", "foo"));
        assert!(glob_match("**/foo", "foo"));
        assert!(glob_match("**/foo", "/foo"));
        assert!(glob_match("a/**/b", "a/b"));
        assert!(glob_match("**", ""));
        assert!(glob_match("*", ".env"));
        assert!(!glob_match("a{,b}", "a"));
        for (glob, path) in [
            ("/**", "/"),
            ("/**", ""),
            ("foo/**", "foo"),
            ("foo/**", "foo/"),
            ("**", ""),
            ("a{,b}", "a"),
        ] {
            let l = list(&[glob]);
            assert_eq!(
                l.overlaps(&escape(path)).unwrap(),
                l.is_match(path).unwrap(),
                "{glob} vs {path:?}"
            );
        }
    }

    #[test]
    fn newline_is_crossed_like_globset() {
        let l = list(&["/home/**", "**/.env"]);
        assert!(l.is_match("/home/a\nb").unwrap());
        assert!(l.is_match("/x\n/.env").unwrap());
        assert!(l.overlaps("/home/a\nb").unwrap());
        assert!(globs_overlap("/x\n/*", "**/.env", false).unwrap());
    }

    #[test]
    fn utf8_only_witnesses() {
        // `?` is one byte; `é` is two.
        assert!(!glob_match("/x/?", "/x/é"));
        assert!(glob_match("/x/??", "/x/é"));
        assert!(!globs_overlap("/x/?", "/x/é", false).unwrap());
        assert!(globs_overlap("/x/??", "/x/é", false).unwrap());
        // `[é]` is a class of the bytes 0xc3 and 0xa9: no string matches it.
        assert!(!globs_overlap("/x/[é]", "/x/?", false).unwrap());
        assert!(!globs_overlap("/x/[é]", "/x/*", false).unwrap());
        assert!(globs_overlap("/x/[é]?", "/x/*", false).unwrap());
        assert!(globs_overlap("/é/*", "/??/a", false).unwrap());
    }

    #[test]
    fn case_insensitive() {
        assert!(!list(&["**/.env"]).is_match("/REPO/.ENV").unwrap());
        assert!(list_ci(&["**/.env"]).is_match("/REPO/.ENV").unwrap());
        assert!(!list(&["**/.env"]).overlaps("/REPO/.ENV").unwrap());
        assert!(list_ci(&["**/.env"]).overlaps("/REPO/.ENV").unwrap());
        assert!(list_ci(&["**/.env"]).overlaps("/REPO/.E*").unwrap());
        assert!(list_ci(&["/Home/**"]).overlaps("/hOME/*").unwrap());
        assert!(globs_overlap("/A/*", "/a/b", true).unwrap());
        assert!(!globs_overlap("/A/*", "/a/b", false).unwrap());
        assert!(list_ci(&["**/.env"]).matches("/REPO/.ENV").unwrap());
        assert!(list_ci(&["**/.env"]).matches("/REPO/*").unwrap());
    }

    #[test]
    fn matches_dispatch() {
        let l = list(&["**/.env", "/home/u/.ssh/**"]);
        assert!(l.matches("/p/.env").unwrap());
        assert!(!l.matches("/p/.envrc").unwrap());
        assert!(l.matches("/p/*").unwrap());
        assert!(!l.matches("/p/*.rs").unwrap());
        assert!(l.matches("/home/u/**").unwrap());
        // An unparsable pattern is an error, which the asking rule counts
        // against the call (never a guess that it does not match).
        assert!(l.matches("/p/[unclosed").is_err());
        assert!(l.overlaps("/p/[unclosed").is_err());
        // A literal read as a pattern is still matched as itself.
        let br = list(&["/a/file[[]1]"]);
        assert!(br.is_match("/a/file[1]").unwrap());
        assert!(br.matches("/a/file[1]").unwrap());
        assert!(!br.overlaps("/a/file[1]").unwrap());
    }

    #[test]
    fn is_pattern_and_escape() {
        assert!(!is_pattern("/home/u/.env"));
        assert!(is_pattern("/home/*"));
        assert!(is_pattern("/home/?"));
        assert!(is_pattern("/home/[ab]"));
        assert!(is_pattern("/home/{a,b}"));
        assert!(!is_pattern("/home/\\*"));
        assert!(!is_pattern("/home/a}b,c]"));
        assert!(is_pattern("\\\\*"));
        for lit in [
            "/a*b", "/a?b", "/[x]", "/{a,b}", "/a\\b", "/a\\*", "/]}", "/é!",
        ] {
            let e = escape(lit);
            assert!(glob_match(&e, lit), "{lit} as {e}");
            assert!(list(&[&e]).is_match(lit).unwrap());
            assert!(globs_overlap(&e, &escape(lit), false).unwrap());
        }
        assert!(!glob_match(&escape("/a*"), "/ab"));
    }

    #[test]
    fn empty_list() {
        let l = PathGlobs::new(&[], false).unwrap();
        assert!(l.is_empty());
        assert!(!l.is_match("/x").unwrap());
        assert!(!l.overlaps("/**").unwrap());
        assert!(!l.matches("/**").unwrap());
        assert!(l.overlaps("[").is_err());
    }

    #[test]
    fn errors_name_index_and_glob() {
        let globs = vec!["/ok/**".to_string(), "/bad/[".to_string()];
        let err = PathGlobs::new(&globs, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "glob 1 `/bad/[` is invalid: unclosed character class; missing ']'"
        );
        let err = list(&["**"]).overlaps("/a/{b").unwrap_err();
        assert!(
            err.to_string().starts_with("pattern `/a/{b` is invalid: "),
            "{err}"
        );
        let err = PathGlobs::new(&["/a/**/**".to_string(), "a}".to_string()], false).unwrap_err();
        assert!(
            err.to_string().starts_with("glob 1 `a}` is invalid: "),
            "{err}"
        );
    }

    #[test]
    fn deferred_automata_fail_at_first_use_not_silently() {
        let big = format!("**/*a{}", "?".repeat(22));
        let globs = ["/x".to_string(), big];
        // Deferred, the list loads; a literal path matches through the set...
        let l = PathGlobs::deferred(&globs, false).unwrap();
        assert!(l.is_match("/x").unwrap());
        assert!(!l.is_match("/y").unwrap());
        // ...and the automaton too large to build is an error when a pattern
        // is compared, as it would have been at load.
        let err = l.matches("/x/*").unwrap_err();
        assert!(
            matches!(err, GlobError::TooComplex { index: 1, .. }),
            "{err}"
        );
        assert!(l.overlaps("/*").is_err());
        // A list that builds gives the same answers deferred and not.
        let ok = ["**/.env".to_string(), "/etc/*".to_string()];
        let (d, e) = (
            PathGlobs::deferred(&ok, false).unwrap(),
            PathGlobs::new(&ok, false).unwrap(),
        );
        for p in [
            "/a/.env",
            "/etc/passwd",
            "/etc/*",
            "**/*.env",
            "/srv/x",
            "/etc/**",
        ] {
            assert_eq!(d.matches(p).unwrap(), e.matches(p).unwrap(), "{p}");
        }
        // A glob that does not parse is still an error at once.
        assert!(PathGlobs::deferred(&["a}".to_string()], false).is_err());
    }

    #[test]
    fn limits_are_errors() {
        // `*a` followed by n `?` needs about 2^n DFA states.
        let big = format!("**/*a{}", "?".repeat(22));
        let err = PathGlobs::new(&["/x".to_string(), big.clone()], false).unwrap_err();
        assert!(
            matches!(err, GlobError::TooComplex { index: 1, .. }),
            "{err}"
        );
        assert!(
            err.to_string()
                .starts_with(&format!("glob 1 `{big}` is too complex"))
        );
        let l = list(&["**/.env"]);
        assert!(matches!(
            l.overlaps(&big),
            Err(GlobError::PatternTooComplex { .. })
        ));
        assert!(l.matches(&big).is_err());
        // A product that is too large to walk.
        let a = format!("/*a{}", "?".repeat(9));
        let b = format!("/*b{}", "?".repeat(9));
        let c = format!("/*c{}", "?".repeat(9));
        let pa = list(&[&a]);
        let pattern = format!("{{{b},{c}}}");
        match pa.overlaps(&pattern) {
            Ok(true) | Err(GlobError::SearchLimit { .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn seen_bitmap_and_spill() {
        let id = |n: u32| StateID::new(n as usize).unwrap();
        let mut seen = Seen::default();
        seen.reset([2, 2, 2], [0, 0, 0]);
        assert!(seen.insert((id(1), id(1), id(1))));
        assert!(!seen.insert((id(1), id(1), id(1))));
        // Beyond the bounds: the hash set takes it.
        assert!(seen.insert((id(5), id(0), id(0))));
        assert!(!seen.insert((id(5), id(0), id(0))));
        assert!(seen.bits.len() == 1 && seen.spill.len() == 1);
        // Too large for a bitmap: everything spills.
        seen.reset([1 << 10, 1 << 10, 1 << 10], [0, 0, 0]);
        assert!(seen.bits.is_empty());
        assert!(seen.insert((id(1), id(2), id(3))));
        assert!(!seen.insert((id(1), id(2), id(3))));
        assert_eq!(seen.spill.len(), 1);
    }

    #[test]
    fn send_sync() {
        fn check<T: Send + Sync>() {}
        check::<PathGlobs>();
        check::<GlobError>();
    }

    fn credential_list() -> Vec<String> {
        [
            "**/.env",
            "**/.env.*",
            "**/.envrc",
            "**/*.pem",
            "**/*.key",
            "**/*.p12",
            "**/*.pfx",
            "**/*.keystore",
            "**/*.jks",
            "**/id_rsa",
            "**/id_rsa*",
            "**/id_dsa*",
            "**/id_ecdsa*",
            "**/id_ed25519*",
            "/home/*/.ssh/**",
            "/root/.ssh/**",
            "/home/*/.aws/**",
            "/home/*/.config/gcloud/**",
            "/home/*/.azure/**",
            "/home/*/.kube/config",
            "/home/*/.docker/config.json",
            "/home/*/.netrc",
            "/home/*/.npmrc",
            "/home/*/.pypirc",
            "/home/*/.git-credentials",
            "/home/*/.gnupg/**",
            "/home/*/.password-store/**",
            "/home/*/.config/gh/hosts.yml",
            "/home/*/.cargo/credentials*",
            "/home/*/.terraform.d/credentials.tfrc.json",
            "**/secrets.{yml,yaml,json}",
            "**/credentials.{json,xml}",
            "**/*secret*",
            "**/*.tfstate",
            "**/*.tfstate.backup",
            "/etc/shadow",
            "/etc/gshadow",
            "/etc/ssl/private/**",
            "/var/run/secrets/**",
            "/proc/*/environ",
        ]
        .iter()
        .map(|s| (*s).to_string())
        .collect()
    }

    #[test]
    fn timing_credential_list() {
        use std::time::Instant;
        let globs = credential_list();
        assert_eq!(globs.len(), 40);
        let t = Instant::now();
        let l = PathGlobs::new(&globs, false).unwrap();
        let built = t.elapsed();
        let t = Instant::now();
        let l_ci = PathGlobs::new(&globs, true).unwrap();
        let built_ci = t.elapsed();
        let dfa_bytes: usize = l.dfas().unwrap().iter().map(|d| d.memory_usage()).sum();
        let patterns = [
            "/home/u/project/src/*.rs",
            "/home/u/project/*",
            "/home/u/**",
            "/tmp/build/**/*.o",
            "/**",
            "/usr/lib/?.so",
            "/usr/{lib,share}/x/**/?.so",
        ];
        for p in patterns {
            let n = 50u32;
            let t = Instant::now();
            let mut r = false;
            for _ in 0..n {
                r = l.overlaps(p).unwrap();
            }
            let per = t.elapsed() / n;
            println!("overlaps({p}) = {r}: {per:?} per call");
        }
        let n = 10_000u32;
        let t = Instant::now();
        let mut hits = 0;
        for i in 0..n {
            if l.is_match(&format!("/home/u/project/src/file{i}.rs"))
                .unwrap()
            {
                hits += 1;
            }
        }
        println!("is_match: {:?} per call ({hits} hits)", t.elapsed() / n);
        println!(
            "new(40 globs): {built:?}; case-insensitive: {built_ci:?}; DFAs take {dfa_bytes} bytes"
        );
        assert!(l.overlaps("/home/u/project/*").unwrap());
        assert!(l.overlaps("/home/u/project/src/*.rs").unwrap()); // `*secret*`
        assert!(!l.overlaps("/home/u/project/src/main.rs").unwrap());
        assert!(!l.overlaps("/home/u/project/src/?.rs").unwrap());
        assert!(l_ci.overlaps("/HOME/U/.SSH/*").unwrap());
    }

    // ---- differential tests ----

    /// Glob pieces over a tiny alphabet; the brute force below knows it.
    const TOKENS: &[&str] = &["a", ".", "/", "*", "?", "**", "[!.]", "{a,/}", "[a.]"];
    /// The same with an upper-case letter, for case-insensitive runs.
    const TOKENS_CASE: &[&str] = &["a", "A", ".", "/", "*", "?", "**", "[!A]"];

    fn glob_strategy(tokens: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(tokens), 0..=max)
            .prop_map(|toks| toks.concat())
    }

    fn literal_strategy() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            proptest::sample::select(&["a", "A", ".", "/", "b", "\n", "é", "*", "["][..]),
            0..8,
        )
        .prop_map(|cs| cs.concat())
    }

    /// Every string over `alphabet` of length at most `max`.
    fn all_strings(alphabet: &[char], max: usize) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut layer = vec![String::new()];
        for _ in 0..max {
            let mut next = Vec::new();
            for s in &layer {
                for &c in alphabet {
                    let mut t = s.clone();
                    t.push(c);
                    next.push(t);
                }
            }
            out.extend(next.iter().cloned());
            layer = next;
        }
        out
    }

    static SHORT: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    static SHORT_CASE: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

    /// Checks `globs_overlap` both ways against a brute-force witness search.
    fn check_witness(a: &str, b: &str, ci: bool, strings: &[String]) -> Result<(), TestCaseError> {
        let (Ok(ga), Ok(gb)) = (compile(a, ci), compile(b, ci)) else {
            return Ok(());
        };
        let (ma, mb) = (ga.compile_matcher(), gb.compile_matcher());
        let witness = strings.iter().find(|s| ma.is_match(s) && mb.is_match(s));
        let got = globs_overlap(a, b, ci).unwrap();
        prop_assert_eq!(
            got,
            witness.is_some(),
            "{:?} vs {:?}: witness {:?}",
            a,
            b,
            witness
        );
        let l = PathGlobs::new(&[a.to_string(), "/zzz".to_string()], ci).unwrap();
        let filler = globs_overlap("/zzz", b, ci).unwrap();
        prop_assert_eq!(l.overlaps(b).unwrap(), got || filler);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn set_agrees_with_dfa(
            globs in proptest::collection::vec(glob_strategy(TOKENS_CASE, 5), 1..4),
            more in proptest::collection::vec(glob_strategy(TOKENS, 5), 0..2),
            path in literal_strategy(),
            ci in any::<bool>(),
        ) {
            let globs: Vec<String> = globs.into_iter().chain(more).collect();
            let Ok(l) = PathGlobs::new(&globs, ci) else { return Ok(()); };
            let hit = l.is_match(&path).unwrap();
            prop_assert_eq!(hit, l.dfa_is_match(&path), "{:?} vs {:?}", globs, path);
            let escaped = escape(&path);
            prop_assert_eq!(l.overlaps(&escaped).unwrap(), hit, "{:?} vs {:?}", globs, path);
            // A pattern that cannot be compared is an error, unless the path
            // matches as a literal.
            let as_pattern = if is_pattern(&path) { l.overlaps(&path).ok() } else { Some(false) };
            prop_assert_eq!(l.matches(&path).ok(), if hit { Some(true) } else { as_pattern });
        }

        #[test]
        fn overlap_iff_witness(a in glob_strategy(TOKENS, 3), b in glob_strategy(TOKENS, 3)) {
            check_witness(&a, &b, false, SHORT.get_or_init(|| all_strings(&['a', '.', '/'], 6)))?;
        }

        #[test]
        fn overlap_iff_witness_case(
            a in glob_strategy(TOKENS_CASE, 3),
            b in glob_strategy(TOKENS_CASE, 3),
            ci in any::<bool>(),
        ) {
            let strings = SHORT_CASE.get_or_init(|| all_strings(&['a', 'A', '.', '/'], 6));
            check_witness(&a, &b, ci, strings)?;
        }
    }
}
