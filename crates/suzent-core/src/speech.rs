//! Speech output (`speak`, issue 20 item 4): the `[speech]` settings, the stored clip a call
//! returns, and the WAV helpers every backend's audio passes through.
//!
//! Every clip is stored as one canonical WAV file (`RIFF`/`WAVE`, one `fmt ` chunk of 16-bit
//! little-endian PCM, one `data` chunk, sizes filled in), whatever the backend wrote: espeak-ng
//! and `say` write WAV files, OpenAI's `/audio/speech` streams WAV with placeholder sizes
//! (`0xFFFFFFFF`), Gemini returns raw 16-bit PCM (`audio/L16;rate=24000`). [`parse_wav`] reads
//! all of them; [`encode_wav`] writes the canonical form.

use serde::{Deserialize, Serialize};

/// The longest text one `speak` call synthesizes, in characters (Unicode scalar values). About
/// five minutes of speech at a normal rate; longer text is refused with this number.
pub const MAX_SPEECH_CHARS: usize = 4000;

/// The slowest and fastest `rate` (a multiple of the voice's normal speed).
pub const SPEECH_RATE_RANGE: (f32, f32) = (0.5, 2.0);

/// The MIME type of every stored clip.
pub const SPEECH_MIME: &str = "audio/wav";

/// What `speak` synthesizes with (`[speech]` in `config.toml`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpeechConfig {
    /// `system` (the default: the OS's own voices — espeak-ng on Linux, `say` on macOS,
    /// System.Speech on Windows) or a provider's speech model as `provider/model`:
    /// `openai/gpt-4o-mini-tts`, `openai-compatible/tts-1` (`POST {base_url}/audio/speech`) or
    /// `gemini/gemini-2.5-flash-preview-tts` (`generateContent` with audio output). The
    /// provider's base URL and key are the chat providers' (`[providers.*]`, `suzent keys set`).
    #[serde(default = "default_speech_model")]
    pub model: String,
    /// Voice when a call names none (default: the backend's own default voice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<String>,
    /// Play a new clip in the app as soon as it is stored (default false: the player waits for
    /// a click).
    #[serde(default)]
    pub autoplay: bool,
}

/// The `model` of the OS voices.
pub const SYSTEM_SPEECH: &str = "system";

fn default_speech_model() -> String {
    SYSTEM_SPEECH.to_string()
}

impl Default for SpeechConfig {
    fn default() -> Self {
        SpeechConfig {
            model: default_speech_model(),
            voice: None,
            autoplay: false,
        }
    }
}

/// A stored speech clip: what a `speak` call returns (as JSON, to the model and the app) and what
/// channels send to the conversation as an audio file. The file lives in the chat's speech folder under Suzent's
/// data directory (`<data>/speech/<chat id>/<file>`), never in the workspace.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpeechClip {
    /// The chat the clip belongs to.
    pub chat_id: String,
    /// File name in the chat's speech folder (`<uuid>.wav`); the app plays
    /// `suzent-audio://localhost/<chat id>/<file>`.
    pub file: String,
    /// Absolute path of the file.
    pub path: String,
    /// Always [`SPEECH_MIME`] (`audio/wav`).
    pub mime_type: String,
    /// Length of the audio in milliseconds.
    pub duration_ms: u64,
    /// Size of the file in bytes.
    pub bytes: u64,
    /// Samples per second.
    pub sample_rate: u32,
    /// The voice used (as the backend names it).
    pub voice: String,
    /// What synthesized it: `espeak-ng`, `say`, `system.speech`, `openai`, `openai-compatible`
    /// or `gemini`.
    pub backend: String,
    /// Characters of text spoken.
    pub characters: u32,
}

/// A clip's text as one line: its path, length and size (what `suzent run` prints).
impl std::fmt::Display for SpeechClip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "audio: {} ({:.1} s, {} bytes, {})",
            self.path,
            self.duration_ms as f64 / 1000.0,
            self.bytes,
            self.mime_type
        )
    }
}

/// 16-bit PCM audio read from a WAV file or a raw stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pcm16 {
    /// Samples per second.
    pub sample_rate: u32,
    /// Interleaved channels.
    pub channels: u16,
    /// Little-endian 16-bit samples, interleaved, as bytes (an even count).
    pub data: Vec<u8>,
}

impl Pcm16 {
    /// Length in milliseconds.
    pub fn duration_ms(&self) -> u64 {
        let frame = u64::from(self.channels.max(1)) * 2;
        let frames = self.data.len() as u64 / frame;
        frames * 1000 / u64::from(self.sample_rate.max(1))
    }

    /// Scales every sample by `volume` (0.0..=1.0), saturating.
    pub fn scale(&mut self, volume: f32) {
        if (volume - 1.0).abs() < f32::EPSILON {
            return;
        }
        for pair in self.data.chunks_exact_mut(2) {
            let sample = i16::from_le_bytes([pair[0], pair[1]]);
            let scaled = (f32::from(sample) * volume)
                .round()
                .clamp(f32::from(i16::MIN), f32::from(i16::MAX)) as i16;
            pair.copy_from_slice(&scaled.to_le_bytes());
        }
    }
}

/// Why bytes are not usable audio.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WavError {
    /// Not a RIFF/WAVE file.
    #[error("not a WAV file (no RIFF/WAVE header; {0} bytes)")]
    NotWav(usize),
    /// A chunk the format needs is missing.
    #[error("the WAV file has no '{0}' chunk")]
    MissingChunk(&'static str),
    /// Not 16-bit PCM.
    #[error("unsupported WAV format: {0} (16-bit PCM is supported)")]
    Unsupported(String),
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|s| u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Reads a 16-bit PCM WAV file. Chunks other than `fmt ` and `data` are skipped; a `data` size
/// larger than what follows (a streamed file's `0xFFFFFFFF` placeholder) means "to the end".
pub fn parse_wav(bytes: &[u8]) -> Result<Pcm16, WavError> {
    if bytes.len() < 12 || &bytes[0..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        return Err(WavError::NotWav(bytes.len()));
    }
    let mut at = 12;
    let mut format: Option<(u16, u16, u32, u16)> = None;
    while at + 8 <= bytes.len() {
        let id = &bytes[at..at + 4];
        let size = u32_at(bytes, at + 4).unwrap_or(0) as usize;
        let body = at + 8;
        let end = body.saturating_add(size).min(bytes.len());
        if id == b"fmt " {
            let tag = u16_at(bytes, body).ok_or(WavError::MissingChunk("fmt "))?;
            let channels = u16_at(bytes, body + 2).ok_or(WavError::MissingChunk("fmt "))?;
            let rate = u32_at(bytes, body + 4).ok_or(WavError::MissingChunk("fmt "))?;
            let bits = u16_at(bytes, body + 14).ok_or(WavError::MissingChunk("fmt "))?;
            format = Some((tag, channels, rate, bits));
        } else if id == b"data" {
            let (tag, channels, sample_rate, bits) =
                format.ok_or(WavError::MissingChunk("fmt "))?;
            // 1 = PCM; 0xFFFE = WAVE_FORMAT_EXTENSIBLE (PCM sub-format in practice).
            if !(tag == 1 || tag == 0xFFFE) || bits != 16 || channels == 0 || sample_rate == 0 {
                return Err(WavError::Unsupported(format!(
                    "format tag {tag}, {bits} bits, {channels} channels, {sample_rate} Hz"
                )));
            }
            let mut data = bytes[body..end].to_vec();
            data.truncate(data.len() / (2 * channels as usize) * (2 * channels as usize));
            return Ok(Pcm16 {
                sample_rate,
                channels,
                data,
            });
        }
        // Chunks are padded to an even size.
        at = end + (size & 1);
    }
    Err(WavError::MissingChunk(if format.is_some() {
        "data"
    } else {
        "fmt "
    }))
}

/// The canonical WAV file of `pcm`: a 44-byte header (16-bit PCM) and the samples.
pub fn encode_wav(pcm: &Pcm16) -> Vec<u8> {
    let data_len = pcm.data.len() as u32;
    let block_align = pcm.channels * 2;
    let byte_rate = pcm.sample_rate * u32::from(block_align);
    let mut out = Vec::with_capacity(44 + pcm.data.len());
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&pcm.channels.to_le_bytes());
    out.extend_from_slice(&pcm.sample_rate.to_le_bytes());
    out.extend_from_slice(&byte_rate.to_le_bytes());
    out.extend_from_slice(&block_align.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    out.extend_from_slice(&pcm.data);
    out
}

/// The sample rate of a raw PCM MIME type such as Gemini's `audio/L16;codec=pcm;rate=24000`
/// (`None` when it names no rate).
pub fn pcm_rate_of_mime(mime: &str) -> Option<u32> {
    mime.split(';')
        .map(str::trim)
        .find_map(|p| p.strip_prefix("rate="))
        .and_then(|r| r.trim().parse().ok())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn tone(samples: usize) -> Pcm16 {
        let data = (0..samples)
            .flat_map(|i| (((i % 50) as i16 - 25) * 1000).to_le_bytes())
            .collect();
        Pcm16 {
            sample_rate: 22050,
            channels: 1,
            data,
        }
    }

    #[test]
    fn an_encoded_wav_parses_back_to_the_same_samples() {
        let pcm = tone(22050);
        let wav = encode_wav(&pcm);
        assert_eq!(wav.len(), 44 + 44100);
        assert_eq!(parse_wav(&wav).unwrap(), pcm);
        assert_eq!(pcm.duration_ms(), 1000);
    }

    #[test]
    fn a_streamed_wav_with_placeholder_sizes_reads_to_the_end() {
        let pcm = tone(2205);
        let mut wav = encode_wav(&pcm);
        wav[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        wav[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(parse_wav(&wav).unwrap(), pcm);
    }

    #[test]
    fn chunks_before_the_data_are_skipped() {
        let pcm = tone(100);
        let wav = encode_wav(&pcm);
        let mut with_list = wav[..36].to_vec();
        with_list.extend_from_slice(b"LIST");
        with_list.extend_from_slice(&3u32.to_le_bytes());
        with_list.extend_from_slice(b"abc\0");
        with_list.extend_from_slice(&wav[36..]);
        assert_eq!(parse_wav(&with_list).unwrap(), pcm);
    }

    #[test]
    fn text_is_not_a_wav_file() {
        assert_eq!(
            parse_wav(b"{\"error\": \"nope\"}"),
            Err(WavError::NotWav(17))
        );
    }

    #[test]
    fn volume_scales_samples_and_saturates() {
        let mut pcm = Pcm16 {
            sample_rate: 8000,
            channels: 1,
            data: [1000i16, -32768, 32767]
                .iter()
                .flat_map(|s| s.to_le_bytes())
                .collect(),
        };
        pcm.scale(0.5);
        let samples: Vec<i16> = pcm
            .data
            .chunks_exact(2)
            .map(|p| i16::from_le_bytes([p[0], p[1]]))
            .collect();
        assert_eq!(samples, vec![500, -16384, 16384]);
    }

    #[test]
    fn the_rate_of_a_gemini_pcm_mime_type_is_read() {
        assert_eq!(
            pcm_rate_of_mime("audio/L16;codec=pcm;rate=24000"),
            Some(24000)
        );
        assert_eq!(pcm_rate_of_mime("audio/wav"), None);
    }
}
