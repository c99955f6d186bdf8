//! `suzent audit verify` and `suzent permissions explain`: thin mappings onto the audit module
//! and `Runtime::explain_permission`.

use anyhow::{Context, Result, anyhow};
use clap::{Args, Subcommand};
use serde_json::Value;
use std::process::ExitCode;
use suzent_core::PermissionMode;

/// `suzent audit ...`.
#[derive(Subcommand)]
pub enum AuditCommand {
    /// Checks the hash chain of permission-audit.jsonl (and its rotated files); exits 1 at the
    /// first broken line.
    Verify {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `suzent permissions ...`.
#[derive(Subcommand)]
pub enum PermissionsCommand {
    /// Shows what the permission engine would decide for a call, and why. Nothing runs.
    Explain(ExplainArgs),
}

/// Arguments of `permissions explain`.
#[derive(Args)]
pub struct ExplainArgs {
    /// Tool runtime name (run_command, write_file, ...).
    #[arg(long)]
    tool: String,
    /// The call's arguments as a JSON object, e.g. '{"content":"git status"}'.
    #[arg(long)]
    args: String,
    /// Permission mode: default, auto or full_access (default: the chat's or the configured).
    #[arg(long)]
    mode: Option<String>,
    /// Evaluate for this chat (its workspace and session rules).
    #[arg(long)]
    chat: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `audit verify`.
pub fn audit(cmd: AuditCommand) -> Result<ExitCode> {
    let AuditCommand::Verify { json } = cmd;
    let paths = suzent_runtime::Paths::from_env().map_err(|e| anyhow!(e))?;
    let path = paths.audit_log();
    let report = suzent_permissions::audit::verify(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else if let Some(b) = &report.broken {
        println!("BROKEN: {} line {}: {}", b.file.display(), b.line, b.reason);
    } else {
        println!(
            "OK: {} lines in {} file(s), chain intact ({})",
            report.lines,
            report.files.len(),
            path.display()
        );
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Runs `permissions explain`.
pub async fn permissions(cmd: PermissionsCommand) -> Result<ExitCode> {
    let PermissionsCommand::Explain(a) = cmd;
    let args: Value = serde_json::from_str(&a.args).context("--args is not valid JSON")?;
    let mode = a
        .mode
        .as_deref()
        .map(|m| m.parse::<PermissionMode>().map_err(|e| anyhow!(e)))
        .transpose()?;
    let rt = suzent_runtime::Runtime::open(suzent_runtime::RuntimeOptions::from_env()?).await?;
    let e = rt
        .explain_permission(&a.tool, args, mode, a.chat.as_deref())
        .await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&e)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} ({}) — {} [{} risk, mode {}]",
        e.behavior,
        e.reason_code,
        e.reason,
        serde_json::to_value(e.risk)?.as_str().unwrap_or(""),
        e.mode
    );
    if e.reviewer_would_decide {
        println!("In auto mode this call goes to the reviewer model.");
    }
    for r in &e.matched_rules {
        let mark = if r.decisive { "*" } else { " " };
        println!("{mark} rule {}: {}", r.rule.id, r.why);
    }
    for (i, s) in e.segments.iter().enumerate() {
        let mut line = format!(
            "  segment {}: {}  -> {} ({})",
            i + 1,
            s.words.join(" "),
            s.verdict,
            s.verdict_reason
        );
        if !s.wrappers.is_empty() {
            line.push_str(&format!("  (inside {})", s.wrappers.join(" > ")));
        }
        if !s.redirects.is_empty() {
            line.push_str(&format!("  writes {}", s.redirects.join(", ")));
        }
        if !s.assignments.is_empty() {
            line.push_str(&format!("  with {}", s.assignments.join(" ")));
        }
        println!("{line}");
    }
    if !e.destinations.is_empty() || !e.destinations_complete {
        let unread = if e.destinations_complete {
            ""
        } else {
            " (some could not be read: destination allow rules do not apply)"
        };
        println!("  destinations: {}{unread}", e.destinations.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
