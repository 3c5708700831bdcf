//! How MCP tools are named: a server's name and a tool's, under
//! `settings.mcp_name_format`. Below both the loader (which checks names) and
//! the registry (which gives them).

/// Lowercases a name part and turns runs outside `[a-z0-9_-]` into `_`, trimmed of `_`.
#[must_use]
pub fn sanitize_name_part(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    out.trim_matches('_').to_string()
}

/// The literal start of every MCP tool name of a server: `mcp__{server}__`.
#[must_use]
pub fn mcp_name_prefix(format: &str, server: &str) -> String {
    format
        .split("{tool}")
        .next()
        .unwrap_or("")
        .replace("{server}", &sanitize_name_part(server))
}

/// The final name of an MCP tool under a name format.
#[must_use]
pub fn mcp_tool_name(format: &str, server: &str, tool: &str) -> String {
    format
        .replace("{server}", &sanitize_name_part(server))
        .replace("{tool}", &sanitize_name_part(tool))
}

/// The remote name a `resources/read` through the gateway is decided as: a
/// manifest override on it (`tools: [resources/read]`) sets its safety and
/// effects, and rules see it as `tool.name` `mcp__{server}__resources/read`.
pub const RESOURCE_READ: &str = "resources/read";

/// The remote name a `prompts/get` through the gateway is decided as.
pub const PROMPT_GET: &str = "prompts/get";

/// The name a server's protocol surface (`resources/read`, `prompts/get`) is
/// decided under: the tool name format with the surface unchanged, so its `/`
/// sets it apart from every tool name (tool names never hold a `/`).
#[must_use]
pub fn mcp_surface_name(format: &str, server: &str, surface: &str) -> String {
    format
        .replace("{server}", &sanitize_name_part(server))
        .replace("{tool}", surface)
}

/// Whether a registered name is a protocol surface rather than a tool.
#[must_use]
pub fn is_surface_name(name: &str) -> bool {
    name.contains('/')
}
