//! Tests that hold a generated block of a documentation file equal to what
//! the code gives (the CEL fields, the reason codes, the tags): one check,
//! and with `ZP_UPDATE_DOCS=1` a rewrite of the block instead.
#![expect(clippy::expect_used, clippy::panic, reason = "tests")]

/// Checks that the block between `<!-- NAME:begin -->` and `<!-- NAME:end -->`
/// in `doc` (relative to the repository) is `generated`; `rerun` is the test
/// filter the failure message names.
pub(crate) fn check(doc: &str, name: &str, generated: &str, rerun: &str) {
    let path = format!("{}/{doc}", env!("CARGO_MANIFEST_DIR"));
    let begin = format!("<!-- {name}:begin -->\n");
    let end = format!("<!-- {name}:end -->");
    let text = std::fs::read_to_string(&path).expect("the documentation file");
    let (Some(b), Some(e)) = (text.find(&begin), text.find(&end)) else {
        panic!("{doc} has no {begin:?} … {end:?} block");
    };
    if std::env::var_os("ZP_UPDATE_DOCS").is_some() {
        let updated = format!("{}{generated}{}", &text[..b + begin.len()], &text[e..]);
        std::fs::write(&path, updated).expect("write the documentation file");
        return;
    }
    assert_eq!(
        &text[b + begin.len()..e],
        generated,
        "{doc} is stale: run `ZP_UPDATE_DOCS=1 cargo test --lib {rerun}`"
    );
}
