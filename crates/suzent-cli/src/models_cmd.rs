//! `suzent models`: local GGUF models (list, pull, import, rm) and the models a local server
//! serves.

use anyhow::{Result, anyhow};
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use suzent_runtime::Runtime;
use suzent_runtime::local_models::{DownloadProgress, PullSource};

/// `suzent models ...`
#[derive(Subcommand)]
pub enum ModelsCommand {
    /// Lists the installed models (`--recommended`: the recommended ones; `--server P`: what the
    /// server of provider P serves, from its `/models`).
    List {
        /// The recommended models, with size, licence and purpose.
        #[arg(long)]
        recommended: bool,
        /// Ask this provider's server (`local`, `openai-compatible`, `ollama`, `openai`).
        #[arg(long, conflicts_with = "recommended")]
        server: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Downloads a recommended model by id, or a GGUF file by URL (with its SHA-256).
    Pull {
        /// A recommended model id or an `https://...gguf` URL.
        model: String,
        /// The file's SHA-256 (needed for a URL whose server publishes none).
        #[arg(long)]
        sha256: Option<String>,
    },
    /// Copies a GGUF file from disk into the models folder.
    Import {
        /// The `.gguf` file.
        path: PathBuf,
    },
    /// Deletes an installed model.
    Rm {
        /// Its id (as `models list` shows).
        id: String,
    },
}

/// Prints progress to stderr at most every 2 % (or 32 MiB without a known size), at each new
/// attempt and at the end.
fn progress_printer() -> impl Fn(&DownloadProgress) + Send + Sync {
    let last: Mutex<Option<(u32, u64)>> = Mutex::new(None);
    move |p: &DownloadProgress| {
        let Ok(mut last) = last.lock() else { return };
        let percent = p
            .total
            .filter(|t| *t > 0)
            .map(|t| p.downloaded.saturating_mul(100) / t);
        let mark = percent.unwrap_or(p.downloaded >> 24);
        let done = p.total == Some(p.downloaded);
        let show = match *last {
            None => true,
            Some((attempt, seen)) => attempt != p.attempt || mark >= seen + 2 || done,
        };
        if !show {
            return;
        }
        *last = Some((p.attempt, mark));
        let mib = |bytes: u64| bytes as f64 / 1_048_576.0;
        let resumed = if p.resumed_from > 0 {
            format!(", resumed at {:.1} MiB", mib(p.resumed_from))
        } else {
            String::new()
        };
        match (percent, p.total) {
            (Some(percent), Some(total)) => eprintln!(
                "{}: {percent:>3}% ({:.1} of {:.1} MiB){resumed}",
                p.id,
                mib(p.downloaded),
                mib(total)
            ),
            _ => eprintln!("{}: {:.1} MiB{resumed}", p.id, mib(p.downloaded)),
        }
    }
}

/// Runs a `models` subcommand.
pub async fn run(command: ModelsCommand, runtime: Runtime) -> Result<ExitCode> {
    let models = runtime.local_models();
    match command {
        ModelsCommand::List {
            recommended: true,
            json,
            ..
        } => {
            let list = models.recommended();
            if json {
                let items: Vec<serde_json::Value> = list
                    .iter()
                    .map(|(m, installed)| {
                        let mut v = serde_json::to_value(m).unwrap_or_default();
                        v["installed"] = serde_json::Value::Bool(*installed);
                        v
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&items)?);
            } else {
                for (m, installed) in list {
                    println!(
                        "{}{}\n    {} | about {:.1} GB | {} | needs {} GB RAM\n    {}",
                        m.id,
                        if installed { "  (installed)" } else { "" },
                        m.name,
                        m.size_bytes as f64 / 1e9,
                        m.license,
                        m.min_ram_gb,
                        m.purpose
                    );
                }
            }
        }
        ModelsCommand::List {
            server: Some(provider),
            json,
            ..
        } => {
            let ids = runtime.server_models(&provider).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&ids)?);
            } else {
                for id in ids {
                    println!("{provider}/{id}");
                }
            }
        }
        ModelsCommand::List { json, .. } => {
            let installed = models.list()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&installed)?);
            } else if installed.is_empty() {
                println!(
                    "no local models in {}; `suzent models list --recommended` shows what `suzent models pull` can add",
                    models.dir().display()
                );
            } else {
                for m in installed {
                    println!(
                        "local/{}  {:.1} MiB  {}{}",
                        m.id,
                        m.size_bytes as f64 / 1_048_576.0,
                        m.architecture,
                        m.context_length
                            .map(|c| format!(", context {c}"))
                            .unwrap_or_default()
                    );
                }
            }
        }
        ModelsCommand::Pull { model, sha256 } => {
            let source = if model.contains("://") {
                PullSource::Url { url: model, sha256 }
            } else {
                if sha256.is_some() {
                    return Err(anyhow!(
                        "--sha256 is for URLs; recommended models are checked against the hub's checksum"
                    ));
                }
                PullSource::Recommended(model)
            };
            let printer = progress_printer();
            let installed = models.pull(source, &printer).await?;
            println!(
                "installed local/{} ({})",
                installed.id,
                installed.sha256.as_deref().unwrap_or_default()
            );
        }
        ModelsCommand::Import { path } => {
            let printer = progress_printer();
            let installed = models.import(&path, &printer).await?;
            println!("installed local/{}", installed.id);
        }
        ModelsCommand::Rm { id } => {
            models.remove(&id)?;
            println!("removed {id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
