//! Providers' speech APIs for `speak` (issue 20 item 4):
//!
//! - OpenAI and OpenAI-compatible servers: `POST {base}/audio/speech` with `{model, voice,
//!   input, response_format: "wav", speed}`, answered with the audio bytes (OpenAI streams WAV
//!   with placeholder sizes; [`suzent_core::parse_wav`] reads it).
//! - Gemini: `POST {base}/v1beta/models/{model}:generateContent` with `generationConfig:
//!   {responseModalities: ["AUDIO"], speechConfig: {voiceConfig: {prebuiltVoiceConfig:
//!   {voiceName}}}}`, answered with base64 16-bit PCM in
//!   `candidates[0].content.parts[].inlineData` (`audio/L16;codec=pcm;rate=24000`), which is
//!   wrapped into WAV by the caller.
//!
//! Both return [`Pcm16`] samples; the volume is applied to the samples afterwards (neither API
//! takes one). Responses are read up to [`MAX_SPEECH_RESPONSE_BYTES`].

use crate::ProviderError;
use crate::wire::{join_url, transport};
use base64::Engine;
use serde_json::{Value, json};
use std::time::Duration;
use suzent_core::{Pcm16, parse_wav, pcm_rate_of_mime};

/// The most bytes of a speech response read (base64 or WAV).
pub const MAX_SPEECH_RESPONSE_BYTES: usize = 48 * 1024 * 1024;
/// How long one speech request may take in total.
pub const SPEECH_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// OpenAI's voice when none is named.
pub const OPENAI_DEFAULT_VOICE: &str = "alloy";
/// OpenAI's built-in voices (`/audio/speech` `voice`), checked before a request to OpenAI's own
/// API; an OpenAI-compatible server has its own and is asked as it is.
pub const OPENAI_VOICES: &[&str] = &[
    "alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse",
];
/// Gemini's voice when none is named.
pub const GEMINI_DEFAULT_VOICE: &str = "Kore";
/// Gemini's prebuilt TTS voices (`prebuiltVoiceConfig.voiceName`).
pub const GEMINI_VOICES: &[&str] = &[
    "Zephyr",
    "Puck",
    "Charon",
    "Kore",
    "Fenrir",
    "Leda",
    "Orus",
    "Aoede",
    "Callirrhoe",
    "Autonoe",
    "Enceladus",
    "Iapetus",
    "Umbriel",
    "Algieba",
    "Despina",
    "Erinome",
    "Algenib",
    "Rasalgethi",
    "Laomedeia",
    "Achernar",
    "Alnilam",
    "Schedar",
    "Gacrux",
    "Pulcherrima",
    "Achird",
    "Zubenelgenubi",
    "Vindemiatrix",
    "Sadachbia",
    "Sadaltager",
    "Sulafat",
];
/// The sample rate of Gemini's PCM when its MIME type names none.
pub const GEMINI_PCM_RATE: u32 = 24_000;

/// One request to a speech API.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeechCall<'a> {
    /// The model id (`gpt-4o-mini-tts`, `gemini-2.5-flash-preview-tts`).
    pub model: &'a str,
    /// The voice, already resolved (the default filled in).
    pub voice: &'a str,
    /// The text.
    pub input: &'a str,
    /// A multiple of normal speed (OpenAI's `speed`).
    pub speed: f32,
}

/// The voice error of a provider whose voices are known.
pub fn unknown_voice(provider: &str, voice: &str, voices: &[&str]) -> String {
    format!(
        "unknown voice '{voice}' for {provider}: available voices: {}",
        voices.join(", ")
    )
}

/// The body of OpenAI's `POST /audio/speech`.
pub fn openai_speech_body(call: &SpeechCall<'_>) -> Value {
    json!({
        "model": call.model,
        "voice": call.voice,
        "input": call.input,
        "response_format": "wav",
        "speed": call.speed,
    })
}

/// The body of Gemini's `generateContent` for speech.
pub fn gemini_speech_body(call: &SpeechCall<'_>) -> Value {
    json!({
        "contents": [{"role": "user", "parts": [{"text": call.input}]}],
        "generationConfig": {
            "responseModalities": ["AUDIO"],
            "speechConfig": {
                "voiceConfig": {"prebuiltVoiceConfig": {"voiceName": call.voice}}
            }
        }
    })
}

async fn read_capped(
    provider: &str,
    mut response: reqwest::Response,
) -> Result<Vec<u8>, ProviderError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport(provider, &e))?
    {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > MAX_SPEECH_RESPONSE_BYTES {
            return Err(ProviderError::Protocol {
                provider: provider.to_string(),
                message: format!("the speech response is over {MAX_SPEECH_RESPONSE_BYTES} bytes"),
            });
        }
    }
    Ok(bytes)
}

async fn send(
    provider: &str,
    http: reqwest::RequestBuilder,
    body: &Value,
) -> Result<reqwest::Response, ProviderError> {
    crate::wire::post_json(provider, http.timeout(SPEECH_REQUEST_TIMEOUT), body).await
}

/// Asks `POST {base_url}/audio/speech` (OpenAI or a compatible server, `provider` names it in
/// errors) for WAV; the key is sent as a bearer token when there is one.
pub async fn openai_speech(
    client: &reqwest::Client,
    provider: &str,
    base_url: &str,
    api_key: Option<&str>,
    call: &SpeechCall<'_>,
) -> Result<Pcm16, ProviderError> {
    let mut http = client.post(join_url(base_url, "audio/speech"));
    if let Some(key) = api_key {
        http = http.bearer_auth(key);
    }
    let response = send(provider, http, &openai_speech_body(call)).await?;
    let bytes = read_capped(provider, response).await?;
    parse_wav(&bytes).map_err(|e| ProviderError::Protocol {
        provider: provider.to_string(),
        message: format!("the speech response is {e}"),
    })
}

/// Asks Gemini's `generateContent` for audio and returns its PCM.
pub async fn gemini_speech(
    client: &reqwest::Client,
    base_url: &str,
    api_key: &str,
    call: &SpeechCall<'_>,
) -> Result<Pcm16, ProviderError> {
    let provider = "gemini";
    let base = base_url.trim_end_matches('/');
    let base = if base.ends_with("/v1beta") {
        base.to_string()
    } else {
        join_url(base, "v1beta")
    };
    let model = call.model.strip_prefix("models/").unwrap_or(call.model);
    let url = join_url(&base, &format!("models/{model}:generateContent"));
    let http = client.post(url).header("x-goog-api-key", api_key);
    let response = send(provider, http, &gemini_speech_body(call)).await?;
    let bytes = read_capped(provider, response).await?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| ProviderError::Protocol {
        provider: provider.to_string(),
        message: format!("the response is not JSON: {e}"),
    })?;
    gemini_pcm(&value)
}

/// The PCM of a Gemini `generateContent` answer: the `inlineData` parts of the first candidate,
/// concatenated.
pub fn gemini_pcm(value: &Value) -> Result<Pcm16, ProviderError> {
    let protocol = |message: String| ProviderError::Protocol {
        provider: "gemini".into(),
        message,
    };
    let parts = value
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            let reason = value
                .pointer("/candidates/0/finishReason")
                .or_else(|| value.pointer("/promptFeedback/blockReason"))
                .and_then(Value::as_str)
                .unwrap_or("no candidates");
            protocol(format!("the answer has no audio ({reason})"))
        })?;
    let mut data = Vec::new();
    let mut rate = None;
    for part in parts {
        let Some(inline) = part.get("inlineData") else {
            continue;
        };
        let mime = inline.get("mimeType").and_then(Value::as_str).unwrap_or("");
        if !mime.starts_with("audio/") {
            continue;
        }
        let b64 = inline.get("data").and_then(Value::as_str).unwrap_or("");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| protocol(format!("the audio is not base64: {e}")))?;
        if mime.starts_with("audio/wav") || mime.starts_with("audio/x-wav") {
            let pcm = parse_wav(&bytes).map_err(|e| protocol(format!("the audio is {e}")))?;
            rate = Some(pcm.sample_rate);
            data.extend_from_slice(&pcm.data);
        } else {
            rate = rate.or_else(|| pcm_rate_of_mime(mime));
            data.extend_from_slice(&bytes);
        }
    }
    if data.is_empty() {
        return Err(protocol("the answer has no audio part".into()));
    }
    data.truncate(data.len() / 2 * 2);
    Ok(Pcm16 {
        sample_rate: rate.unwrap_or(GEMINI_PCM_RATE),
        channels: 1,
        data,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn call() -> SpeechCall<'static> {
        SpeechCall {
            model: "gpt-4o-mini-tts",
            voice: "coral",
            input: "Hello",
            speed: 1.25,
        }
    }

    #[test]
    fn the_openai_body_asks_for_wav_at_the_speed() {
        assert_eq!(
            openai_speech_body(&call()),
            json!({"model": "gpt-4o-mini-tts", "voice": "coral", "input": "Hello", "response_format": "wav", "speed": 1.25})
        );
    }

    #[test]
    fn the_gemini_body_asks_for_audio_in_the_voice() {
        assert_eq!(
            gemini_speech_body(&call())["generationConfig"],
            json!({"responseModalities": ["AUDIO"], "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "coral"}}}})
        );
    }

    #[test]
    fn gemini_pcm_parts_are_joined_at_their_rate() {
        let b64 = base64::engine::general_purpose::STANDARD.encode([1u8, 0, 2, 0]);
        let answer = json!({"candidates": [{"content": {"parts": [
            {"inlineData": {"mimeType": "audio/L16;codec=pcm;rate=16000", "data": b64}},
            {"inlineData": {"mimeType": "audio/L16;codec=pcm;rate=16000", "data": b64}}
        ]}}]});
        assert_eq!(
            gemini_pcm(&answer).unwrap(),
            Pcm16 {
                sample_rate: 16000,
                channels: 1,
                data: vec![1, 0, 2, 0, 1, 0, 2, 0]
            }
        );
    }

    #[test]
    fn a_gemini_answer_without_audio_says_why() {
        let answer = json!({"candidates": [{"finishReason": "SAFETY"}]});
        assert_eq!(
            gemini_pcm(&answer).err().unwrap().to_string(),
            "gemini sent an invalid stream: the answer has no audio (SAFETY)"
        );
    }
}
