//! PLACEHOLDER until the backend branch is merged: the types only.
#![allow(missing_docs)]
use std::path::PathBuf;

pub mod plan;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
pub struct Envelope {
    pub reads: Vec<PathBuf>,
    pub writes: Vec<PathBuf>,
    pub exec: Vec<PathBuf>,
    pub deny_reads: Vec<String>,
    pub deny_writes: Vec<String>,
    pub search: Vec<PathBuf>,
    pub noexec: Vec<PathBuf>,
    pub network: Network,
    pub unix_sockets: bool,
    pub limits: Limits,
}
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    #[default]
    None,
    Ports(Vec<u16>),
    Any,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
pub struct Limits {
    pub processes: Option<u64>,
    pub file_size: Option<u64>,
    pub cpu_seconds: Option<u64>,
}
#[derive(Debug, Clone)]
pub struct Support {
    pub landlock_abi: Option<u32>,
}
impl Support {
    pub fn available(&self) -> bool {
        self.landlock_abi.is_some()
    }
}
impl std::fmt::Display for Support {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "placeholder")
    }
}
pub fn probe() -> Support {
    Support {
        landlock_abi: Some(7),
    }
}
