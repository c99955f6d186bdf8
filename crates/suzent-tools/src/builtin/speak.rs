//! `speak` (seed 000 "Social & Output", issue 20 item 4): text to speech. The audio is stored
//! with the chat and played where the user is (the app's player on the tool card; channels send
//! the file), never on the speakers of the machine the runtime runs on.
//!
//! The tool checks the text, rate and volume and hands the call to the
//! [`SpeechHost`](crate::hosts::SpeechHost), which synthesizes with the configured backend and
//! stores the clip. The result is the clip as JSON ([`suzent_core::SpeechClip`]: path, MIME
//! type, duration, size, voice, backend).

use crate::speech::SpeechRequest;
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use schemars::JsonSchema;
use serde::Deserialize;
use suzent_core::{MAX_SPEECH_CHARS, SPEECH_RATE_RANGE};
use suzent_permissions::ToolAccess;

/// The longest voice name, in bytes.
pub const MAX_VOICE_LEN: usize = 128;

/// Arguments of `speak`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpeakArgs {
    /// What to say (plain text, at most 4000 characters).
    pub text: String,
    /// Voice name (espeak-ng: a language code such as `en-us`, optionally with a variant,
    /// `en-us+f3`; macOS: `Samantha`; OpenAI: `alloy`; Gemini: `Kore`). Default: the
    /// configured voice.
    #[serde(default)]
    pub voice: Option<String>,
    /// Speed as a multiple of normal, 0.5 to 2.0 (default 1.0).
    #[serde(default)]
    pub rate: Option<f32>,
    /// Loudness from 0.0 to 1.0 (default 1.0).
    #[serde(default)]
    pub volume: Option<f32>,
}

/// Converts text to speech stored with the chat.
#[derive(Debug)]
pub struct SpeakTool {
    spec: ToolSpec,
}

impl SpeakTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<SpeakArgs>(
                "speak",
                "SpeakTool",
                "output",
                "Speak",
                "Say text aloud to the user: synthesizes speech (voice, rate, volume) and \
                 stores the audio with this chat, where the app shows a player. Returns the \
                 clip as JSON (path, mimeType, durationMs, bytes). Use it when the user asks to \
                 hear something; keep the text short and plain.",
            ),
        }
    }
}

impl Default for SpeakTool {
    fn default() -> Self {
        Self::new()
    }
}

/// Checks the arguments: text present and within [`MAX_SPEECH_CHARS`], rate and volume in range,
/// a voice name of sane length. Errors are [`ToolError::InvalidArguments`] naming the value.
pub fn check_speak_args(args: SpeakArgs) -> Result<SpeechRequest, ToolError> {
    let text = args.text.trim().to_string();
    if text.is_empty() {
        return Err(ToolError::InvalidArguments(
            "text is empty: give the words to speak".into(),
        ));
    }
    let chars = text.chars().count();
    if chars > MAX_SPEECH_CHARS {
        return Err(ToolError::InvalidArguments(format!(
            "text is {chars} characters long, over the limit of {MAX_SPEECH_CHARS}; split it \
             into several calls or shorten it"
        )));
    }
    let rate = args.rate.unwrap_or(1.0);
    let (slow, fast) = SPEECH_RATE_RANGE;
    if !(rate.is_finite() && (slow..=fast).contains(&rate)) {
        return Err(ToolError::InvalidArguments(format!(
            "rate {rate} is outside {slow}..={fast} (1.0 is normal speed)"
        )));
    }
    let volume = args.volume.unwrap_or(1.0);
    if !(volume.is_finite() && (0.0..=1.0).contains(&volume)) {
        return Err(ToolError::InvalidArguments(format!(
            "volume {volume} is outside 0.0..=1.0"
        )));
    }
    let voice = args
        .voice
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty());
    if let Some(v) = &voice
        && (v.len() > MAX_VOICE_LEN || v.chars().any(char::is_control))
    {
        return Err(ToolError::InvalidArguments(format!(
            "voice {v:?} is not a voice name (at most {MAX_VOICE_LEN} bytes, no control characters)"
        )));
    }
    Ok(SpeechRequest {
        text,
        voice,
        rate,
        volume,
    })
}

#[async_trait::async_trait]
impl TypedTool for SpeakTool {
    type Args = SpeakArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// Speaking touches no file of the user's: the audio goes to Suzent's own data directory
    /// through the runtime.
    fn access(&self, _: &SpeakArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        Ok(ToolAccess::Other)
    }

    async fn call(&self, args: SpeakArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let request = check_speak_args(args)?;
        let host = ctx.speech.as_ref().ok_or_else(|| {
            ToolError::Failed("speech output is not available in this session".into())
        })?;
        let clip = tokio::select! {
            clip = host.speak(&ctx.chat_id, &request, &ctx.cancel) => clip.map_err(ToolError::Failed)?,
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        serde_json::to_string(&clip)
            .map_err(|e| ToolError::Failed(format!("internal error: the clip is not JSON: {e}")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn args(text: &str) -> SpeakArgs {
        SpeakArgs {
            text: text.into(),
            voice: None,
            rate: None,
            volume: None,
        }
    }

    #[test]
    fn defaults_are_normal_speed_and_full_volume() {
        assert_eq!(
            check_speak_args(args("  Hello  ")).unwrap(),
            SpeechRequest {
                text: "Hello".into(),
                voice: None,
                rate: 1.0,
                volume: 1.0
            }
        );
    }

    #[test]
    fn empty_text_is_refused() {
        assert_eq!(
            check_speak_args(args(" \n ")),
            Err(ToolError::InvalidArguments(
                "text is empty: give the words to speak".into()
            ))
        );
    }

    #[test]
    fn text_over_the_limit_is_refused_with_the_limit() {
        let long = "a".repeat(MAX_SPEECH_CHARS + 1);
        assert_eq!(
            check_speak_args(args(&long)),
            Err(ToolError::InvalidArguments(
                "text is 4001 characters long, over the limit of 4000; split it into several \
                 calls or shorten it"
                    .into()
            ))
        );
    }

    #[test]
    fn rate_and_volume_out_of_range_are_refused() {
        let mut a = args("hi");
        a.rate = Some(3.0);
        assert_eq!(
            check_speak_args(a),
            Err(ToolError::InvalidArguments(
                "rate 3 is outside 0.5..=2 (1.0 is normal speed)".into()
            ))
        );
        let mut a = args("hi");
        a.volume = Some(-0.1);
        assert_eq!(
            check_speak_args(a),
            Err(ToolError::InvalidArguments(
                "volume -0.1 is outside 0.0..=1.0".into()
            ))
        );
    }
}
