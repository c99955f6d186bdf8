//! The OS's own voices for `speak` (issue 20 item 4): espeak-ng on Linux (and other Unix
//! systems), `say` on macOS, System.Speech through PowerShell on Windows. Each writes a WAV file
//! that the caller reads back; nothing is played on this machine's speakers.
//!
//! The synthesizers run through [`crate::exec`] (their own process group, empty stdin, a
//! timeout, capped output) as programs with argument lists, never through a shell; the text goes
//! in a UTF-8 file, so nothing in it is read as an option or a command. The argument builders
//! ([`espeak_args`], [`say_args`], [`sapi_script`]) are plain functions, tested on every
//! platform; only the one for the platform at hand runs.
//!
//! speech-dispatcher is not used: it has no way to write a file, only to play.

use crate::exec::ProgramRequest;
use crate::exec::run::{End, run_program};
use std::path::Path;
use std::time::Duration;
use suzent_core::{Pcm16, SPEECH_RATE_RANGE, parse_wav};
use tokio_util::sync::CancellationToken;

/// How long one synthesizer run may take.
pub const SYSTEM_SPEECH_TIMEOUT: Duration = Duration::from_secs(60);
/// How long listing the voices may take.
const VOICES_TIMEOUT: Duration = Duration::from_secs(15);
/// The most output (messages) kept of a synthesizer run, in bytes.
const OUTPUT_CAP: usize = 64 * 1024;
/// The largest audio file read back, in bytes (about 6 minutes of 16-bit mono at 44.1 kHz).
pub const MAX_SPEECH_BYTES: u64 = 32 * 1024 * 1024;
/// espeak-ng's and `say`'s normal speed, in words per minute.
const NORMAL_WPM: f32 = 175.0;

/// One `speak` call, checked: text within [`suzent_core::MAX_SPEECH_CHARS`], rate within
/// [`SPEECH_RATE_RANGE`], volume within 0..=1.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeechRequest {
    /// What to say.
    pub text: String,
    /// The voice (the backend's name for it); `None`: its default voice.
    pub voice: Option<String>,
    /// A multiple of the voice's normal speed (1.0 = normal).
    pub rate: f32,
    /// 0.0 (silent) to 1.0 (full).
    pub volume: f32,
}

/// Audio a backend synthesized, before it is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Synthesized {
    /// The samples.
    pub pcm: Pcm16,
    /// The voice used.
    pub voice: String,
    /// Which backend (`espeak-ng`, `say`, `system.speech`, `openai`, ...).
    pub backend: String,
}

/// The OS speech synthesizer of this platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemSynth {
    /// espeak-ng (Linux and other Unix systems).
    EspeakNg,
    /// `say` (macOS).
    Say,
    /// System.Speech through Windows PowerShell.
    SystemSpeech,
}

impl SystemSynth {
    /// The synthesizer of the platform this was built for.
    pub fn here() -> SystemSynth {
        if cfg!(target_os = "macos") {
            SystemSynth::Say
        } else if cfg!(windows) {
            SystemSynth::SystemSpeech
        } else {
            SystemSynth::EspeakNg
        }
    }

    /// Its name in clips (`backend`).
    pub fn name(self) -> &'static str {
        match self {
            SystemSynth::EspeakNg => "espeak-ng",
            SystemSynth::Say => "say",
            SystemSynth::SystemSpeech => "system.speech",
        }
    }

    fn program(self) -> &'static str {
        match self {
            SystemSynth::EspeakNg => "espeak-ng",
            SystemSynth::Say => "say",
            SystemSynth::SystemSpeech => "powershell.exe",
        }
    }

    /// What to install when the program is missing.
    fn install_hint(self) -> &'static str {
        match self {
            SystemSynth::EspeakNg => {
                "espeak-ng is not installed: install it (Debian/Ubuntu: sudo apt-get install \
                 espeak-ng; Fedora: sudo dnf install espeak-ng; Arch: sudo pacman -S espeak-ng), \
                 or set [speech] model to a provider's speech model (e.g. openai/gpt-4o-mini-tts)"
            }
            SystemSynth::Say => {
                "the macOS 'say' command was not found (it is part of macOS: check PATH), or set \
                 [speech] model to a provider's speech model"
            }
            SystemSynth::SystemSpeech => {
                "Windows PowerShell (powershell.exe) was not found: System.Speech needs it, or set \
                 [speech] model to a provider's speech model"
            }
        }
    }
}

/// espeak-ng's arguments: voice, words per minute, amplitude (0..=200, 100 normal), the WAV file
/// to write and the UTF-8 text file to read.
pub fn espeak_args(request: &SpeechRequest, text_file: &Path, out: &Path) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(voice) = &request.voice {
        args.extend(["-v".to_string(), voice.clone()]);
    }
    let wpm = (NORMAL_WPM * request.rate).round().clamp(80.0, 450.0) as u32;
    let amplitude = (request.volume * 100.0).round().clamp(0.0, 200.0) as u32;
    args.extend([
        "-s".to_string(),
        wpm.to_string(),
        "-a".to_string(),
        amplitude.to_string(),
        "-w".to_string(),
        out.display().to_string(),
        "-f".to_string(),
        text_file.display().to_string(),
    ]);
    args
}

/// The text `say` reads: its volume command (`[[volm 0.50]]`) first when the volume is not
/// full (`say` has no volume option).
pub fn say_text(request: &SpeechRequest) -> String {
    if (request.volume - 1.0).abs() < f32::EPSILON {
        request.text.clone()
    } else {
        format!("[[volm {:.2}]] {}", request.volume, request.text)
    }
}

/// `say`'s arguments: voice, words per minute, a WAV file of 16-bit little-endian PCM at
/// 22,050 Hz, the text file.
pub fn say_args(request: &SpeechRequest, text_file: &Path, out: &Path) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(voice) = &request.voice {
        args.extend(["-v".to_string(), voice.clone()]);
    }
    let wpm = (NORMAL_WPM * request.rate).round() as u32;
    args.extend([
        "-r".to_string(),
        wpm.to_string(),
        "-o".to_string(),
        out.display().to_string(),
        "--file-format=WAVE".to_string(),
        "--data-format=LEI16@22050".to_string(),
        "-f".to_string(),
        text_file.display().to_string(),
    ]);
    args
}

/// A PowerShell single-quoted string literal (`'` doubled).
fn ps_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// System.Speech's rate (-10..=10; +10 is about three times as fast, -10 a third).
pub fn sapi_rate(rate: f32) -> i32 {
    (10.0 * rate.ln() / 3f32.ln()).round().clamp(-10.0, 10.0) as i32
}

/// The PowerShell script that has System.Speech write the text file's text to a WAV file.
pub fn sapi_script(request: &SpeechRequest, text_file: &Path, out: &Path) -> String {
    let mut script = String::from(
        "$ErrorActionPreference = 'Stop'; Add-Type -AssemblyName System.Speech; \
         $s = New-Object System.Speech.Synthesis.SpeechSynthesizer; ",
    );
    if let Some(voice) = &request.voice {
        script.push_str(&format!("$s.SelectVoice({}); ", ps_quote(voice)));
    }
    script.push_str(&format!(
        "$s.Rate = {}; $s.Volume = {}; $s.SetOutputToWaveFile({}); \
         $s.Speak([IO.File]::ReadAllText({}, [Text.Encoding]::UTF8)); $s.Dispose()",
        sapi_rate(request.rate),
        (request.volume * 100.0).round().clamp(0.0, 100.0) as u32,
        ps_quote(&out.display().to_string()),
        ps_quote(&text_file.display().to_string()),
    ));
    script
}

/// The PowerShell script that lists System.Speech's installed voices, one name a line.
pub const SAPI_VOICES_SCRIPT: &str = "Add-Type -AssemblyName System.Speech; \
     (New-Object System.Speech.Synthesis.SpeechSynthesizer).GetInstalledVoices() | \
     ForEach-Object { $_.VoiceInfo.Name }";

/// The voices in `espeak-ng --voices` output: each voice's language code, its file name and the
/// other language codes it answers to (`en` for `en-gb`), deduplicated, in listing order.
pub fn parse_espeak_voices(listing: &str) -> Vec<String> {
    let mut voices: Vec<String> = Vec::new();
    let mut push = |v: &str| {
        if !v.is_empty() && !voices.iter().any(|x| x == v) {
            voices.push(v.to_string());
        }
    };
    for line in listing.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 5 {
            continue;
        }
        push(fields[1]);
        push(fields[4]);
        // "(en 2)(en-gb 3)": a code, then its priority.
        for part in fields[5..].join(" ").split(['(', ')']) {
            if let Some(code) = part.split_whitespace().next() {
                push(code);
            }
        }
    }
    voices
}

/// The variant names in `espeak-ng --voices=variant` output (`f3`, `Alex`: used as `en+f3`).
pub fn parse_espeak_variants(listing: &str) -> Vec<String> {
    listing
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().nth(4))
        .filter_map(|file| file.strip_prefix("!v/"))
        .map(str::to_string)
        .collect()
}

/// The voice names in `say -v '?'` output (`Alex  en_US  # Hello...`; names may hold spaces).
pub fn parse_say_voices(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter_map(|line| {
            let left = line.split('#').next()?.trim_end();
            let (name, _locale) = left.rsplit_once(char::is_whitespace)?;
            let name = name.trim();
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

/// Whether `voice` is one of `voices` (espeak-ng: `LANG` or `LANG+VARIANT`).
fn voice_known(synth: SystemSynth, voice: &str, voices: &[String], variants: &[String]) -> bool {
    match synth {
        SystemSynth::EspeakNg => {
            let (base, variant) = match voice.split_once('+') {
                Some((b, v)) => (b, Some(v)),
                None => (voice, None),
            };
            voices.iter().any(|v| v.eq_ignore_ascii_case(base))
                && variant.is_none_or(|v| variants.iter().any(|x| x == v))
        }
        SystemSynth::Say | SystemSynth::SystemSpeech => {
            voices.iter().any(|v| v.eq_ignore_ascii_case(voice))
        }
    }
}

/// The error for a voice the synthesizer does not have, listing those it has.
fn unknown_voice(synth: SystemSynth, voice: &str, voices: &[String]) -> String {
    let how = match synth {
        SystemSynth::EspeakNg => {
            "; a variant may follow with + (en+f3); `espeak-ng --voices` lists them"
        }
        SystemSynth::Say => "; `say -v '?'` lists them",
        SystemSynth::SystemSpeech => "",
    };
    format!(
        "unknown voice '{voice}' for {}: available voices: {}{how}",
        synth.name(),
        voices.join(", ")
    )
}

/// Runs a program to its end; its output on success, else an error with it.
async fn run(
    synth: SystemSynth,
    args: &[String],
    cwd: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let request = ProgramRequest {
        program: synth.program(),
        args,
        cwd,
    };
    let run = run_program(&request, timeout, cancel, OUTPUT_CAP)
        .await
        .map_err(|e| {
            if e.0.contains("not installed") {
                synth.install_hint().to_string()
            } else {
                e.0
            }
        })?;
    match run.end {
        End::TimedOut => Err(format!(
            "{} did not finish within {} s and was stopped",
            synth.name(),
            timeout.as_secs()
        )),
        End::Cancelled => Err("cancelled".into()),
        End::Exited if run.status.is_some_and(|s| s.success()) => Ok(run.output),
        End::Exited => Err(format!(
            "{} failed (exit {}): {}",
            synth.name(),
            run.status
                .and_then(|s| s.code())
                .map_or_else(|| "by a signal".to_string(), |c| c.to_string()),
            run.output.trim()
        )),
    }
}

/// The voices the synthesizer has (its listing, parsed).
pub async fn system_voices(
    synth: SystemSynth,
    cwd: &Path,
    cancel: &CancellationToken,
) -> Result<Vec<String>, String> {
    let args: Vec<String> = match synth {
        SystemSynth::EspeakNg => vec!["--voices".into()],
        SystemSynth::Say => vec!["-v".into(), "?".into()],
        SystemSynth::SystemSpeech => powershell_args(SAPI_VOICES_SCRIPT),
    };
    let out = run(synth, &args, cwd, VOICES_TIMEOUT, cancel).await?;
    Ok(match synth {
        SystemSynth::EspeakNg => parse_espeak_voices(&out),
        SystemSynth::Say => parse_say_voices(&out),
        SystemSynth::SystemSpeech => out
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
    })
}

fn powershell_args(script: &str) -> Vec<String> {
    vec![
        "-NoProfile".into(),
        "-NonInteractive".into(),
        "-Command".into(),
        script.into(),
    ]
}

/// Synthesizes `request` with the OS voices into `work_dir` (which must exist; the caller
/// removes it) and reads the WAV back. A named voice is checked against the synthesizer's
/// listing first; an unknown one is an error listing the available voices. Errors name what
/// to install when the synthesizer is missing.
pub async fn synthesize_system(
    synth: SystemSynth,
    request: &SpeechRequest,
    work_dir: &Path,
    cancel: &CancellationToken,
) -> Result<Synthesized, String> {
    debug_assert!(request.rate >= SPEECH_RATE_RANGE.0 && request.rate <= SPEECH_RATE_RANGE.1);
    if let Some(voice) = &request.voice {
        let voices = system_voices(synth, work_dir, cancel).await?;
        let variants = if synth == SystemSynth::EspeakNg && voice.contains('+') {
            let out = run(
                synth,
                &["--voices=variant".to_string()],
                work_dir,
                VOICES_TIMEOUT,
                cancel,
            )
            .await?;
            parse_espeak_variants(&out)
        } else {
            Vec::new()
        };
        if !voice_known(synth, voice, &voices, &variants) {
            return Err(unknown_voice(synth, voice, &voices));
        }
    }
    let text_file = work_dir.join("text.txt");
    let out = work_dir.join("speech.wav");
    let text = match synth {
        SystemSynth::Say => say_text(request),
        _ => request.text.clone(),
    };
    std::fs::write(&text_file, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", text_file.display()))?;
    let args = match synth {
        SystemSynth::EspeakNg => espeak_args(request, &text_file, &out),
        SystemSynth::Say => say_args(request, &text_file, &out),
        SystemSynth::SystemSpeech => powershell_args(&sapi_script(request, &text_file, &out)),
    };
    let output = run(synth, &args, work_dir, SYSTEM_SPEECH_TIMEOUT, cancel).await?;
    let len = std::fs::metadata(&out)
        .map_err(|e| {
            format!(
                "{} wrote no audio file ({e}): {}",
                synth.name(),
                output.trim()
            )
        })?
        .len();
    if len > MAX_SPEECH_BYTES {
        return Err(format!(
            "{} wrote {len} bytes of audio, over the limit of {MAX_SPEECH_BYTES} bytes",
            synth.name()
        ));
    }
    let bytes = std::fs::read(&out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    let pcm = parse_wav(&bytes).map_err(|e| format!("{} wrote {e}", synth.name()))?;
    Ok(Synthesized {
        pcm,
        voice: request.voice.clone().unwrap_or_else(|| "default".into()),
        backend: synth.name().to_string(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    fn request(voice: Option<&str>, rate: f32, volume: f32) -> SpeechRequest {
        SpeechRequest {
            text: "Hello".into(),
            voice: voice.map(str::to_string),
            rate,
            volume,
        }
    }

    #[test]
    fn espeak_gets_voice_speed_amplitude_and_files() {
        let args = espeak_args(
            &request(Some("en-us+f3"), 1.2, 0.5),
            &PathBuf::from("/t/text.txt"),
            &PathBuf::from("/t/out.wav"),
        );
        assert_eq!(
            args,
            [
                "-v",
                "en-us+f3",
                "-s",
                "210",
                "-a",
                "50",
                "-w",
                "/t/out.wav",
                "-f",
                "/t/text.txt"
            ]
        );
    }

    #[test]
    fn say_writes_16_bit_wav_at_22050_hz_and_takes_volume_in_the_text() {
        let r = request(Some("Bad News"), 0.5, 0.25);
        let args = say_args(
            &r,
            &PathBuf::from("/t/text.txt"),
            &PathBuf::from("/t/out.wav"),
        );
        assert_eq!(
            args,
            [
                "-v",
                "Bad News",
                "-r",
                "88",
                "-o",
                "/t/out.wav",
                "--file-format=WAVE",
                "--data-format=LEI16@22050",
                "-f",
                "/t/text.txt"
            ]
        );
        assert_eq!(say_text(&r), "[[volm 0.25]] Hello");
        assert_eq!(say_text(&request(None, 1.0, 1.0)), "Hello");
    }

    #[test]
    fn system_speech_gets_a_script_with_quoted_paths_and_voice() {
        let script = sapi_script(
            &request(Some("Microsoft Zira's"), 2.0, 0.8),
            &PathBuf::from(r"C:\t\text.txt"),
            &PathBuf::from(r"C:\t\it's.wav"),
        );
        assert_eq!(
            script,
            "$ErrorActionPreference = 'Stop'; Add-Type -AssemblyName System.Speech; \
             $s = New-Object System.Speech.Synthesis.SpeechSynthesizer; \
             $s.SelectVoice('Microsoft Zira''s'); $s.Rate = 6; $s.Volume = 80; \
             $s.SetOutputToWaveFile('C:\\t\\it''s.wav'); \
             $s.Speak([IO.File]::ReadAllText('C:\\t\\text.txt', [Text.Encoding]::UTF8)); $s.Dispose()"
        );
        assert_eq!(
            (sapi_rate(0.5), sapi_rate(1.0), sapi_rate(3.0)),
            (-6, 0, 10)
        );
    }

    #[test]
    fn espeak_voice_listings_give_codes_files_and_aliases() {
        let listing = "Pty Language       Age/Gender VoiceName          File                 Other Languages\n \
                       5  af              --/M      Afrikaans          gmw/af               \n \
                       2  en-gb           --/M      English_(Great_Britain) gmw/en               (en 2)\n \
                       2  en-us           --/M      English_(America)  gmw/en-US            (en 3)\n";
        assert_eq!(
            parse_espeak_voices(listing),
            [
                "af",
                "gmw/af",
                "en-gb",
                "gmw/en",
                "en",
                "en-us",
                "gmw/en-US"
            ]
        );
        let variants = "Pty Language       Age/Gender VoiceName          File                 Other Languages\n \
                        5  variant         --/M      Alex               !v/Alex              \n \
                        5  variant         --/F      female3            !v/f3                \n";
        assert_eq!(parse_espeak_variants(variants), ["Alex", "f3"]);
        let voices = parse_espeak_voices(listing);
        let variants = parse_espeak_variants(variants);
        assert!(voice_known(
            SystemSynth::EspeakNg,
            "EN-US+f3",
            &voices,
            &variants
        ));
        assert!(!voice_known(
            SystemSynth::EspeakNg,
            "en+f9",
            &voices,
            &variants
        ));
        assert!(!voice_known(
            SystemSynth::EspeakNg,
            "klingon",
            &voices,
            &variants
        ));
    }

    #[test]
    fn say_voice_listings_keep_names_with_spaces() {
        let listing = "Alex                en_US    # Most people recognize me by my voice.\n\
                       Bad News            en_US    # The light you see at the end of the tunnel.\n";
        assert_eq!(parse_say_voices(listing), ["Alex", "Bad News"]);
    }
}
