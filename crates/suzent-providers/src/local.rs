//! The `local/` provider: a GGUF model run in process by llama.cpp ([`suzent_llama`]).
//!
//! `local/ID` names the file `ID.gguf` in the models folder (`models/gguf` under the data
//! directory). The engine is shared by every chat of the process, so the model is loaded once;
//! it is unloaded after an idle time. The chat template comes from the GGUF; tool calls are
//! constrained by a grammar built from the tools' schemas and read back with the same tool-call
//! recovery every local server gets ([`super::recovery`]); the raw markup never reaches the UI.

use async_trait::async_trait;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use suzent_core::ToolCall;
use suzent_llama::{
    EngineOptions, Finish, GenerateEvent, GenerateRequest, LlamaError, LocalEngine, TemplateTool,
    ToolChoice,
};

use super::recovery::{OfferedTool, TextCallFilter};
use super::{ModelProvider, ModelRequest, ModelResponse, ProviderError, StopReason, TextSink};

/// Tokens a reply may have unless configured.
pub const DEFAULT_MAX_TOKENS: u32 = 2048;

/// The engine shared by every local provider of this process (one loaded model).
pub fn shared_engine(options: &EngineOptions) -> LocalEngine {
    static ENGINE: OnceLock<LocalEngine> = OnceLock::new();
    ENGINE
        .get_or_init(|| LocalEngine::new(options.clone()))
        .clone()
}

/// A client of the in-process engine for models in one folder.
#[derive(Debug, Clone)]
pub struct LocalProvider {
    engine: LocalEngine,
    models_dir: PathBuf,
    max_tokens: u32,
}

impl LocalProvider {
    /// Serves `local/ID` from `models_dir/ID.gguf` with `engine`; replies get at most
    /// `max_tokens` tokens.
    pub fn new(
        engine: LocalEngine,
        models_dir: impl Into<PathBuf>,
        max_tokens: u32,
    ) -> LocalProvider {
        LocalProvider {
            engine,
            models_dir: models_dir.into(),
            max_tokens: max_tokens.max(1),
        }
    }

    /// The GGUF file of model `id`.
    pub fn model_path(&self, id: &str) -> Result<PathBuf, ProviderError> {
        let valid = !id.is_empty()
            && !id.starts_with('.')
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        let path = self.models_dir.join(format!("{id}.gguf"));
        if !valid || !path.is_file() {
            return Err(ProviderError::InvalidModel {
                model: format!("local/{id}"),
                message: format!(
                    "no model file {}; `suzent models list` shows the installed models and `suzent models pull` adds one",
                    path.display()
                ),
            });
        }
        Ok(path)
    }
}

fn provider_error(error: LlamaError) -> ProviderError {
    ProviderError::Transport {
        provider: "local".into(),
        message: error.to_string(),
    }
}

/// A unique id for a call the model wrote as text (the model gives none).
pub(crate) fn generated_call_id() -> String {
    format!("call_{}", uuid::Uuid::new_v4().simple())
}

#[async_trait]
impl ModelProvider for LocalProvider {
    fn name(&self) -> &str {
        "local"
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        on_text: &TextSink<'_>,
    ) -> Result<ModelResponse, ProviderError> {
        let path = self.model_path(&request.model)?;
        // The first attempt gets the configured limit. A tool call it cut short is asked again
        // with room for a call (greedy decoding repeats the same reply, so the text already shown
        // is not shown twice); cut short again, it is an error, never an answer.
        let mut shown = ShownText::default();
        let mut max_tokens = self.max_tokens;
        loop {
            shown.next_attempt();
            match self
                .attempt(request, &path, max_tokens, &mut shown, on_text)
                .await?
            {
                Attempt::Reply(response) => return Ok(response),
                Attempt::CutCall if max_tokens < CALL_TOKENS => {
                    tracing::info!(
                        max_tokens,
                        "the token limit cut a tool call short; asking again with {CALL_TOKENS} tokens"
                    );
                    max_tokens = CALL_TOKENS;
                }
                Attempt::CutCall => {
                    tracing::warn!(max_tokens, "the token limit cut a tool call short");
                    return Err(ProviderError::ToolCallCutOff {
                        provider: "local".into(),
                        max_tokens,
                    });
                }
            }
        }
    }
}

/// How one generation ended.
enum Attempt {
    /// An answer, calls, or both.
    Reply(ModelResponse),
    /// The token limit cut a written tool call short; nothing of it was shown.
    CutCall,
}

/// Tokens a reply that cut a tool call short is given when asked again (unless the configured
/// limit is larger): enough for the arguments of a file write of a few pages.
pub const CALL_TOKENS: u32 = 4096;

/// The text shown for one reply over its attempts. An attempt asked again repeats what the
/// earlier one showed (greedy decoding), and that is not shown twice; text that differs is shown
/// from where it differs.
#[derive(Debug, Default)]
struct ShownText {
    /// What the earlier attempt showed.
    earlier: String,
    /// What this attempt has shown or repeated so far.
    now: String,
}

impl ShownText {
    /// Starts the next attempt.
    fn next_attempt(&mut self) {
        if self.now.len() >= self.earlier.len() {
            self.earlier = std::mem::take(&mut self.now);
        } else {
            self.now.clear();
        }
    }

    /// Shows `text` (the next piece of this attempt) through `on_text`, less what the earlier
    /// attempt already showed.
    fn show(&mut self, text: &str, on_text: &TextSink<'_>) {
        let start = self.now.len();
        self.now.push_str(text);
        let common: usize = self
            .earlier
            .chars()
            .zip(self.now.chars())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a.len_utf8())
            .sum();
        let fresh = &self.now[start.max(common)..];
        if !fresh.is_empty() {
            on_text(fresh);
        }
    }
}

impl LocalProvider {
    /// One generation with at most `max_tokens` tokens.
    async fn attempt(
        &self,
        request: &ModelRequest,
        path: &Path,
        max_tokens: u32,
        shown: &mut ShownText,
        on_text: &TextSink<'_>,
    ) -> Result<Attempt, ProviderError> {
        let tools: Vec<TemplateTool> = request
            .tools
            .iter()
            .map(|t| TemplateTool {
                name: t.name.clone(),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
            })
            .collect();
        let tool_choice = if repeats_a_call(&request.messages) {
            tracing::info!(
                "the model repeated a call it already has the result of; asking for the answer"
            );
            ToolChoice::None
        } else {
            ToolChoice::Auto
        };
        let generate = GenerateRequest {
            system: request.system.clone(),
            messages: request.messages.clone(),
            tools,
            tool_choice,
            max_tokens,
            temperature: 0.0,
            seed: 0,
        };
        let engine = self.engine.clone();
        let path = path.to_path_buf();
        let mut events = tokio::task::spawn_blocking(move || engine.start(&path, generate))
            .await
            .map_err(|e| ProviderError::Transport {
                provider: "local".into(),
                message: format!("the model thread failed: {e}"),
            })?
            .map_err(provider_error)?;
        let offer_tools = !request.tools.is_empty();
        let mut filter = TextCallFilter::new();
        let generation = loop {
            match events.recv().await {
                Some(GenerateEvent::Text(piece)) => {
                    let text = if offer_tools {
                        filter.push(&piece)
                    } else {
                        piece
                    };
                    shown.show(&text, on_text);
                }
                Some(GenerateEvent::Done(result)) => break result.map_err(provider_error)?,
                None => return Err(provider_error(LlamaError::WorkerGone)),
            }
        };
        tracing::debug!(
            prompt_tokens = generation.prompt_tokens,
            completion_tokens = generation.completion_tokens,
            cached = generation.timings.cached_tokens,
            constrained = generation.constrained,
            finish = ?generation.finish,
            raw = %generation.text,
            "local model reply"
        );
        let offered: Vec<OfferedTool<'_>> = request
            .tools
            .iter()
            .map(|t| OfferedTool {
                name: &t.name,
                parameters: &t.parameters,
            })
            .collect();
        let (recovered, tail) = if !offer_tools {
            (None, String::new())
        } else if generation.finish == Finish::Length {
            match filter.finish_at_limit(&offered) {
                Some(end) => end,
                None => return Ok(Attempt::CutCall),
            }
        } else {
            filter.finish(&offered)
        };
        shown.show(&tail, on_text);
        let (text, tool_calls) = match recovered {
            Some(reply) => {
                tracing::debug!(forms = ?reply.forms(), format = ?generation.tool_format, "tool calls read from the local model's text");
                let calls = reply
                    .calls
                    .into_iter()
                    .map(|call| ToolCall {
                        id: generated_call_id(),
                        name: call.name,
                        arguments: call.arguments,
                    })
                    .collect();
                (reply.text, calls)
            }
            None => (generation.text.clone(), Vec::new()),
        };
        let stop_reason = if !tool_calls.is_empty() {
            StopReason::ToolUse
        } else {
            match generation.finish {
                Finish::Stop => StopReason::EndTurn,
                Finish::Length => StopReason::MaxTokens,
                Finish::Cancelled => return Err(ProviderError::Cancelled),
            }
        };
        Ok(Attempt::Reply(ModelResponse {
            text,
            tool_calls,
            stop_reason,
            usage: None,
        }))
    }
}

/// Whether the newest assistant message repeats, call for call (same tools, same arguments), an
/// earlier one since the user last spoke: a small model that already has the result and asks
/// for it again. The next step may then only answer (the turn's loop guard is separate).
fn repeats_a_call(messages: &[suzent_core::ChatMessage]) -> bool {
    use suzent_core::ChatMessage;
    let since_user = messages
        .iter()
        .rposition(|m| matches!(m, ChatMessage::User { .. }))
        .map(|i| &messages[i + 1..])
        .unwrap_or(messages);
    let calls: Vec<Vec<(String, serde_json::Value)>> = since_user
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Assistant { tool_calls, .. } if !tool_calls.is_empty() => Some(
                tool_calls
                    .iter()
                    .map(|c| (c.name.clone(), c.arguments_for_history()))
                    .collect(),
            ),
            _ => None,
        })
        .collect();
    match calls.split_last() {
        Some((last, earlier)) => earlier.contains(last),
        None => false,
    }
}

/// `models/gguf` under `data_dir`: where local models live.
pub fn models_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("models").join("gguf")
}

#[cfg(test)]
mod tests {
    use super::*;
    use suzent_core::ChatMessage;

    fn call(args: &str) -> ChatMessage {
        ChatMessage::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: uuid::Uuid::new_v4().to_string(),
                name: "read_file".into(),
                arguments: args.into(),
            }],
        }
    }

    fn result() -> ChatMessage {
        ChatMessage::Tool {
            tool_call_id: "x".into(),
            tool_name: "read_file".into(),
            content: "text".into(),
            is_error: false,
        }
    }

    /// Pieces of each attempt through [`ShownText`]: what was shown.
    fn shown_over(attempts: &[&[&str]]) -> Vec<String> {
        let out = std::sync::Mutex::new(Vec::new());
        let sink = |t: &str| out.lock().unwrap().push(t.to_string());
        let mut shown = ShownText::default();
        for pieces in attempts {
            shown.next_attempt();
            for piece in *pieces {
                shown.show(piece, &sink);
            }
        }
        out.into_inner().unwrap()
    }

    #[test]
    fn an_attempt_asked_again_does_not_show_its_text_twice() {
        assert_eq!(
            shown_over(&[&["Let me ", "look.\n"], &["Let", " me look.\n", "Done."]]),
            ["Let me ", "look.\n", "Done."]
        );
        // A second attempt that says something else is shown from where it differs.
        assert_eq!(
            shown_over(&[&["Hi."], &["Hello", " there."]]),
            ["Hi.", "ello", " there."]
        );
    }

    #[test]
    fn a_call_repeated_since_the_user_spoke_asks_for_the_answer() {
        let user = ChatMessage::User {
            text: "q".into(),
            attachments: Vec::new(),
        };
        let a = r#"{"file_path": "a"}"#;
        assert!(!repeats_a_call(&[user.clone(), call(a), result()]));
        assert!(repeats_a_call(&[
            user.clone(),
            call(a),
            result(),
            call(r#"{"file_path":"a"}"#),
            result()
        ]));
        assert!(!repeats_a_call(&[
            user.clone(),
            call(a),
            result(),
            call(r#"{"file_path": "b"}"#),
            result()
        ]));
        assert!(!repeats_a_call(&[
            call(a),
            result(),
            user,
            call(a),
            result()
        ]));
    }
}
