//! The tags a command may carry (`c.tags`): a closed set, documented here
//! and nowhere else (docs/catalog.md's table is generated from this list
//! and checked by a test). A catalog entry, shipped or in a policy's
//! `commands:`, that names any other tag does not load (`unknown-tag`): a
//! tag no rule knows of would be a typo no rule ever sees.

/// One tag: its name, whether only the engine gives it, and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    /// The word rules test (`"destructive" in c.tags`).
    pub name: &'static str,
    /// The engine gives it from what it reads, and a catalog entry may not.
    pub engine_only: bool,
    /// What it means, for the documentation.
    pub doc: &'static str,
}

const fn tag(name: &'static str, doc: &'static str) -> Tag {
    Tag {
        name,
        engine_only: false,
        doc,
    }
}

const fn engine(name: &'static str, doc: &'static str) -> Tag {
    Tag {
        name,
        engine_only: true,
        doc,
    }
}

/// Every tag, in the documented order.
pub const TAGS: &[Tag] = &[
    tag(
        "destructive",
        "the subcommand or option destroys data or infrastructure (`terraform destroy`, `kubectl delete`, `git reset --hard`, `dropdb`)",
    ),
    tag(
        "force",
        "an option that skips a confirmation or a safety check (`-f`, `--force`, `-auto-approve`, `--yes`)",
    ),
    tag(
        "recursive",
        "an option that makes the command act on whole trees",
    ),
    tag("network", "the command reaches the network"),
    tag(
        "vcs-write",
        "a git command that changes the repository locally (`add`, `commit`)",
    ),
    tag(
        "vcs-lose",
        "a git command that can lose uncommitted or unpushed work (`reset --hard`, `clean -f`, `checkout -- .`, `stash drop`, `branch -D`, `push --force`)",
    ),
    tag(
        "vcs-config",
        "a git command that writes the repository's configuration (`git config NAME VALUE`), which can make later git commands run programs (`core.pager`, `core.hooksPath`); the default policy's `dev-workflow` does not allow it",
    ),
    tag(
        "runs-hooks",
        "a git command that runs the repository's hooks when it has them (`commit`, `merge`, `rebase`, `push`, `checkout`, `am`)",
    ),
    tag(
        "diff-output",
        "a git command or option that prints diffs, which the repository's textconv drivers may produce (`git diff`, `git log -p`, `git show`)",
    ),
    tag(
        "build",
        "builds, tests, formats or lints the project (`cargo test`, `npm test`, `make`)",
    ),
    tag(
        "runs-code",
        "the command (or, on an option, the command with that option) always runs code no rule can see: make's recipes, npm's scripts, a test runner's tests; it sets `runs_code`",
    ),
    tag(
        "runs-providers",
        "the command runs provider plugins and data sources of the configuration, any of which may run a program (`terraform init`, `plan`, `apply`); it is not read-only",
    ),
    tag(
        "runs-sql",
        "an option that makes a database client run SQL read from a file or chosen elsewhere (`psql -f`, `sqlite3 -init`), which the engine does not read",
    ),
    tag(
        "reads-local-files",
        "an option that lets SQL read local files and send them to the server (`mysql --local-infile`)",
    ),
    tag(
        "inline-code",
        "the call itself names the code that runs, through a `code` operand or option value (`make --eval`, `go test -exec CMD`, `python -c`) or an option with `runs_code` or the tag `runs-code` (`make -f FILE`, `cmake -E`); mostly given by the engine, and written in the catalog where the format cannot say it (`mix eval`); the default policy's `dev-workflow` trusts a build's own code (its Makefile, its tests), not this",
    ),
    tag(
        "foreign-repo",
        "a git option that points git at a repository other than the working folder's own (`--git-dir`, `--work-tree`)",
    ),
    tag(
        "privileged",
        "the command runs another with more privileges (`sudo`, `doas`, `su`)",
    ),
    tag(
        "root-shell",
        "an option that starts a shell with more privileges (`sudo -s`, `sudo -i`)",
    ),
    tag(
        "install",
        "installs packages (`npm install`, `pip install`)",
    ),
    tag(
        "file-edit",
        "the command creates, changes, moves or removes only the files it names (`mkdir`, `touch`, `cp`, `mv`, `rm`, `rmdir`, `chmod`, `sed -i`); the default policy's `dev-workflow` allows it inside the workspace",
    ),
    tag(
        "patch",
        "the command applies a diff to the files it names (`patch`)",
    ),
    tag(
        "writes-cwd",
        "the command writes files into its working folder that its words do not name (`tar -x`, `unzip`, `cpio -i`)",
    ),
    tag(
        "writes-remote-name",
        "the command writes each download under the name the server gives, in its working folder or the folder an option names (`wget URL`, `curl -O`)",
    ),
    tag(
        "kubeconfig-write",
        "the command changes the kubeconfig (`kubectl config use-context`, `set-context`, `set-credentials`)",
    ),
    tag(
        "module-runner",
        "the command runs the command named by its operands from the project's own environment or packages (`python -m pytest`, `npx vitest`, `uv run pytest`, `poetry run pytest`): that command is analysed as its own, with this one in its `wrappers`; `dev-workflow` trusts the pair only when that command is a build tool (`python -m cat` runs whatever `cat.py` the folder holds)",
    ),
    tag(
        "credentials",
        "the command prints, creates or changes credentials (`gh auth token`, `aws sts get-session-token`, `kubectl config view --raw`), or prints the environment, which holds them (`env`, `printenv`, `export -p`, `ps e`, jq's `env`)",
    ),
    tag(
        "kill",
        "the command signals other processes (`kill`, `pkill`, `killall`)",
    ),
    tag(
        "kernel",
        "the command loads or removes kernel code (`modprobe`, `insmod`, `rmmod`)",
    ),
    tag(
        "skips-hidden",
        "a search that skips hidden files unless an option tagged `all-files` is given (`rg`); a search grounded in the host walks its tree the same way (docs/effects.md)",
    ),
    tag(
        "all-files",
        "an option that makes a search tagged `skips-hidden` read hidden files too (`rg --hidden`, `rg -uu`)",
    ),
    tag(
        "prints-names",
        "the command prints only the names it lists, each under the folder it was given (`find DIR`), so a command fed its output by `xargs` gets names under that folder, not any string",
    ),
    engine(
        "unknown-options",
        "given by the engine: an operand not known here may hold options (an unquoted expansion), so the command's options are not all known",
    ),
    engine(
        "function",
        "given by the engine: a call of a function the script defines",
    ),
    engine(
        "recursion",
        "given by the engine: a function's call of itself from its own body (`:(){ :|:& };:`); the command is not read-only",
    ),
    engine(
        "background",
        "given by the engine: the command runs in the background (`&`)",
    ),
    engine(
        "loop",
        "given by the engine: the command runs in a `while`, `until` or `for ((…))` loop; in the background too, it is not read-only (`while true; do … & done`)",
    ),
];

/// The tag named `name`.
#[must_use]
pub fn find(name: &str) -> Option<&'static Tag> {
    TAGS.iter().find(|t| t.name == name)
}

/// The tags as a Markdown table, for the documentation.
#[must_use]
pub fn markdown() -> String {
    let mut out = String::from("| tag | meaning |\n| --- | --- |\n");
    for t in TAGS {
        // A `|` inside a table cell is written `\|`.
        out.push_str(&format!(
            "| `{}` | {} |\n",
            t.name,
            t.doc.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![expect(clippy::expect_used, reason = "tests")]
    use super::*;

    /// docs/catalog.md lists every tag as [`markdown`] gives it; with `ZP_UPDATE_DOCS=1` the test writes it there instead.
    #[test]
    fn the_documentation_lists_every_tag() {
        crate::docs_block::check("docs/catalog.md", "tags", &markdown(), "effects::tags");
    }

    #[test]
    fn names_are_unique_and_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for t in TAGS {
            assert!(seen.insert(t.name), "`{}` twice", t.name);
            assert!(
                t.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "`{}`",
                t.name
            );
        }
        assert!(find("destructive").is_some());
        assert!(find("destructve").is_none());
    }

    /// Every tag the engine writes itself is in the set: the words pushed
    /// onto `c.tags` in the effects code.
    #[test]
    fn the_engine_gives_only_known_tags() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/effects");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).expect("src/effects") {
            let path = entry.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("source");
            for (i, _) in text.match_indices("tags.push(\"") {
                let rest = &text[i + "tags.push(\"".len()..];
                let name = &rest[..rest.find('"').expect("closing quote")];
                assert!(find(name).is_some(), "{}: `{name}`", path.display());
                checked += 1;
            }
        }
        assert!(checked >= 5, "found {checked} tags pushed");
    }
}
