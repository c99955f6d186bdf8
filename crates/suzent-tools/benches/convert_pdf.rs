//! `read_file` on a 100-page PDF: conversion time (pdf-extract, page by page) through the tool,
//! as the model would call it. The PDF is generated with reportlab (installed by .ci/run): 100
//! pages of 40 lines of text each. Prints the median of 5 runs.
//!
//! Run: `cargo bench -p suzent-tools --bench convert_pdf`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use suzent_permissions::PathPolicy;
use suzent_tools::{ToolContext, default_registry};

const PAGES: usize = 100;
const RUNS: usize = 5;

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let pdf = ws.join("book.pdf");
    let script = format!(
        "from reportlab.pdfgen import canvas\n\
         c = canvas.Canvas({:?})\n\
         for p in range({PAGES}):\n\
         \x20   for l in range(40):\n\
         \x20       c.drawString(50, 780 - l * 18, f'Page {{p + 1}} line {{l + 1}}: the quick brown fox jumps over the lazy dog near the river bank')\n\
         \x20   c.showPage()\n\
         c.save()\n",
        pdf.display().to_string()
    );
    let status = std::process::Command::new("python3")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(
        status.success(),
        "reportlab is needed (pip install reportlab)"
    );
    let size = std::fs::metadata(&pdf).unwrap().len();
    let policy = PathPolicy::new(&ws, &[]).unwrap();
    let ctx = ToolContext::new(
        "bench",
        "bench",
        ws.clone(),
        ws.clone(),
        ws.clone(),
        Arc::new(policy),
    );
    let tool = default_registry().get("read_file").unwrap();
    let mut times = Vec::new();
    let mut header = String::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let out = tool
            .call(json!({"file_path": "book.pdf", "limit": 50}), &ctx)
            .await
            .unwrap();
        times.push(start.elapsed());
        header = out.lines().next().unwrap_or_default().to_string();
    }
    times.sort();
    let median: Duration = times[RUNS / 2];
    println!(
        "read_file on a {PAGES}-page PDF ({size} bytes): median {median:.2?} of {RUNS} runs (min {:.2?}, max {:.2?})",
        times[0],
        times[RUNS - 1]
    );
    println!("  first line of the result: {header}");
}
