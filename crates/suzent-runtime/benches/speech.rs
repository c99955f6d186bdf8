//! Speech synthesis time per 100 characters (issue 20 "Measure"): espeak-ng (the Linux OS
//! voices, a real process per call, through `suzent_tools::speech`) and the OpenAI-compatible
//! `/audio/speech` route against the scripted server on loopback (request, WAV download, parse;
//! the server's own synthesis is a generated tone, so this is the client's cost). Texts of 100,
//! 400 and 1600 characters, 10 runs each; prints the median and the 90th percentile, and the
//! audio length per 100 characters. Run with `cargo bench -p suzent-runtime --bench speech`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};
use suzent_runtime::provider::speech::{SpeechCall, openai_speech};
use suzent_tools::speech::{SpeechRequest, SystemSynth, synthesize_system};
use tokio_util::sync::CancellationToken;

const RUNS: usize = 10;
const SENTENCE: &str =
    "The quick brown fox jumps over the lazy dog, and then it rests for a while. ";

fn text(chars: usize) -> String {
    SENTENCE.chars().cycle().take(chars).collect()
}

fn stats(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (
        v[v.len() / 2],
        v[((v.len() as f64 - 1.0) * 0.9).round() as usize],
    )
}

fn per_100(d: Duration, chars: usize) -> f64 {
    d.as_secs_f64() * 1000.0 * 100.0 / chars as f64
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let cancel = CancellationToken::new();
    let server = suzent_tests::ScriptedServer::start(vec![]).await;
    let client = reqwest::Client::new();
    println!("speech synthesis, {RUNS} runs per size (median / p90; ms per 100 characters)");
    for chars in [100, 400, 1600] {
        let input = text(chars);
        let request = SpeechRequest {
            text: input.clone(),
            voice: None,
            rate: 1.0,
            volume: 1.0,
        };
        let mut espeak = Vec::new();
        let mut audio_ms = 0;
        for _ in 0..RUNS {
            let dir = tempfile::tempdir().unwrap();
            let start = Instant::now();
            let out = synthesize_system(SystemSynth::EspeakNg, &request, dir.path(), &cancel)
                .await
                .expect("espeak-ng is installed (scripts/setup-tests)");
            espeak.push(start.elapsed());
            audio_ms = out.pcm.duration_ms();
        }
        let mut provider = Vec::new();
        for _ in 0..RUNS {
            let call = SpeechCall {
                model: "tts-1",
                voice: "alloy",
                input: &input,
                speed: 1.0,
            };
            let start = Instant::now();
            openai_speech(
                &client,
                "openai-compatible",
                &server.openai_base(),
                None,
                &call,
            )
            .await
            .unwrap();
            provider.push(start.elapsed());
        }
        let (em, e90) = stats(espeak);
        let (pm, p90) = stats(provider);
        println!(
            "{chars:>5} chars  espeak-ng {:>7.1} / {:>7.1} ms per 100 chars (audio {:.0} ms per 100 chars)   \
             provider route (loopback) {:>6.2} / {:>6.2} ms per 100 chars",
            per_100(em, chars),
            per_100(e90, chars),
            audio_ms as f64 * 100.0 / chars as f64,
            per_100(pm, chars),
            per_100(p90, chars),
        );
    }
}
