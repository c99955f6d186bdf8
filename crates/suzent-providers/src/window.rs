//! Context windows: how many tokens (prompt and reply together) a model takes.
//!
//! Where the number comes from, first found wins ([`context_window`]):
//! 1. the model's own setting, `[models."provider/model"] context_window` in `config.toml`;
//! 2. what the provider reports: `context_size` of the provider's section, or the loaded
//!    model's context (`n_ctx`) of the in-process engine (passed in as `reported`);
//! 3. the table of known models below ([`known_window`]), by model id;
//! 4. [`DEFAULT_CONTEXT_WINDOW`], a conservative size for a model nothing is known of.
//!
//! The table lists the documented windows of the providers' current models (OpenAI, Anthropic
//! and Gemini model pages) and the trained context of common local GGUF families.

use crate::ProviderKind;

/// The window of a model nothing is known of, in tokens: the smallest that current cloud and
/// common local models offer (and the most a default tool set plus a reply fit comfortably
/// in). A server running a model with less (llama.cpp's server and Ollama are often started
/// with 4,096–8,192) answers with a context-overflow error, which compacts the chat and retries
/// once; set `context_window` (or the provider's `context_size`) to the real size to avoid it.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 32_768;

/// Where a context window came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// `[models."provider/model"] context_window`.
    Configured,
    /// The provider's `context_size` or the in-process engine's loaded context.
    Reported,
    /// The built-in table.
    Known,
    /// [`DEFAULT_CONTEXT_WINDOW`].
    Default,
}

/// A model's context window and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    /// Tokens, prompt and reply together.
    pub tokens: u32,
    /// Where the number came from.
    pub source: WindowSource,
}

/// The context window of model `model_id` of `kind`: `configured` (the model's setting), else
/// `reported` (the provider's), else the table, else [`DEFAULT_CONTEXT_WINDOW`].
pub fn context_window(
    kind: ProviderKind,
    model_id: &str,
    configured: Option<u32>,
    reported: Option<u32>,
) -> ContextWindow {
    if let Some(tokens) = configured {
        return ContextWindow {
            tokens,
            source: WindowSource::Configured,
        };
    }
    if let Some(tokens) = reported {
        return ContextWindow {
            tokens,
            source: WindowSource::Reported,
        };
    }
    match known_window(kind, model_id) {
        Some(tokens) => ContextWindow {
            tokens,
            source: WindowSource::Known,
        },
        None => ContextWindow {
            tokens: DEFAULT_CONTEXT_WINDOW,
            source: WindowSource::Default,
        },
    }
}

/// Known model families: (id prefix or part, window). Checked in order, so longer, more
/// specific names come before their family's.
const CLOUD: &[(&str, u32)] = &[
    // OpenAI.
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("chatgpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("codex-mini", 200_000),
    // Anthropic: every current Claude model takes 200k by default.
    ("claude-", 200_000),
    // Gemini.
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.5-flash", 1_048_576),
    ("gemini-2", 1_048_576),
    ("gemini-3", 1_048_576),
    ("gemini-1.0-pro", 32_760),
];

/// Local GGUF families by a part of the model id (lower-case, `-`, `_` and `.` as they come),
/// their trained context.
const LOCAL: &[(&str, u32)] = &[
    ("llama-3.1", 131_072),
    ("llama-3.2", 131_072),
    ("llama-3.3", 131_072),
    ("llama3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama3.3", 131_072),
    ("llama-3", 8_192),
    ("llama3", 8_192),
    ("llama-2", 4_096),
    ("qwen3", 32_768),
    ("qwen2.5", 32_768),
    ("qwen2", 32_768),
    ("deepseek-r1", 131_072),
    ("gemma-3", 131_072),
    ("gemma3", 131_072),
    ("gemma-2", 8_192),
    ("gemma2", 8_192),
    ("mixtral", 32_768),
    ("mistral-nemo", 131_072),
    ("mistral", 32_768),
    ("phi-4", 16_384),
    ("phi-3.5", 131_072),
    ("phi-3", 4_096),
    ("codellama", 16_384),
    ("smollm", 8_192),
];

/// The table's window of `model_id`, if the model is known. Cloud names match at the start of
/// the id (after an `org/` part, as OpenAI-compatible routers write them); local families match
/// anywhere in the id (`Qwen2.5-Coder-7B-Instruct-Q4_K_M`).
pub fn known_window(kind: ProviderKind, model_id: &str) -> Option<u32> {
    let id = model_id.to_ascii_lowercase();
    let bare = id.rsplit('/').next().unwrap_or(&id);
    let cloud = CLOUD
        .iter()
        .find(|(prefix, _)| bare.starts_with(prefix))
        .map(|(_, w)| *w);
    let local = || {
        LOCAL
            .iter()
            .find(|(part, _)| bare.contains(part))
            .map(|(_, w)| *w)
    };
    match kind {
        ProviderKind::OpenAi | ProviderKind::Anthropic | ProviderKind::Gemini => cloud,
        ProviderKind::Ollama | ProviderKind::OpenAiCompatible | ProviderKind::Local => {
            local().or(cloud)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn known_models_get_their_documented_windows() {
        let cases = [
            (ProviderKind::OpenAi, "gpt-4o-mini", Some(128_000)),
            (ProviderKind::OpenAi, "gpt-4.1-nano", Some(1_047_576)),
            (ProviderKind::OpenAi, "gpt-5-mini", Some(400_000)),
            (ProviderKind::OpenAi, "o3-mini", Some(200_000)),
            (ProviderKind::OpenAi, "o1-mini", Some(128_000)),
            (ProviderKind::OpenAi, "gpt-4", Some(8_192)),
            (ProviderKind::Anthropic, "claude-sonnet-4-5", Some(200_000)),
            (ProviderKind::Gemini, "gemini-2.5-pro", Some(1_048_576)),
            (
                ProviderKind::Local,
                "Qwen2.5-Coder-7B-Instruct-Q4_K_M",
                Some(32_768),
            ),
            (ProviderKind::Ollama, "llama3.1:8b", Some(131_072)),
            (
                ProviderKind::OpenAiCompatible,
                "openai/gpt-4o",
                Some(128_000),
            ),
            (ProviderKind::OpenAi, "my-finetune", None),
        ];
        let got: Vec<_> = cases
            .iter()
            .map(|(k, id, _)| (*k, *id, known_window(*k, id)))
            .collect();
        assert_eq!(got, cases.to_vec());
    }

    #[test]
    fn the_setting_beats_the_provider_which_beats_the_table_and_the_default_is_small() {
        let w = |c, r, id| context_window(ProviderKind::OpenAi, id, c, r);
        assert_eq!(
            [
                w(Some(9_000), Some(4_096), "gpt-4o"),
                w(None, Some(4_096), "gpt-4o"),
                w(None, None, "gpt-4o"),
                w(None, None, "unknown-model"),
            ],
            [
                ContextWindow {
                    tokens: 9_000,
                    source: WindowSource::Configured
                },
                ContextWindow {
                    tokens: 4_096,
                    source: WindowSource::Reported
                },
                ContextWindow {
                    tokens: 128_000,
                    source: WindowSource::Known
                },
                ContextWindow {
                    tokens: DEFAULT_CONTEXT_WINDOW,
                    source: WindowSource::Default
                },
            ]
        );
    }
}
