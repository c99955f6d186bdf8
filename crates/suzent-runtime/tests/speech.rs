//! `speak` through the runtime (issue 20 item 4): a turn's call synthesizes with the OS voices
//! (espeak-ng, a real process) or a provider's speech API (the scripted server's OpenAI
//! `/audio/speech` and Gemini `generateContent` routes), and the clip is stored as a WAV file in
//! the chat's speech folder under the data directory — never in the workspace — and named in the
//! tool result. The audio is measured with `sox` (installed by scripts/setup-tests): its length
//! follows the text and it is not silence. Real SQLite, real processes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use suzent_core::{
    AgentEvent, Behavior, ChatMessage, Config, PermissionMode, RunOutcome, SpeechClip, SpeechConfig,
};
use suzent_runtime::provider::StaticKeys;
use suzent_runtime::{CreateChat, Paths, RunOptions, Runtime, RuntimeOptions};
use suzent_tests::scripted::{REFUSED_VOICE, SPEECH_MS_PER_CHAR, SPEECH_SAMPLE_RATE};
use suzent_tests::{ScriptedServer, Turn};
use tempfile::TempDir;

const TEXT: &str = "Good morning. The build finished and all of the tests passed, so the release can go out today.";

struct Harness {
    dir: TempDir,
    ws: PathBuf,
    runtime: Runtime,
}

impl Harness {
    async fn open(server: &ScriptedServer, speech: SpeechConfig) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("project");
        std::fs::create_dir_all(&ws).unwrap();
        let mut config = Config {
            default_model: Some("openai/gpt-test".into()),
            default_mode: PermissionMode::Default,
            tools: vec!["SpeakTool".into()],
            speech,
            ..Config::default()
        };
        config.providers.openai.base_url = Some(server.openai_base());
        config.providers.openai_compatible.base_url = Some(server.openai_base());
        config.providers.gemini.base_url = Some(server.base_url());
        let runtime = Runtime::open(RuntimeOptions {
            paths: Paths::under(&dir.path().join("home")),
            keys: Arc::new(
                StaticKeys::new()
                    .with("openai", "sk-test")
                    .with("gemini", "gm-test"),
            ),
            config: Some(config),
        })
        .await
        .unwrap();
        Harness { dir, ws, runtime }
    }

    async fn chat(&self) -> String {
        self.runtime
            .create_chat(CreateChat {
                workspace: Some(self.ws.clone()),
                ..CreateChat::default()
            })
            .await
            .unwrap()
            .id
    }

    /// Runs one turn in which the model calls `speak` with `args`; returns the tool result
    /// (ok, content) and the permission decisions announced.
    async fn speak(
        &self,
        server: &ScriptedServer,
        chat: &str,
        args: Value,
    ) -> ((bool, String), Vec<(Behavior, String)>) {
        server.push_turns(vec![
            Turn::tool_call("s1", "speak", args.to_string()),
            Turn::text("Done."),
        ]);
        let mut events = self.runtime.subscribe();
        let summary = self
            .runtime
            .send_message(chat, "say it", RunOptions::default())
            .await
            .unwrap();
        assert_eq!(summary.outcome, RunOutcome::Completed);
        let mut decisions = Vec::new();
        let mut ended = None;
        while let Ok(ev) = events.try_recv() {
            match ev {
                AgentEvent::ToolPermissionDecision(d) => {
                    decisions.push((d.decision.behavior, d.decision.reason_code.to_string()))
                }
                AgentEvent::ToolCallEnd { ok, .. } => ended = Some(ok),
                _ => {}
            }
        }
        let content = self
            .runtime
            .messages(chat)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|m| match m.message {
                ChatMessage::Tool { content, .. } => Some(content),
                _ => None,
            })
            .last()
            .expect("a tool result");
        ((ended.expect("tool_call_end"), content), decisions)
    }

    fn speech_dir(&self, chat: &str) -> PathBuf {
        Paths::under(&self.dir.path().join("home"))
            .data_dir
            .join("speech")
            .join(chat)
    }
}

/// `sox FILE -n stat`: (length in seconds, RMS amplitude, maximum amplitude).
fn sox_stat(file: &Path) -> (f64, f64, f64) {
    let out = std::process::Command::new("sox")
        .arg(file)
        .args(["-n", "stat"])
        .output()
        .expect("sox runs (scripts/setup-tests installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `stat` reports on stderr.
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let field = |name: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split(':').nth(1))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("sox stat has no {name}: {text}"))
    };
    (
        field("Length (seconds)"),
        field("RMS     amplitude"),
        field("Maximum amplitude"),
    )
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The clip is a file named in the chat's speech folder, described truthfully.
fn check_stored(h: &Harness, chat: &str, clip: &SpeechClip) {
    let dir = h.speech_dir(chat);
    assert_eq!(
        files_in(&dir),
        vec![clip.file.clone()],
        "one clip, no leftovers"
    );
    let path = dir.join(&clip.file);
    assert_eq!(clip.path, path.display().to_string());
    assert_eq!(clip.chat_id, chat);
    assert_eq!(clip.mime_type, "audio/wav");
    assert_eq!(clip.bytes, std::fs::metadata(&path).unwrap().len());
    assert_eq!(clip.characters, TEXT.chars().count() as u32);
    assert_eq!(
        h.runtime.speech_clip_path(chat, &clip.file).unwrap(),
        path,
        "the app's player finds it"
    );
    // Nothing landed in the workspace.
    assert_eq!(files_in(&h.ws), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn espeak_ng_speaks_a_wav_whose_length_fits_the_text_and_is_not_silence() {
    let server = ScriptedServer::start(vec![]).await;
    let h = Harness::open(&server, SpeechConfig::default()).await;
    let chat = h.chat().await;
    let ((ok, content), decisions) = h
        .speak(&server, &chat, json!({"text": TEXT, "voice": "en-us"}))
        .await;
    assert!(ok, "{content}");
    let clip: SpeechClip = serde_json::from_str(&content).unwrap();
    assert_eq!(
        (clip.backend.as_str(), clip.voice.as_str(), clip.sample_rate),
        ("espeak-ng", "en-us", 22050)
    );
    check_stored(&h, &chat, &clip);
    // Speech runs at roughly 10-20 characters a second: 30..150 ms per character is sane.
    let chars = TEXT.chars().count() as u64;
    assert!(
        (30 * chars..=150 * chars).contains(&clip.duration_ms),
        "{} ms for {chars} characters",
        clip.duration_ms
    );
    let (seconds, rms, max) = sox_stat(Path::new(&clip.path));
    assert!(
        (seconds * 1000.0 - clip.duration_ms as f64).abs() < 50.0,
        "sox says {seconds} s"
    );
    assert!(rms > 0.01 && max > 0.1, "silence? rms {rms}, max {max}");
    // speak asks nobody: it touches no file of the user's (capability Output).
    assert_eq!(
        decisions,
        vec![(Behavior::Allow, "tool_default_allow".to_string())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slower_rate_makes_longer_audio_and_a_lower_volume_quieter_audio() {
    let server = ScriptedServer::start(vec![]).await;
    let h = Harness::open(&server, SpeechConfig::default()).await;
    let chat = h.chat().await;
    let mut measured = Vec::new();
    for args in [
        json!({"text": TEXT}),
        json!({"text": TEXT, "rate": 0.6, "volume": 0.3}),
    ] {
        let ((ok, content), _) = h.speak(&server, &chat, args).await;
        assert!(ok, "{content}");
        let clip: SpeechClip = serde_json::from_str(&content).unwrap();
        let (_, rms, _) = sox_stat(Path::new(&clip.path));
        measured.push((clip.duration_ms, rms));
    }
    let [(normal_ms, normal_rms), (slow_ms, slow_rms)] = measured[..] else {
        unreachable!()
    };
    assert!(
        slow_ms as f64 > normal_ms as f64 * 1.3,
        "rate 0.6: {slow_ms} ms, rate 1: {normal_ms} ms"
    );
    assert!(
        slow_rms < normal_rms * 0.6,
        "volume 0.3: rms {slow_rms}, volume 1: {normal_rms}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_voice_is_an_error_that_lists_the_available_voices() {
    let server = ScriptedServer::start(vec![]).await;
    let h = Harness::open(&server, SpeechConfig::default()).await;
    let chat = h.chat().await;
    let ((ok, content), _) = h
        .speak(&server, &chat, json!({"text": "hello", "voice": "klingon"}))
        .await;
    assert!(!ok);
    assert!(
        content.starts_with("unknown voice 'klingon' for espeak-ng: available voices: "),
        "{content}"
    );
    for voice in ["en-us", "en-gb", "de", "fr"] {
        assert!(
            content.contains(&format!(" {voice},")),
            "{voice} listed: {content}"
        );
    }
    assert_eq!(files_in(&h.speech_dir(&chat)), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_and_over_long_text_are_refused_before_anything_runs() {
    let server = ScriptedServer::start(vec![]).await;
    let h = Harness::open(&server, SpeechConfig::default()).await;
    let chat = h.chat().await;
    let ((ok, content), _) = h.speak(&server, &chat, json!({"text": "   "})).await;
    assert_eq!(
        (ok, content.as_str()),
        (
            false,
            "invalid arguments: text is empty: give the words to speak"
        )
    );
    assert!(!h.speech_dir(&chat).exists(), "nothing was synthesized");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_speech_route_returns_audio_stored_the_same_way() {
    let server = ScriptedServer::start(vec![]).await;
    let speech = SpeechConfig {
        model: "openai/gpt-4o-mini-tts".into(),
        voice: Some("coral".into()),
        autoplay: false,
    };
    let h = Harness::open(&server, speech).await;
    let chat = h.chat().await;
    let ((ok, content), _) = h
        .speak(
            &server,
            &chat,
            json!({"text": TEXT, "rate": 1.25, "volume": 0.5}),
        )
        .await;
    assert!(ok, "{content}");
    let clip: SpeechClip = serde_json::from_str(&content).unwrap();
    assert_eq!(
        (clip.backend.as_str(), clip.voice.as_str(), clip.sample_rate),
        ("openai", "coral", SPEECH_SAMPLE_RATE)
    );
    check_stored(&h, &chat, &clip);
    let chars = TEXT.chars().count() as u64;
    assert_eq!(clip.duration_ms, chars * SPEECH_MS_PER_CHAR);
    // The scripted tone is at half scale (max 16000/32768); volume 0.5 halves it.
    let (_, rms, max) = sox_stat(Path::new(&clip.path));
    assert!((0.2..0.3).contains(&max), "max {max}");
    assert!(rms > 0.1, "rms {rms}");
    let speech: Vec<_> = server
        .recorded()
        .into_iter()
        .filter(|r| r.path.ends_with("/audio/speech"))
        .collect();
    assert_eq!(speech.len(), 1);
    assert_eq!(speech[0].path, "/v1/audio/speech");
    assert_eq!(speech[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        speech[0].body,
        json!({"model": "gpt-4o-mini-tts", "voice": "coral", "input": TEXT, "response_format": "wav", "speed": 1.25})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_speech_server_error_reaches_the_model_and_stores_nothing() {
    let server = ScriptedServer::start(vec![]).await;
    let speech = SpeechConfig {
        model: "openai-compatible/tts-1".into(),
        voice: None,
        autoplay: false,
    };
    let h = Harness::open(&server, speech).await;
    let chat = h.chat().await;
    let ((ok, content), _) = h
        .speak(
            &server,
            &chat,
            json!({"text": "hello", "voice": REFUSED_VOICE}),
        )
        .await;
    assert!(!ok);
    assert!(
        content.starts_with("openai-compatible returned HTTP 400: ")
            && content.contains("Invalid voice 'no-such-voice'"),
        "{content}"
    );
    assert_eq!(files_in(&h.speech_dir(&chat)), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gemini_speech_route_returns_pcm_wrapped_into_a_stored_wav() {
    let server = ScriptedServer::start(vec![]).await;
    let speech = SpeechConfig {
        model: "gemini/gemini-2.5-flash-preview-tts".into(),
        voice: None,
        autoplay: false,
    };
    let h = Harness::open(&server, speech).await;
    let chat = h.chat().await;
    let ((ok, content), _) = h
        .speak(&server, &chat, json!({"text": TEXT, "voice": "puck"}))
        .await;
    assert!(ok, "{content}");
    let clip: SpeechClip = serde_json::from_str(&content).unwrap();
    assert_eq!(
        (clip.backend.as_str(), clip.voice.as_str(), clip.sample_rate),
        ("gemini", "Puck", 24000)
    );
    check_stored(&h, &chat, &clip);
    assert_eq!(
        clip.duration_ms,
        TEXT.chars().count() as u64 * SPEECH_MS_PER_CHAR
    );
    let (_, rms, _) = sox_stat(Path::new(&clip.path));
    assert!(rms > 0.1, "rms {rms}");
    let recorded: Vec<_> = server
        .recorded()
        .into_iter()
        .filter(|r| r.path.contains(":generateContent"))
        .collect();
    assert_eq!(
        recorded[0].path,
        "/v1beta/models/gemini-2.5-flash-preview-tts:generateContent"
    );
    assert_eq!(recorded[0].header("x-goog-api-key"), Some("gm-test"));
    assert_eq!(
        recorded[0].body["generationConfig"],
        json!({"responseModalities": ["AUDIO"], "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Puck"}}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_chat_deletes_its_clips_and_other_names_are_never_served() {
    let server = ScriptedServer::start(vec![]).await;
    let h = Harness::open(&server, SpeechConfig::default()).await;
    let chat = h.chat().await;
    let ((ok, content), _) = h
        .speak(&server, &chat, json!({"text": "hello there"}))
        .await;
    assert!(ok, "{content}");
    let clip: SpeechClip = serde_json::from_str(&content).unwrap();
    for (c, f) in [
        (chat.as_str(), "../../suzent.db"),
        (chat.as_str(), "nope.wav"),
        ("..", clip.file.as_str()),
        (chat.as_str(), "text.txt"),
    ] {
        assert!(h.runtime.speech_clip_path(c, f).is_err(), "{c}/{f}");
    }
    h.runtime.delete_chat(&chat).await.unwrap();
    assert!(!h.speech_dir(&chat).exists());
    assert!(h.runtime.speech_clip_path(&chat, &clip.file).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn speak_runs_without_approval_in_every_mode() {
    let server = ScriptedServer::start(vec![]).await;
    let h = Harness::open(&server, SpeechConfig::default()).await;
    let chat = h.chat().await;
    let mut got = Vec::new();
    for mode in [
        PermissionMode::Default,
        PermissionMode::Auto,
        PermissionMode::FullAccess,
    ] {
        let e = h
            .runtime
            .explain_permission("speak", json!({"text": "hi"}), Some(mode), Some(&chat))
            .await
            .unwrap();
        got.push((mode, e.behavior));
    }
    assert_eq!(
        got,
        vec![
            (PermissionMode::Default, Behavior::Allow),
            (PermissionMode::Auto, Behavior::Allow),
            (PermissionMode::FullAccess, Behavior::Allow)
        ]
    );
}
