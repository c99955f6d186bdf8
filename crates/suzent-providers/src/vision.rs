//! Which models take images in a request (issue 19 item 4: attachments).
//!
//! First found wins ([`takes_images`]): the model's own setting
//! (`[models."provider/model"] images` in `config.toml`), then the table below of the providers'
//! documented vision models (OpenAI, Anthropic and Gemini model pages, and the vision families
//! that Ollama serves). A model nothing is known of takes none: its images are attached as files
//! the model can read by path, never sent where they would be refused.

use crate::ProviderKind;

/// Prefixes of OpenAI model ids that take image input.
const OPENAI: &[&str] = &[
    "gpt-5",
    "gpt-4.1",
    "gpt-4o",
    "gpt-4-turbo",
    "o1",
    "o3",
    "o4",
    "chatgpt-4o",
];

/// Parts of Ollama and local model names of vision families.
const LOCAL: &[&str] = &[
    "llava",
    "bakllava",
    "moondream",
    "llama3.2-vision",
    "qwen2.5vl",
    "qwen2-vl",
    "gemma3",
    "minicpm-v",
];

/// Whether `model_id` of `kind` is sent the images of attachments. `configured` is the model's
/// `images` setting, which overrides the table.
pub fn takes_images(kind: ProviderKind, model_id: &str, configured: Option<bool>) -> bool {
    if let Some(images) = configured {
        return images;
    }
    let id = model_id.to_ascii_lowercase();
    match kind {
        // o1-mini and o3-mini are text only.
        ProviderKind::OpenAi => {
            OPENAI.iter().any(|p| id.starts_with(p))
                && !(id.starts_with("o1-mini") || id.starts_with("o3-mini"))
        }
        // Every Claude 3 and later model reads images; Claude 2 and Instant did not.
        ProviderKind::Anthropic => {
            id.starts_with("claude-")
                && !id.starts_with("claude-2")
                && !id.starts_with("claude-instant")
        }
        // Every Gemini model takes images (the embedding models are not chat models).
        ProviderKind::Gemini => id.starts_with("gemini-") || id.starts_with("gemma-3"),
        ProviderKind::Ollama | ProviderKind::OpenAiCompatible | ProviderKind::Local => {
            LOCAL.iter().any(|p| id.contains(p))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_documented_vision_models_take_images_and_others_do_not() {
        let cases = [
            (ProviderKind::OpenAi, "gpt-4.1", true),
            (ProviderKind::OpenAi, "gpt-4o-mini", true),
            (ProviderKind::OpenAi, "o3-mini", false),
            (ProviderKind::OpenAi, "gpt-3.5-turbo", false),
            (ProviderKind::OpenAi, "mock", false),
            (ProviderKind::Anthropic, "claude-sonnet-4-5", true),
            (ProviderKind::Anthropic, "claude-2.1", false),
            (ProviderKind::Gemini, "gemini-2.5-flash", true),
            (ProviderKind::Ollama, "llava:13b", true),
            (ProviderKind::Ollama, "llama3.1:8b", false),
            (ProviderKind::Local, "SmolLM2-135M-Instruct-Q8_0", false),
        ];
        for (kind, model, expected) in cases {
            assert_eq!(takes_images(kind, model, None), expected, "{model}");
        }
    }

    #[test]
    fn the_models_setting_wins_over_the_table() {
        assert!(takes_images(
            ProviderKind::OpenAiCompatible,
            "my-vlm",
            Some(true)
        ));
        assert!(!takes_images(ProviderKind::OpenAi, "gpt-4.1", Some(false)));
    }
}
