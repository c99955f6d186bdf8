//! `suzent run` with `speak` (issue 20 item 4): a headless run plays nothing; it prints where the
//! clip was stored (under the data directory, not the workspace), and `--json` carries the clip
//! in the tool result, so a channel or a script can send the file on. espeak-ng is a real process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::{Env, named};
use suzent_tests::Turn;

fn turns() -> Vec<Turn> {
    vec![
        Turn::tool_call(
            "call_1",
            "speak",
            json!({"text": "The report is ready."}).to_string(),
        ),
        Turn::text("I said it."),
    ]
}

#[test]
fn a_headless_run_prints_the_path_of_the_spoken_clip() {
    let env = Env::new(turns());
    env.write_config("tools = [\"SpeakTool\"]\n");
    let out = env.run(&["run", "say it", "--model", "openai/gpt-test"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("✓ audio: "))
        .unwrap_or_else(|| panic!("no audio line in {stdout}"));
    let path = line.trim_start()["✓ audio: ".len()..]
        .split(" (")
        .next()
        .unwrap()
        .to_string();
    assert!(
        path.starts_with(&env.home.join("data/speech").display().to_string())
            && path.ends_with(".wav"),
        "{path}"
    );
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..4], b"RIFF");
    assert!(line.contains("audio/wav"), "{line}");
}

#[test]
fn json_output_carries_the_clip_in_the_tool_result() {
    let env = Env::new(turns());
    env.write_config("tools = [\"SpeakTool\"]\n");
    let events = env.run_task("say it", &[], 0);
    let end = named(&events, "tool_call_end")[0];
    assert_eq!(end["value"]["ok"], json!(true));
    let clip: suzent_core::SpeechClip =
        serde_json::from_str(end["value"]["output"].as_str().unwrap()).unwrap();
    assert_eq!(
        (clip.mime_type.as_str(), clip.backend.as_str()),
        ("audio/wav", "espeak-ng")
    );
    assert_eq!(std::fs::metadata(&clip.path).unwrap().len(), clip.bytes);
}
