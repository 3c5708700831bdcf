//! Interim: replaced by the patch reader.

/// The files a patch touches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatchFiles {
    /// Written.
    pub writes: Vec<String>,
    /// Deleted.
    pub deletes: Vec<String>,
    /// Read.
    pub reads: Vec<String>,
}

/// A patch that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PatchError(pub String);

/// Reads a patch.
///
/// # Errors
/// Never in the interim version.
pub fn patch_files(text: &str) -> Result<PatchFiles, PatchError> {
    let mut f = PatchFiles::default();
    for line in text.lines() {
        let l = line.trim();
        for p in ["*** Add File: ", "*** Update File: ", "*** Move to: "] {
            if let Some(rest) = l.strip_prefix(p) {
                f.writes.push(rest.to_string());
            }
        }
        if let Some(rest) = l.strip_prefix("*** Delete File: ") {
            f.deletes.push(rest.to_string());
            f.writes.push(rest.to_string());
        }
    }
    Ok(f)
}
