//! Suzent's local models: llama.cpp in process, so a fresh machine with no account and no network
//! can run the agent.
//!
//! - [`LocalEngine`] loads a GGUF model once (one worker thread owns the model and its KV cache),
//!   serves completion requests one at a time with streaming text, reuses the cached prompt prefix
//!   between steps, and unloads the model after an idle time.
//! - [`ChatTemplate`] renders the chat template stored in the GGUF file with minijinja (Qwen,
//!   Llama 3.x, Mistral, Phi and Gemma templates work), including tools and tool results.
//! - [`tool_grammar`] builds the grammar that constrains a tool call, from the tools' JSON
//!   Schemas with llama.cpp's own converter, in the model family's call syntax.
//!
//! Context size and threads come from the machine ([`machine`]) unless [`EngineOptions`] sets
//! them. GPU back ends are cargo features (`metal`, `vulkan`, `cuda`); the CPU is always there.
//!
//! ```no_run
//! use std::path::Path;
//! use suzent_llama::{EngineOptions, GenerateRequest, LocalEngine, ToolChoice};
//! use suzent_core::ChatMessage;
//!
//! let engine = LocalEngine::new(EngineOptions::default());
//! let request = GenerateRequest {
//!     system: "Answer briefly.".into(),
//!     messages: vec![ChatMessage::user("Name a colour.")],
//!     tools: Vec::new(),
//!     tool_choice: ToolChoice::Auto,
//!     max_tokens: 32,
//!     temperature: 0.0,
//!     seed: 0,
//! };
//! let generation = engine
//!     .generate(Path::new("model.gguf"), request, &mut |piece| print!("{piece}"))
//!     .unwrap();
//! println!("\n{} tokens/s", generation.tokens_per_second());
//! ```
#![deny(missing_docs)]

mod engine;
mod grammar;
pub mod machine;
pub mod models;
mod template;

pub use engine::{
    EngineOptions, Finish, GenerateEvent, GenerateRequest, Generation, LlamaError, LocalEngine,
    ModelInfo, Timings, ToolChoice,
};
pub use grammar::{GrammarError, ToolGrammar, response_grammar, tool_grammar};
pub use template::{
    ChatTemplate, TemplateError, TemplateTool, ToolFormat, generic_reply_schema, plain_messages,
    with_tool_instructions,
};
