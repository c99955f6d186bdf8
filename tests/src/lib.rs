//! Support code of Suzent's end-to-end tests.
//!
//! [`ScriptedServer`] is a local HTTP server that speaks the real streaming wire formats of
//! OpenAI chat completions, Anthropic messages and Gemini `streamGenerateContent`, replaying
//! scripted [`Turn`]s. It lives here, never in product code.

pub mod scripted;
mod wire;

pub use scripted::{Chunking, HttpFailure, Item, RecordedRequest, ScriptedServer, Turn};
