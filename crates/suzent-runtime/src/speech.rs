//! The speech service (issue 20 item 4): the [`SpeechHost`] that `speak` talks to. It
//! synthesizes with the backend `[speech] model` names — the OS voices (`system`, see
//! `suzent_tools::speech`) or a provider's speech API (`openai/…`, `openai-compatible/…`,
//! `gemini/…`, see `suzent_providers::speech`) — and stores every clip as a canonical WAV file
//! in the chat's speech folder, `<data>/speech/<chat id>/<uuid>.wav`.
//!
//! That folder is under Suzent's data directory, which every tool's path policy protects: the
//! agent cannot overwrite or plant audio there, and what the app plays (its `suzent-audio:`
//! scheme asks [`SpeechService::clip_path`]) is only what this service wrote. A clip is written
//! to a temporary file beside its final name and renamed, so a crash never leaves half a file.
//! Deleting a chat deletes its clips.

use crate::dirs::Paths;
use crate::error::RuntimeError;
use crate::provider::speech::{
    GEMINI_DEFAULT_VOICE, GEMINI_VOICES, OPENAI_DEFAULT_VOICE, OPENAI_VOICES, SpeechCall,
    gemini_speech, openai_speech, unknown_voice,
};
use crate::provider::{ProviderKind, parse_model};
use crate::settings::SettingsService;
use async_trait::async_trait;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use suzent_core::{SPEECH_MIME, SYSTEM_SPEECH, SpeechClip, SpeechConfig, encode_wav};
use suzent_tools::SpeechHost;
use suzent_tools::speech::{SpeechRequest, Synthesized, SystemSynth, synthesize_system};
use tokio_util::sync::CancellationToken;

/// Synthesizes and stores speech clips.
pub(crate) struct SpeechService {
    /// `<data>/speech`.
    root: PathBuf,
    settings: Arc<SettingsService>,
}

impl std::fmt::Debug for SpeechService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpeechService")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// Whether `s` is one plain path component made of letters, digits, `-`, `_` and `.` (not
/// starting with a dot): chat ids and clip file names.
fn plain_component(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl SpeechService {
    pub(crate) fn new(paths: &Paths, settings: Arc<SettingsService>) -> SpeechService {
        SpeechService {
            root: paths.data_dir.join("speech"),
            settings,
        }
    }

    /// The host `speak` calls.
    pub(crate) fn host(self: &Arc<Self>) -> Arc<dyn SpeechHost> {
        Arc::clone(self) as Arc<dyn SpeechHost>
    }

    /// The speech folder of `chat_id`.
    fn chat_dir(&self, chat_id: &str) -> Result<PathBuf, String> {
        if !plain_component(chat_id) {
            return Err(format!("chat id {chat_id:?} cannot name a speech folder"));
        }
        Ok(self.root.join(chat_id))
    }

    /// The file of a stored clip of `chat_id` (what the app's player loads). Errors when either
    /// name is not a plain file name, is not a `.wav` clip, or no such clip exists.
    pub(crate) fn clip_path(&self, chat_id: &str, file: &str) -> Result<PathBuf, RuntimeError> {
        let invalid = |message: String| RuntimeError::InvalidInput {
            field: "file".into(),
            message,
        };
        if !plain_component(file) || !file.ends_with(".wav") {
            return Err(invalid(format!(
                "{file:?} is not a speech clip's file name"
            )));
        }
        let dir = self.chat_dir(chat_id).map_err(invalid)?;
        let path = dir.join(file);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => Ok(path),
            _ => Err(invalid(format!(
                "chat {chat_id} has no speech clip {file:?}"
            ))),
        }
    }

    /// Deletes the clips of a deleted chat (a failure is logged: the chat is gone either way).
    pub(crate) fn forget_chat(&self, chat_id: &str) {
        let Ok(dir) = self.chat_dir(chat_id) else {
            return;
        };
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(chat = chat_id, "cannot delete the chat's speech clips: {e}"),
        }
    }

    /// Synthesizes with the configured backend into `work` (a scratch folder).
    async fn synthesize(
        &self,
        config: &SpeechConfig,
        request: &SpeechRequest,
        work: &Path,
        cancel: &CancellationToken,
    ) -> Result<Synthesized, String> {
        let mut request = request.clone();
        if request.voice.is_none() {
            request.voice.clone_from(&config.voice);
        }
        if config.model == SYSTEM_SPEECH {
            return synthesize_system(SystemSynth::here(), &request, work, cancel).await;
        }
        let (kind, model) =
            parse_model(&config.model).map_err(|e| format!("[speech] model: {e}"))?;
        let full = self.settings.config();
        let providers = self.settings.providers(&full);
        let base = crate::provider::resolve::base_url(kind, &providers);
        let key = self.settings.keys().api_key(kind.as_str());
        let client = crate::provider::resolve::shared_client().map_err(|e| e.to_string())?;
        let mut pcm = match kind {
            ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => {
                if base.is_empty() {
                    return Err(format!(
                        "{kind} speech needs the server's address: set [providers.{kind}] base_url"
                    ));
                }
                let official = base == crate::provider::resolve::OPENAI_DEFAULT_BASE;
                if official && key.is_none() {
                    return Err(crate::provider::ProviderError::MissingApiKey {
                        provider: kind.as_str().into(),
                        env_var: "OPENAI_API_KEY".into(),
                    }
                    .to_string());
                }
                let voice = request
                    .voice
                    .clone()
                    .unwrap_or_else(|| OPENAI_DEFAULT_VOICE.into());
                if official && !OPENAI_VOICES.contains(&voice.as_str()) {
                    return Err(unknown_voice("openai", &voice, OPENAI_VOICES));
                }
                let call = SpeechCall {
                    model: &model,
                    voice: &voice,
                    input: &request.text,
                    speed: request.rate,
                };
                let pcm = openai_speech(&client, kind.as_str(), &base, key.as_deref(), &call)
                    .await
                    .map_err(|e| e.to_string())?;
                request.voice = Some(voice);
                pcm
            }
            ProviderKind::Gemini => {
                let key = key.ok_or_else(|| {
                    crate::provider::ProviderError::MissingApiKey {
                        provider: "gemini".into(),
                        env_var: "GEMINI_API_KEY".into(),
                    }
                    .to_string()
                })?;
                if (request.rate - 1.0).abs() > f32::EPSILON {
                    return Err(format!(
                        "gemini speech has no rate setting; leave rate at 1.0 (got {})",
                        request.rate
                    ));
                }
                let asked = request
                    .voice
                    .clone()
                    .unwrap_or_else(|| GEMINI_DEFAULT_VOICE.into());
                let voice = GEMINI_VOICES
                    .iter()
                    .find(|v| v.eq_ignore_ascii_case(&asked))
                    .ok_or_else(|| unknown_voice("gemini", &asked, GEMINI_VOICES))?
                    .to_string();
                let call = SpeechCall {
                    model: &model,
                    voice: &voice,
                    input: &request.text,
                    speed: 1.0,
                };
                let pcm = gemini_speech(&client, &base, &key, &call)
                    .await
                    .map_err(|e| e.to_string())?;
                request.voice = Some(voice);
                pcm
            }
            other => {
                return Err(format!(
                    "{other} has no speech API; set [speech] model to system, openai/MODEL, \
                     openai-compatible/MODEL or gemini/MODEL"
                ));
            }
        };
        pcm.scale(request.volume);
        Ok(Synthesized {
            pcm,
            voice: request.voice.unwrap_or_default(),
            backend: kind.as_str().to_string(),
        })
    }
}

#[async_trait]
impl SpeechHost for SpeechService {
    async fn speak(
        &self,
        chat_id: &str,
        request: &SpeechRequest,
        cancel: &CancellationToken,
    ) -> Result<SpeechClip, String> {
        let config = self.settings.config().speech;
        let dir = self.chat_dir(chat_id)?;
        let io = |what: &str, path: &Path, e: std::io::Error| {
            format!("cannot {what} {}: {e}", path.display())
        };
        std::fs::create_dir_all(&dir).map_err(|e| io("create", &dir, e))?;
        let work = tempfile::Builder::new()
            .prefix(".synth-")
            .tempdir_in(&dir)
            .map_err(|e| io("create a scratch folder in", &dir, e))?;
        let synthesized = self
            .synthesize(&config, request, work.path(), cancel)
            .await?;
        if synthesized.pcm.data.is_empty() {
            return Err(format!("{} produced no audio", synthesized.backend));
        }
        let wav = encode_wav(&synthesized.pcm);
        let file = format!("{}.wav", uuid::Uuid::now_v7().simple());
        let path = dir.join(&file);
        let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| io("write", &path, e))?;
        tmp.write_all(&wav)
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| io("write", &path, e))?;
        tmp.persist(&path)
            .map_err(|e| io("write", &path, e.error))?;
        Ok(SpeechClip {
            chat_id: chat_id.to_string(),
            file,
            path: path.display().to_string(),
            mime_type: SPEECH_MIME.to_string(),
            duration_ms: synthesized.pcm.duration_ms(),
            bytes: wav.len() as u64,
            sample_rate: synthesized.pcm.sample_rate,
            voice: synthesized.voice,
            backend: synthesized.backend,
            characters: u32::try_from(request.text.chars().count()).unwrap_or(u32::MAX),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn only_plain_names_name_clips() {
        assert_eq!(
            [
                "0193a7b2-aaaa.wav",
                "../x.wav",
                ".hidden.wav",
                "a/b.wav",
                "",
                "a b.wav"
            ]
            .map(plain_component),
            [true, false, false, false, false, false]
        );
    }
}
