//! Suzent's model providers: one streaming chat interface ([`ModelProvider`]) over the wire
//! formats of OpenAI chat completions (and OpenAI-compatible servers, Ollama), Anthropic messages
//! and Gemini, and local models run in process by llama.cpp ([`local`], through `suzent-llama`).
//! What the wire formats share (the endpoint with its key, the SSE reader, error bodies) is in
//! one module; each provider's file holds only its own request mapping and stream events. For
//! local servers: tool calls written as text are recovered ([`recovery`]), requests are fitted to
//! small contexts ([`fit`]), and `suzent doctor --model` probes the server ([`probe`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), suzent_providers::ProviderError> {
//! use suzent_providers::{ModelRequest, StaticKeys, build_provider};
//! let keys = StaticKeys::new().with("openai", "sk-test");
//! let (provider, model) = build_provider("openai/gpt-4.1", &Default::default(), &keys)?;
//! let request = ModelRequest { model, system: "Be brief.".into(), messages: vec![], tools: vec![] };
//! let response = provider.stream(&request, &|delta| print!("{delta}")).await?;
//! println!("{:?}", response.stop_reason);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

use async_trait::async_trait;
use serde_json::Value;
use suzent_core::{ChatMessage, ToolCall};

/// A tool offered to the model: OpenAI function format parts.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// Runtime name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments (normalized per provider by the provider module).
    pub parameters: Value,
}

/// One model step's request.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The model id without the provider prefix (`gpt-4.1`).
    pub model: String,
    /// System prompt.
    pub system: String,
    /// The transcript so far.
    pub messages: Vec<ChatMessage>,
    /// Tools offered in this step.
    pub tools: Vec<ToolDefinition>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It hit the output limit.
    MaxTokens,
    /// Anything else the provider said, verbatim.
    Other(String),
}

/// A complete model step: text and tool calls with raw argument text (parsed later, strictly).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// All streamed text.
    pub text: String,
    /// Tool calls, in the order the model started them.
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// The tokens the provider counted, when it reported them.
    pub usage: Option<Usage>,
}

/// Token counts of one model response, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Tokens of the request (OpenAI `prompt_tokens`, Anthropic `input_tokens` plus cache
    /// reads and writes, Gemini `promptTokenCount`).
    pub input_tokens: u64,
    /// Tokens generated (OpenAI `completion_tokens`, Anthropic `output_tokens`, Gemini
    /// `candidatesTokenCount` plus `thoughtsTokenCount`).
    pub output_tokens: u64,
}

/// A provider failure, readable by the user.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// No key in the environment or the keychain.
    #[error(
        "no API key for {provider}: set {env_var} or store one with `suzent keys set {provider}`"
    )]
    MissingApiKey {
        /// Provider name.
        provider: String,
        /// The environment variable that would hold it.
        env_var: String,
    },
    /// The model string is not `provider/model` or names an unknown provider.
    #[error("invalid model '{model}': {message}")]
    InvalidModel {
        /// As given.
        model: String,
        /// Why.
        message: String,
    },
    /// The server answered with an error status.
    #[error("{provider} returned HTTP {status}: {body}")]
    Http {
        /// Provider name.
        provider: String,
        /// Status code.
        status: u16,
        /// Response body (bounded).
        body: String,
        /// How long the server asked to wait before retrying, in milliseconds (`Retry-After`
        /// in seconds, or OpenAI's `retry-after-ms`), when it said.
        retry_after_ms: Option<u64>,
    },
    /// Connection failed or the stream broke.
    #[error("{provider} connection failed: {message}")]
    Transport {
        /// Provider name.
        provider: String,
        /// Why.
        message: String,
    },
    /// The stream had data the client could not understand.
    #[error("{provider} sent an invalid stream: {message}")]
    Protocol {
        /// Provider name.
        provider: String,
        /// Why.
        message: String,
    },
    /// The model answered with nothing: no text and no tool call (public case R2-L10). Often a
    /// server that failed to parse a tool call and dropped it.
    #[error(
        "{provider} returned an empty completion ({completion_tokens} tokens) — possible tool-call parse failure"
    )]
    EmptyCompletion {
        /// Provider name.
        provider: String,
        /// Tokens the server said it generated (0 when it did not say).
        completion_tokens: u64,
    },
    /// The model started a tool call and the token limit cut it off before it was complete. The
    /// partial call is neither run nor shown as the answer.
    #[error(
        "the model's tool call was cut off by the token limit ({max_tokens} tokens) and was not run: raise [providers.{provider}] max_tokens"
    )]
    ToolCallCutOff {
        /// Provider name.
        provider: String,
        /// The token limit the reply reached.
        max_tokens: u32,
    },
    /// The turn was cancelled.
    #[error("cancelled")]
    Cancelled,
}

/// A model provider.
#[async_trait]
pub trait ModelProvider: Send + Sync {
    /// Provider name (`openai`, `anthropic`, `gemini`, `ollama`).
    fn name(&self) -> &str;

    /// Streams one step. `on_text` receives each text fragment as it arrives.
    async fn stream(
        &self,
        request: &ModelRequest,
        on_text: &TextSink<'_>,
    ) -> Result<ModelResponse, ProviderError>;
}

/// The text callback of [`ModelProvider::stream`]: `dyn Fn(&str) + Send + Sync`, callable with
/// any `&str`. Implementations write `on_text: &TextSink<'_>`.
///
/// Spelled through this alias because `#[async_trait]` rewrites an elided lifetime written
/// inside `Fn(&str)` in a method signature into a named lifetime parameter of the method, after
/// which an implementation could only pass strings that outlive the call — not the fragment it
/// just received.
pub type TextSink<'a> = dyn Fn(&str) + Send + Sync + 'a;

pub mod anthropic;
pub mod fit;
pub mod gemini;
pub mod local;
pub mod models;
pub mod openai;
pub mod pricing;
pub mod probe;
pub mod recovery;
pub mod resolve;
pub mod schema;
pub mod speech;
pub mod tokens;
mod turns;
pub mod vision;
pub mod window;
mod wire;

pub use anthropic::AnthropicProvider;
pub use gemini::GeminiProvider;
pub use local::LocalProvider;
pub use models::list_models;
pub use openai::OpenAiProvider;
pub use resolve::{
    CHANNEL_SECRET_PREFIX, EnvAndKeychain, KeySource, StaticKeys, build_provider, delete_api_key,
    keychain_has_key, parse_model, set_api_key, shared_client,
};
pub use schema::{normalize_schema, normalize_tool_schema};

/// The wire formats (and key/base-URL conventions) Suzent speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// OpenAI chat completions (also OpenAI-compatible servers).
    OpenAi,
    /// Anthropic messages.
    Anthropic,
    /// Google Gemini (`generativelanguage.googleapis.com`).
    Gemini,
    /// Ollama through its OpenAI-compatible endpoint; no key.
    Ollama,
    /// Any OpenAI-compatible server at a configured base URL; a key only if the server asks.
    OpenAiCompatible,
    /// Local models: in process (llama.cpp), or a local OpenAI-compatible server when
    /// `[providers.local] base_url` is set; no key.
    Local,
}

impl ProviderKind {
    /// Every provider, in the order they are listed to users.
    pub const ALL: [ProviderKind; 6] = [
        ProviderKind::Local,
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
        ProviderKind::Ollama,
        ProviderKind::OpenAiCompatible,
    ];

    /// The name used in model strings, config sections and the keychain (`openai`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Ollama => "ollama",
            ProviderKind::OpenAiCompatible => "openai-compatible",
            ProviderKind::Local => "local",
        }
    }

    /// Parses a provider name (case-insensitive).
    pub fn from_name(name: &str) -> Option<ProviderKind> {
        ProviderKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(name.trim()))
    }

    /// The environment variables that may hold the API key, in order of preference (empty for
    /// the providers that need none).
    pub fn key_env_vars(self) -> &'static [&'static str] {
        match self {
            ProviderKind::OpenAi => &["OPENAI_API_KEY"],
            ProviderKind::Anthropic => &["ANTHROPIC_API_KEY"],
            ProviderKind::Gemini => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
            ProviderKind::Ollama | ProviderKind::OpenAiCompatible | ProviderKind::Local => &[],
        }
    }

    /// Whether a request without a key is possible.
    pub fn needs_key(self) -> bool {
        !self.key_env_vars().is_empty()
    }

    /// Whether a key may be stored for it (`suzent keys set NAME`): the providers that need one,
    /// and OpenAI-compatible or local servers that ask for one.
    pub fn accepts_key(self) -> bool {
        self.needs_key() || matches!(self, ProviderKind::OpenAiCompatible | ProviderKind::Local)
    }

    /// Whether replies are searched for tool calls written as text (local servers, whose
    /// templates often put calls in the content).
    pub fn recovers_text_calls(self) -> bool {
        matches!(
            self,
            ProviderKind::Ollama | ProviderKind::OpenAiCompatible | ProviderKind::Local
        )
    }
}

impl std::fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
