//! The embedded engine against llama.cpp's own server on the same model and threads: prompt and
//! generation tokens per second, time to first token, memory with the model loaded.
//!
//! `cargo bench -p suzent-llama --bench local_vs_server`
//!
//! Model: `SUZENT_BENCH_MODEL` (a GGUF path), default SmolLM2-135M-Instruct from the test assets;
//! server: `SUZENT_LLAMA_SERVER`, default the test assets' `llama-server` (both put there by
//! `scripts/setup-tests`). Threads: `SUZENT_BENCH_THREADS` (default: the machine's cores). Each
//! side runs `RUNS` times with a prompt the cache has not seen; the median is printed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use suzent_core::ChatMessage;
use suzent_llama::{ChatTemplate, EngineOptions, GenerateRequest, LocalEngine, ToolChoice};

const RUNS: usize = 3;
const GENERATE: u32 = 96;
const CONTEXT: u32 = 4096;

#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    prompt_tps: f64,
    generation_tps: f64,
    first_token_ms: f64,
    prompt_tokens: u32,
}

fn assets() -> PathBuf {
    std::env::var_os("SUZENT_TEST_ASSETS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/suzent-test-assets")
        })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

/// A long-ish user message (about 400 tokens) that starts differently in each run, so neither
/// side can reuse a cached prompt.
fn question(run: usize) -> String {
    let mut text = format!("Run {run}. Summarise the following notes in two sentences.\n");
    for i in 0..40 {
        text.push_str(&format!(
            "Note {i}: the build of module {i} finished after {} seconds.\n",
            i * 7 + run
        ));
    }
    text
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn embedded(model: &Path, threads: u32) -> (Vec<Sample>, u64) {
    let before = rss_kib(std::process::id());
    let engine = LocalEngine::new(EngineOptions {
        context_size: Some(CONTEXT),
        threads: Some(threads),
        ..EngineOptions::default()
    });
    let Ok(_) = engine.load(model) else {
        panic!("cannot load {}", model.display());
    };
    let loaded = rss_kib(std::process::id()).saturating_sub(before);
    let mut samples = Vec::new();
    for run in 0..RUNS {
        let request = GenerateRequest {
            system: "You are a helpful assistant.".into(),
            messages: vec![ChatMessage::User {
                text: question(run),
                attachments: Vec::new(),
            }],
            tools: Vec::new(),
            tool_choice: ToolChoice::None,
            max_tokens: GENERATE,
            temperature: 0.0,
            seed: 0,
        };
        let generation = match engine.generate(model, request, &mut |_| {}) {
            Ok(g) => g,
            Err(e) => panic!("embedded run failed: {e}"),
        };
        samples.push(Sample {
            prompt_tps: generation.timings.prompt_tokens_per_second(),
            generation_tps: generation.tokens_per_second(),
            first_token_ms: generation.timings.first_token_ms,
            prompt_tokens: generation.prompt_tokens,
        });
    }
    (samples, loaded)
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(18080)
}

fn http(port: u16, method: &str, path: &str, body: &str) -> std::io::Result<(u16, String, f64)> {
    let started = Instant::now();
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(300)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line)?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // Time to the first streamed data line.
    let mut first_data_ms = 0.0;
    let mut text = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        if first_data_ms == 0.0 && line.starts_with("data: ") && line.contains("\"content\":\"") {
            let content = line.split("\"content\":\"").nth(1).unwrap_or("");
            if !content.starts_with('"') {
                first_data_ms = started.elapsed().as_secs_f64() * 1000.0;
            }
        }
        text.push_str(&line);
    }
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    text.push_str(&rest);
    Ok((status, text, first_data_ms))
}

fn server(model: &Path, binary: &Path, threads: u32) -> (Vec<Sample>, u64) {
    let port = free_port();
    let child = Command::new(binary)
        .args([
            "-m",
            &model.display().to_string(),
            "-t",
            &threads.to_string(),
            "-tb",
            &threads.to_string(),
        ])
        .args([
            "-c",
            &CONTEXT.to_string(),
            "-b",
            "512",
            "--port",
            &port.to_string(),
            "--host",
            "127.0.0.1",
        ])
        .args(["-np", "1", "--no-warmup"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let server = match child {
        Ok(child) => Server(child),
        Err(e) => panic!("cannot start {}: {e}", binary.display()),
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok((200, _, _)) = http(port, "GET", "/health", "") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "llama-server did not become ready"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let loaded = rss_kib(server.0.id());
    let bos = "";
    let template_source = suzent_llama::models::read_gguf_info(model)
        .ok()
        .and_then(|i| i.chat_template)
        .unwrap_or_default();
    let template = match ChatTemplate::new(&template_source, bos, "") {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    let mut samples = Vec::new();
    for run in 0..RUNS {
        let prompt = match template.render(
            "You are a helpful assistant.",
            &[ChatMessage::User {
                text: question(run),
                attachments: Vec::new(),
            }],
            &[],
        ) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        let body = serde_json::json!({
            "prompt": prompt,
            "n_predict": GENERATE,
            "temperature": 0.0,
            "top_k": 1,
            "cache_prompt": false,
            "stream": true,
            "ignore_eos": false,
        })
        .to_string();
        let (status, text, first_token_ms) = match http(port, "POST", "/completion", &body) {
            Ok(r) => r,
            Err(e) => panic!("request failed: {e}"),
        };
        assert_eq!(status, 200, "{text}");
        let timings = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find_map(|v| v.get("timings").cloned())
            .unwrap_or_default();
        let number = |key: &str| timings.get(key).and_then(|v| v.as_f64()).unwrap_or(0.0);
        samples.push(Sample {
            prompt_tps: number("prompt_per_second"),
            generation_tps: number("predicted_per_second"),
            first_token_ms,
            prompt_tokens: number("prompt_n") as u32,
        });
    }
    (samples, loaded)
}

fn summary(name: &str, samples: &[Sample], rss: u64) -> Sample {
    let s = Sample {
        prompt_tps: median(samples.iter().map(|s| s.prompt_tps).collect()),
        generation_tps: median(samples.iter().map(|s| s.generation_tps).collect()),
        first_token_ms: median(samples.iter().map(|s| s.first_token_ms).collect()),
        prompt_tokens: samples.first().map(|s| s.prompt_tokens).unwrap_or(0),
    };
    println!(
        "{name:<14} prompt {:>8.1} tok/s ({} tokens)   generation {:>7.1} tok/s   first token {:>7.1} ms   RSS with model {:>6} MiB",
        s.prompt_tps,
        s.prompt_tokens,
        s.generation_tps,
        s.first_token_ms,
        rss / 1024
    );
    s
}

fn main() {
    let model = std::env::var_os("SUZENT_BENCH_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| assets().join("SmolLM2-135M-Instruct.Q4_1.gguf"));
    let binary = std::env::var_os("SUZENT_LLAMA_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| assets().join("llama-server/bin/llama-server"));
    let threads = std::env::var("SUZENT_BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(suzent_llama::machine::default_threads);
    println!(
        "model {} | threads {threads} | context {CONTEXT} | {GENERATE} tokens generated | median of {RUNS}",
        model.display()
    );
    let (samples, rss) = embedded(&model, threads);
    let ours = summary("embedded", &samples, rss);
    let (samples, rss) = server(&model, &binary, threads);
    let theirs = summary("llama-server", &samples, rss);
    println!(
        "ratio embedded/server: prompt {:.2}x, generation {:.2}x",
        ours.prompt_tps / theirs.prompt_tps.max(f64::MIN_POSITIVE),
        ours.generation_tps / theirs.generation_tps.max(f64::MIN_POSITIVE)
    );
}
