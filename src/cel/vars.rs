//! The declared types of the variables an expression reads: `tool`,
//! `session`, `call` (with each command and fetch), `lists` and `args`.
//!
//! The type checker ([`super::types`]) reads these declarations at load: a
//! field that is not declared here (`call.commands[0].progam`,
//! `session.mod`) is a load error, and so is an operator or function given a
//! value of the wrong type. `args` is dynamic: its fields are whatever the
//! call's JSON holds.

/// A declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// Any value: checked at run time only.
    Dyn,
    /// `null`.
    Null,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// A list of values of one type.
    List(&'static Ty),
    /// A map from strings to values of one type.
    Map(&'static Ty),
    /// A map with declared fields.
    Object(&'static Object),
    /// A value of the type, or `null`.
    OrNull(&'static Ty),
}

/// A map with declared fields: reading any other field is an error.
#[derive(Debug, PartialEq, Eq)]
pub struct Object {
    /// What it is, for messages (`a command`).
    pub name: &'static str,
    /// Where it is read from, for messages (`call.commands[i]`).
    pub path: &'static str,
    /// Its fields, with their types and what they hold.
    pub fields: &'static [Field],
}

/// One declared field.
#[derive(Debug, PartialEq, Eq)]
pub struct Field {
    /// The name.
    pub name: &'static str,
    /// The type.
    pub ty: Ty,
    /// What it holds, one sentence.
    pub doc: &'static str,
}

const STRINGS: Ty = Ty::List(&Ty::String);

const fn f(name: &'static str, ty: Ty, doc: &'static str) -> Field {
    Field { name, ty, doc }
}

/// `tool`.
pub static TOOL: Object = Object {
    name: "`tool`",
    path: "tool",
    fields: &[
        f("name", Ty::String, "the tool's name in the registry"),
        f(
            "server",
            Ty::String,
            "the MCP server it comes from, or `\"\"`",
        ),
        f(
            "remote_name",
            Ty::String,
            "the server's own name for it, or `\"\"`",
        ),
        f(
            "scope",
            Ty::String,
            "its scope (`shell`, `read`, `write`, `network`, …)",
        ),
        f("side_effect", Ty::String, "its declared side effect"),
        f("permission", Ty::String, "its declared permission"),
        f("deferred", Ty::Bool, "whether its MCP server is deferred"),
    ],
};

/// `session`.
pub static SESSION: Object = Object {
    name: "`session`",
    path: "session",
    fields: &[
        f(
            "mode",
            Ty::String,
            "the agent's mode (`ask`, `plan`, `auto`, …)",
        ),
        f("workspace", Ty::String, "the workspace folder"),
        f("scopes", STRINGS, "the scopes granted"),
        f("labels", Ty::Map(&Ty::String), "free-form labels"),
        f(
            "agent",
            Ty::String,
            "the front door's agent (`claude-code`, …), `\"\"` for explain and test",
        ),
    ],
};

/// One of `call.fetches` (and of a command's `fetches`).
pub static FETCH: Object = Object {
    name: "a fetch",
    path: "call.fetches[i]",
    fields: &[
        f("url", Ty::String, "the URL"),
        f("scheme", Ty::String, "its scheme"),
        f("host", Ty::String, "its host, normalised as `url_host`"),
        f("port", Ty::OrNull(&Ty::Int), "its port, or `null`"),
        f("path", Ty::String, "its path"),
    ],
};

/// One of `call.commands`.
pub static COMMAND: Object = Object {
    name: "a command",
    path: "call.commands[i]",
    fields: &[
        f("program", Ty::String, "the basename of what runs"),
        f("path", Ty::String, "the program as written"),
        f("argv", STRINGS, "its words after the wrappers"),
        f("cwd", Ty::String, "its working folder"),
        f("wrappers", STRINGS, "the commands that led to it"),
        f("known", Ty::Bool, "whether the catalog has it"),
        f("read_only", Ty::Bool, "read-only by the catalog"),
        f("exact", Ty::Bool, "its analysis is exact"),
        f("subcommand", Ty::String, "its subcommand, or `\"\"`"),
        f("options", STRINGS, "its options"),
        f("operands", STRINGS, "its operands"),
        f("tags", STRINGS, "the catalog's tags"),
        f("reads", STRINGS, "what it reads"),
        f(
            "lists",
            STRINGS,
            "what it lists: names, sizes and times, not contents",
        ),
        f("writes", STRINGS, "what it writes"),
        f("deletes", STRINGS, "what it deletes"),
        f("fetches", Ty::List(&Ty::Object(&FETCH)), "what it fetches"),
        f("runs_code", Ty::Bool, "it runs code no rule can see"),
        f("fetched_input", Ty::Bool, "it reads what a fetch brought"),
    ],
};

/// `call`.
pub static CALL: Object = Object {
    name: "`call`",
    path: "call",
    fields: &[
        f(
            "commands",
            Ty::List(&Ty::Object(&COMMAND)),
            "every command the call may run",
        ),
        f("reads", STRINGS, "paths it reads"),
        f(
            "lists",
            STRINGS,
            "paths it lists: names, sizes and times, not contents",
        ),
        f("writes", STRINGS, "paths it writes"),
        f("deletes", STRINGS, "paths it deletes"),
        f("paths", STRINGS, "`reads` and `writes` together"),
        f("fetches", Ty::List(&Ty::Object(&FETCH)), "URLs it fetches"),
        f(
            "runs_code",
            Ty::Bool,
            "some command runs code no rule can see",
        ),
        f("exact", Ty::Bool, "the analysis is exact"),
        f(
            "unknown",
            STRINGS,
            "why not, one sentence each, for people (the wording may change)",
        ),
        f(
            "inexact",
            STRINGS,
            "why not, as stable codes (listed below), `inexact[i]` the code of `unknown[i]`",
        ),
        f("confined", Ty::Bool, "the call runs confined by the kernel"),
    ],
};

/// The type of a variable; `None` for a name that is not one.
#[must_use]
pub fn variable(name: &str) -> Option<Ty> {
    Some(match name {
        "tool" => Ty::Object(&TOOL),
        "session" => Ty::Object(&SESSION),
        "call" => Ty::Object(&CALL),
        "lists" => Ty::Map(&STRINGS),
        "args" => Ty::Dyn,
        _ => return None,
    })
}

impl Object {
    /// The field named `name`.
    #[must_use]
    pub fn field(&self, name: &str) -> Option<&'static Field>
    where
        Self: 'static,
    {
        self.fields.iter().find(|f| f.name == name)
    }
}

impl Ty {
    /// The type's name, for messages.
    #[must_use]
    pub fn describe(self) -> String {
        match self {
            Ty::Dyn => "a value".to_string(),
            Ty::Null => "null".to_string(),
            Ty::Bool => "a bool".to_string(),
            Ty::Int => "an int".to_string(),
            Ty::Uint => "a uint".to_string(),
            Ty::Double => "a double".to_string(),
            Ty::String => "a string".to_string(),
            Ty::Bytes => "bytes".to_string(),
            Ty::List(_) => "a list".to_string(),
            Ty::Map(_) => "a map".to_string(),
            Ty::Object(o) => o.name.to_string(),
            Ty::OrNull(t) => format!("{} or null", t.describe()),
        }
    }
}

/// The declarations as Markdown: one table per object, for the documentation.
#[must_use]
pub fn markdown() -> String {
    let mut out = String::new();
    for o in [&TOOL, &SESSION, &CALL, &COMMAND, &FETCH] {
        out.push_str(&format!(
            "#### `{}`\n\n| field | type | value |\n| --- | --- | --- |\n",
            o.path
        ));
        for fld in o.fields {
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                fld.name,
                type_name(fld.ty),
                fld.doc
            ));
        }
        out.push('\n');
    }
    out
}

/// The CEL name of a type (`list(string)`).
#[must_use]
pub fn type_name(ty: Ty) -> String {
    match ty {
        Ty::Dyn => "dyn".to_string(),
        Ty::Null => "null".to_string(),
        Ty::Bool => "bool".to_string(),
        Ty::Int => "int".to_string(),
        Ty::Uint => "uint".to_string(),
        Ty::Double => "double".to_string(),
        Ty::String => "string".to_string(),
        Ty::Bytes => "bytes".to_string(),
        Ty::List(t) => format!("list({})", type_name(*t)),
        Ty::Map(t) => format!("map(string, {})", type_name(*t)),
        Ty::Object(o) => format!("`{}`", o.path),
        Ty::OrNull(t) => format!("{} or null", type_name(*t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/cel.md holds the declarations as [`markdown`] gives them; with `ZP_UPDATE_DOCS=1` the test writes it there instead.
    #[test]
    fn the_documentation_lists_every_declared_field() {
        crate::docs_block::check("docs/cel.md", "vars", &markdown(), "cel::vars");
    }

    #[test]
    fn every_variable_is_declared() {
        for name in crate::cel::VARIABLES {
            assert!(variable(name).is_some(), "{name}");
        }
        assert_eq!(variable("request"), None);
        assert_eq!(COMMAND.field("program").map(|f| f.ty), Some(Ty::String));
        assert_eq!(CALL.field("progam"), None);
    }
}
