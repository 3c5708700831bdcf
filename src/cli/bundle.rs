//! `zero-policy bundle build|sign|verify`: a signed policy bundle for many
//! machines (docs/fleet.md).

use std::path::{Path, PathBuf};

use crate::bundle;
use crate::cli::{EXIT_ERROR, EXIT_FAIL, EXIT_OK, Format};
use crate::output;

const EXAMPLES: &str = r#"Examples:

  zero-policy bundle build policies manifests profiles -o team.bundle --version 2026.12.05
  zero-policy bundle sign team.bundle --key ~/.minisign/team.key      # writes team.bundle.minisig
  minisign -Sm team.bundle -s ~/.minisign/team.key                    # the same, with minisign
  zero-policy bundle verify team.bundle --key team.pub
  zero-policy hook claude-code --bundle /etc/zero-policy/team.bundle --key /etc/zero-policy/team.pub
  zero-policy bundle fetch https://policy.example.com/team.bundle --key /etc/zero-policy/team.pub"#;

/// Build, sign and verify policy bundles.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub command: BundleCommand,
}

/// The `bundle` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum BundleCommand {
    /// Pack the YAML files of folders and files into one bundle (same input, same bytes).
    ///
    /// Each folder's `*.yaml`/`*.yml` files are stored under the folder's name
    /// (`policies/default.yaml`); a file under its own name. The files must load
    /// without errors. Exit 0 written, 1 the files have errors, 2 could not run.
    Build(BuildArgs),
    /// Sign a bundle with a minisign secret key, writing `FILE.minisig`.
    ///
    /// A password-protected key (minisign's default) takes its password from
    /// `ZERO_POLICY_KEY_PASSWORD`; `minisign -G -W` makes a key without one.
    /// Exit 0 signed, 2 could not sign.
    Sign(SignArgs),
    /// Check a bundle's signature (`FILE.minisig`) and every digest in it.
    ///
    /// Exit 0 good, 1 refused (signature, digest or format), 2 could not read.
    Verify(VerifyArgs),
    /// Fetch a bundle from an `https://` URL into the cache now, as `hook`,
    /// `run` and `serve` do on their schedule.
    ///
    /// Asks with the `ETag` of the copy held; a new bundle must verify with
    /// the key and not be signed before the copy, else the copy stays in
    /// force. `hook` and `run` start this in the background when the copy is
    /// older than `ZERO_POLICY_BUNDLE_POLL` seconds (default 300); run it
    /// from cron or at boot to fetch ahead. Exit 0 fetched or unchanged, 1
    /// refused or unreachable (the reason is kept and noted in each decision's
    /// log line until a fetch succeeds), 2 could not run.
    Fetch(FetchArgs),
}

/// `bundle fetch`.
#[derive(Debug, clap::Args)]
pub struct FetchArgs {
    /// The bundle's `https://` URL; its signature is at `URL.minisig`.
    #[arg(value_name = "URL")]
    pub url: String,
    /// The minisign public key: a `.pub` file, or the key itself (`RW…`).
    #[arg(long, value_name = "PUBKEY", env = "ZERO_POLICY_BUNDLE_KEY")]
    pub key: String,
    /// A PEM file of CA certificates to trust besides the system's.
    #[arg(long, value_name = "PEM", env = "ZERO_POLICY_BUNDLE_CA")]
    pub ca: Option<PathBuf>,
}

/// `bundle build`.
#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// Folders and files to pack.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// The bundle file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// The bundle's version; default `sha256:` and a hash of its files.
    #[arg(long, value_name = "VERSION")]
    pub version: Option<String>,
}

/// `bundle sign`.
#[derive(Debug, clap::Args)]
pub struct SignArgs {
    /// The bundle file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The minisign secret key file.
    #[arg(long, value_name = "SECKEY")]
    pub key: PathBuf,
}

/// `bundle verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The bundle file; its signature is `FILE.minisig`.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The minisign public key: a `.pub` file, or the key itself (`RW…`).
    #[arg(long, value_name = "PUBKEY")]
    pub key: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
}

/// Runs the command.
#[must_use]
pub fn run(args: &Args) -> u8 {
    match &args.command {
        BundleCommand::Build(a) => build(a),
        BundleCommand::Sign(a) => sign(a),
        BundleCommand::Verify(a) => verify(a),
        BundleCommand::Fetch(a) => fetch(a),
    }
}

fn fetch(args: &FetchArgs) -> u8 {
    let mut source = bundle::source::BundleSource::new(PathBuf::from(&args.url), args.key.clone());
    source.ca.clone_from(&args.ca);
    if !args.url.starts_with("https://") {
        output::error(&format!(
            "`{}` is not an https:// URL; a bundle is fetched over https only",
            args.url
        ));
        return EXIT_ERROR;
    }
    if let Err(e) = bundle::public_key(&args.key) {
        output::error(&e);
        return EXIT_ERROR;
    }
    let Some(root) = bundle::source::cache_root() else {
        output::error(
            "no cache folder to fetch into (set HOME, XDG_CACHE_HOME or ZERO_POLICY_CACHE)",
        );
        return EXIT_ERROR;
    };
    match source.refresh(&root) {
        Ok(bundle::source::Refreshed::New(v)) => {
            output::stdout(&format!("fetched bundle `{v}`; it is in force\n"));
            EXIT_OK
        }
        Ok(bundle::source::Refreshed::Unchanged(v)) => {
            output::stdout(&format!("bundle `{v}` is current\n"));
            EXIT_OK
        }
        Err(e) => {
            output::error(&e);
            EXIT_FAIL
        }
    }
}

/// Writes `bytes` beside `path` and renames it into place.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(format!(".tmp.{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

fn build(args: &BuildArgs) -> u8 {
    let files = match bundle::collect(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            output::error(&e);
            return EXIT_ERROR;
        }
    };
    let bytes = match bundle::build(&files, args.version.as_deref()) {
        Ok(b) => b,
        Err(e) => {
            output::error(&e);
            return EXIT_ERROR;
        }
    };
    // What is checked is what was packed: the files read back from the bytes.
    let packed = match bundle::read(&bytes) {
        Ok(b) => b,
        Err(e) => {
            output::error(&format!("the bundle does not read back: {e}"));
            return EXIT_ERROR;
        }
    };
    let loaded = crate::loader::load_sources_for(packed.sources(), crate::loader::Purpose::Check);
    if loaded.policy.is_none() {
        output::diagnostics_human(&loaded.diagnostics);
        output::error("the files have errors; fix them first (see `zero-policy lint`)");
        return EXIT_FAIL;
    }
    if let Err(e) = write_atomic(&args.output, &bytes) {
        output::error(&e);
        return EXIT_ERROR;
    }
    output::stdout(&format!(
        "wrote {}: version {}, {} file{}, sha256 {}\n",
        args.output.display(),
        packed.version(),
        packed.files.len(),
        if packed.files.len() == 1 { "" } else { "s" },
        packed.digest
    ));
    EXIT_OK
}

fn sign(args: &SignArgs) -> u8 {
    let bytes = match bundle::read_limited(&args.file) {
        Ok(b) => b,
        Err(e) => {
            output::error(&e);
            return EXIT_ERROR;
        }
    };
    let packed = match bundle::read(&bytes) {
        Ok(b) => b,
        Err(e) => {
            output::error(&format!("`{}` is not a bundle: {e}", args.file.display()));
            return EXIT_ERROR;
        }
    };
    let password = std::env::var("ZERO_POLICY_KEY_PASSWORD").ok();
    // The time orders bundles: a machine refuses one signed before the
    // bundle it already took (a replay), see `bundle::source`.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let comment = format!("zero-policy bundle {} timestamp:{now}", packed.version());
    let signature = match bundle::sign(&bytes, &args.key, password, &comment) {
        Ok(s) => s,
        Err(e) => {
            output::error(&e);
            return EXIT_ERROR;
        }
    };
    let sig_path = bundle::signature_path(&args.file);
    if let Err(e) = write_atomic(&sig_path, signature.as_bytes()) {
        output::error(&e);
        return EXIT_ERROR;
    }
    output::stdout(&format!(
        "wrote {}: version {}\n",
        sig_path.display(),
        packed.version()
    ));
    EXIT_OK
}

fn verify(args: &VerifyArgs) -> u8 {
    let key = match bundle::public_key(&args.key) {
        Ok(k) => k,
        Err(e) => {
            output::error(&e);
            return EXIT_ERROR;
        }
    };
    if let Err(e) = std::fs::metadata(&args.file) {
        output::error(&format!("cannot read `{}`: {e}", args.file.display()));
        return EXIT_ERROR;
    }
    let result = bundle::open(&args.file, &key);
    let name = args.file.display().to_string();
    match args.format {
        Format::Human => output::stdout(&output::bundle_verify_text(&name, &result)),
        Format::Json => output::bundle_verify_json(&name, &result),
    }
    if result.is_ok() { EXIT_OK } else { EXIT_FAIL }
}
