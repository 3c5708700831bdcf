//! Certificates for tests and benchmarks that start real TLS servers:
//! made by `openssl`, valid two days. Shared by `tests/common` and
//! `benches/fleet.rs` (by `#[path]`).

use std::path::{Path, PathBuf};

/// A private CA and a certificate it issued for 127.0.0.1 and `localhost`,
/// made in `dir` by the `openssl` tool: (CA certificate, server certificate,
/// server key), PEM files.
#[allow(clippy::panic, reason = "a test helper: a failure is the test's")]
pub fn test_certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use std::ffi::OsStr;
    let (ca, ca_key) = (dir.join("ca.pem"), dir.join("ca.key"));
    let (cert, key, csr) = (
        dir.join("server.pem"),
        dir.join("server.key"),
        dir.join("server.csr"),
    );
    let ext = dir.join("server.ext");
    std::fs::write(
        &ext,
        "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap_or_else(|e| panic!("cannot write {}: {e}", ext.display()));
    let openssl = |args: &[&OsStr]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("openssl: {e} (apt-get install openssl)"));
        assert!(out.status.success(), "openssl {args:?}: {out:?}");
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ]
    .map(OsStr::new);
    let s = OsStr::new;
    let mut args = vec![s("req"), s("-x509")];
    args.extend(ec);
    args.extend([s("-subj"), s("/CN=zero-policy test CA"), s("-days"), s("2")]);
    args.extend([s("-keyout"), ca_key.as_os_str(), s("-out"), ca.as_os_str()]);
    openssl(&args);
    let mut args = vec![s("req")];
    args.extend(ec);
    args.extend([s("-subj"), s("/CN=127.0.0.1")]);
    args.extend([s("-keyout"), key.as_os_str(), s("-out"), csr.as_os_str()]);
    openssl(&args);
    openssl(&[
        s("x509"),
        s("-req"),
        s("-in"),
        csr.as_os_str(),
        s("-CA"),
        ca.as_os_str(),
        s("-CAkey"),
        ca_key.as_os_str(),
        s("-CAcreateserial"),
        s("-days"),
        s("2"),
        s("-extfile"),
        ext.as_os_str(),
        s("-out"),
        cert.as_os_str(),
    ]);
    (ca, cert, key)
}
