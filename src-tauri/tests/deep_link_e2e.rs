//! End-to-end tests of `suzent://` links and the single instance (R2-D05) in the real desktop
//! app (WebDriver under Xvfb, see `support`): a link is handed over the way Linux delivers it, as
//! the only argument of a second launch of the app with the same environment (session bus,
//! display, `SUZENT_HOME`). The second launch runs under strace, which shows it exits before it
//! opens the database or binds a port; the running app shows the install dialog (nothing runs
//! before Confirm: the marker file the server's command would create stays absent) or opens the
//! chat. Screenshots land under `$CARGO_TARGET_DIR/e2e-screenshots/<test>/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, Result, bail, ensure};
use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{Desktop, app_process, desktop_test};

fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_suzent-desktop"))
}

/// What the traced second launch did.
struct SecondLaunch {
    /// Its exit code.
    code: Option<i32>,
    /// The strace lines that opened the database or bound a socket.
    touched: Vec<String>,
    /// Its stderr.
    stderr: String,
}

/// Launches the app again with `argv` and the running app's environment, under
/// `strace -f -e trace=openat,bind`, and waits for it to exit (at most 60 s).
fn launch_again(d: &Desktop, argv: &[&str]) -> Result<SecondLaunch> {
    let (_, env) = app_process(exe(), d.home.path())
        .context("the running app's process (HOME = the test's home) was not found")?;
    let trace = d.shots.join(format!("second-launch-{}.strace", d.step));
    let mut child = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat,bind", "-o"])
        .arg(&trace)
        .arg(exe())
        .args(argv)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("running strace (apt-get install strace; scripts/setup-tests does)")?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("the second launch did not exit within 60 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        use std::io::Read;
        let _ = pipe.read_to_string(&mut stderr);
    }
    let trace = std::fs::read_to_string(&trace).unwrap_or_default();
    let touched = trace
        .lines()
        .filter(|l| l.contains("suzent.db") || (l.contains("bind(") && l.contains("AF_INET")))
        .map(str::to_string)
        .collect();
    Ok(SecondLaunch {
        code: status.code(),
        touched,
        stderr,
    })
}

/// Reads `config/mcp.json` of the test's `SUZENT_HOME` (none yet: `null`).
fn mcp_json(d: &Desktop) -> Result<serde_json::Value> {
    let path = d.home.path().join("suzent/config/mcp.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(serde_json::from_str(&text)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::Value::Null),
        Err(e) => Err(e.into()),
    }
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[test]
fn an_mcp_install_link_shows_the_full_command_and_runs_nothing_before_confirm() {
    desktop_test("deep_link_mcp_install", Vec::new(), |d| {
        Box::pin(async move {
            d.wait_for_app().await?;
            d.screenshot("app-running").await?;
            let marker: PathBuf = d.workspace().join("server-started.marker");
            let script = format!("touch {}; exec cat", marker.display());
            let link = format!(
                "suzent://mcp/install?name=linked&command=%2Fbin%2Fsh&arg=-c&arg={}&env=LINK_TOKEN%3Dt0k3n",
                encode(&script)
            );

            let second = launch_again(d, &[&link])?;
            assert_eq!(
                (second.code, second.touched),
                (Some(0), Vec::<String>::new()),
                "the second launch must exit at once without opening the database or binding \
                 a port; its stderr:\n{}",
                second.stderr
            );

            d.wait_css("[data-testid=mcp-install-dialog]").await?;
            let command = d
                .find("[data-testid=mcp-install-command]")
                .await?
                .text()
                .await?;
            let mut args = Vec::new();
            for arg in d
                .client()
                .find_all(fantoccini::Locator::Css("[data-testid=mcp-install-arg]"))
                .await?
            {
                args.push(arg.text().await?);
            }
            let env = d
                .find("[data-testid=mcp-install-env]")
                .await?
                .text()
                .await?;
            assert_eq!(
                (command.as_str(), args, env.trim()),
                (
                    "/bin/sh",
                    vec!["-c".to_string(), script.clone()],
                    "LINK_TOKEN=t0k3n"
                )
            );
            d.screenshot("install-dialog").await?;
            // Nothing ran and nothing was added before Confirm.
            tokio::time::sleep(Duration::from_secs(2)).await;
            ensure!(!marker.exists(), "the server ran before Confirm");
            assert_eq!(mcp_json(d)?.pointer("/mcpServers/linked"), None);

            d.click("[data-testid=mcp-install-confirm]").await?;
            d.wait_css("[data-testid=deep-link-added]").await?;
            d.wait_gone("[data-testid=mcp-install-dialog]").await?;
            d.screenshot("added").await?;
            assert_eq!(
                mcp_json(d)?.pointer("/mcpServers/linked").cloned(),
                Some(serde_json::json!({
                    "command": "/bin/sh",
                    "args": ["-c", script],
                    "env": {"LINK_TOKEN": "t0k3n"}
                })),
                "added untrusted (no `trusted: true`) and enabled"
            );
            ensure!(!marker.exists(), "adding the server started it");

            // An unknown field is refused with a message; nothing is asked.
            let second = launch_again(d, &["suzent://mcp/install?name=x&command=sh&trusted=true"])?;
            assert_eq!(second.code, Some(0));
            d.wait_text(
                "[data-testid=deep-link-refused]",
                "unknown field 'trusted' in a mcp/install link",
            )
            .await?;
            assert_eq!(d.count("[data-testid=mcp-install-dialog]").await?, 0);
            d.screenshot("unknown-field-refused").await?;
            // The link's environment value is not in the log.
            let log_dir = d.home.path().join("suzent/data/logs");
            for entry in std::fs::read_dir(&log_dir).into_iter().flatten().flatten() {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                ensure!(
                    !text.contains("t0k3n"),
                    "{} holds the link's token",
                    entry.path().display()
                );
            }
            Ok(())
        })
    });
}

#[test]
fn a_second_launch_with_a_chat_link_opens_the_chat_in_the_running_app() {
    desktop_test("deep_link_chat", Vec::new(), |d| {
        Box::pin(async move {
            d.new_chat().await?;
            d.new_chat().await?;
            let ids: Vec<String> = {
                let mut ids = Vec::new();
                for item in d
                    .client()
                    .find_all(fantoccini::Locator::Css("[data-testid=chat-item]"))
                    .await?
                {
                    ids.push(item.attr("data-chat-id").await?.context("chat-item id")?);
                }
                ids
            };
            ensure!(ids.len() >= 2, "two chats expected, found {ids:?}");
            let active = d
                .find("[data-testid=chat-item].active")
                .await?
                .attr("data-chat-id")
                .await?
                .context("active chat id")?;
            let other = ids.iter().find(|id| **id != active).unwrap().clone();
            // Away from the chat page, so the link must also bring the chat page back.
            d.click("[data-testid=nav-settings]").await?;
            d.screenshot("settings-open").await?;

            let second = launch_again(d, &[&format!("suzent://chat/{other}")])?;
            assert_eq!(
                (second.code, second.touched),
                (Some(0), Vec::<String>::new()),
                "stderr:\n{}",
                second.stderr
            );
            d.wait_css(&format!(
                "[data-testid=chat-item].active[data-chat-id='{other}']"
            ))
            .await?;
            d.wait_css("[data-testid=composer-input]").await?;
            d.screenshot("linked-chat-open").await?;

            // Another data folder is another app: it passes both locks and starts.
            let other_home = tempfile::tempdir()?;
            std::fs::create_dir_all(other_home.path().join("config"))?;
            let (_, env) = app_process(exe(), d.home.path()).context("the running app")?;
            let mut child = support::Group::spawn({
                let mut c = Command::new(exe());
                c.env_clear()
                    .envs(env)
                    .env("SUZENT_HOME", other_home.path())
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                c
            })?;
            let lock = other_home.path().join("data/desktop.lock");
            let pid = child.child.id().to_string();
            let deadline = Instant::now() + Duration::from_secs(60);
            while std::fs::read_to_string(&lock).unwrap_or_default() != pid {
                if let Some(status) = child.child.try_wait()? {
                    bail!("the app on another data folder exited: {status}");
                }
                if Instant::now() > deadline {
                    bail!("the app on another data folder did not take its lock in 60 s");
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            drop(child);
            Ok(())
        })
    });
}
