//! The MCP adapter: tools that live in another process become ordinary
//! registry tools, and the host, not the server, decides how dangerous they are.
//!
//! - [`client`]: one `ToolClient` over stdio, streamable HTTP and SSE.
//! - [`lines`]: the stdio transport (JSON-RPC lines), bounded, bad lines answered.
//! - [`register`]: concurrent connect-and-list, then serial, all-or-none
//!   registration in server-name order, and the executors that call back
//!   through the one dispatch path.
//! - [`oauth`]: the OAuth client under streamable HTTP (MCP authorization).

pub mod client;
pub mod lines;
pub mod oauth;
pub mod register;
mod sse;
