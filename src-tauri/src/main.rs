//! The `suzent-desktop` binary: the Tauri app.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use tracing_subscriber::prelude::*;

/// Logs to stderr and to the same daily-rotated file as the CLI (`logs/suzent.log.*` under the
/// data folder). Returns the file writer's guard (logs are flushed when it drops) and the folder.
fn init_logging() -> (
    Option<tracing_appender::non_blocking::WorkerGuard>,
    Option<std::path::PathBuf>,
) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SUZENT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let stderr = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let dir = suzent_runtime::Paths::from_env()
        .ok()
        .map(|p| suzent_runtime::log_dir(&p));
    let (file, guard) = match &dir {
        Some(dir) => {
            let appender = tracing_appender::rolling::daily(dir, suzent_runtime::LOG_FILE_NAME);
            let (writer, guard) = tracing_appender::non_blocking(appender);
            (
                Some(
                    tracing_subscriber::fmt::layer()
                        .with_writer(writer)
                        .with_ansi(false),
                ),
                Some(guard),
            )
        }
        None => (None, None),
    };
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(file)
        .try_init();
    (guard, dir)
}

fn main() -> std::process::ExitCode {
    let (_guard, log_dir) = init_logging();
    tracing::info!("suzent desktop starting");
    match suzent_desktop::run(log_dir) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
