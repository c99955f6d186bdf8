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

/// Sets the webview's environment defaults ([`suzent_desktop::rendering`]) while the process has
/// one thread; returns what was set, to log once logging runs.
fn set_webview_env() -> Vec<(&'static str, &'static str)> {
    let set = suzent_desktop::rendering::webview_env(std::path::Path::new("/dev/dri"), |name| {
        std::env::var_os(name).is_some()
    });
    for (name, value) in &set {
        // SAFETY: called first thing in `main`, before any thread exists (logging, Tauri and
        // tokio start later), so nothing reads the environment concurrently.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var(name, value)
        };
    }
    set
}

fn main() -> std::process::ExitCode {
    let webview_env = set_webview_env();
    let (_guard, log_dir) = init_logging();
    tracing::info!("suzent desktop starting");
    for (name, value) in webview_env {
        tracing::info!("no GPU render node in /dev/dri: {name}={value} (pages painted on the CPU)");
    }
    match suzent_desktop::run(log_dir) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
