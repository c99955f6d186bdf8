//! Where the extension finds the bridge's port: a Chrome native messaging host
//! (`dev.suzent.bridge`) that answers any message with `{"port": N}`. Its manifest's
//! `allowed_origins` names only the paired extension(s) — before any pairing, only the extension
//! shipped with this app — so no other extension can even ask. The host itself is a tiny script
//! in the data directory with the port written into it (rewritten when the port changes); it
//! reads the browser's message and prints the answer in the native messaging framing (a 32-bit
//! length in native byte order, then UTF-8 JSON).
//!
//! Manifest locations (per user), from Chrome's and Edge's documentation:
//! - Linux: `$XDG_CONFIG_HOME` (default `~/.config`) + `google-chrome`, `chromium`,
//!   `microsoft-edge`, each `/NativeMessagingHosts/dev.suzent.bridge.json`.
//! - macOS: `~/Library/Application Support/` + `Google/Chrome`, `Chromium`, `Microsoft Edge`,
//!   each `/NativeMessagingHosts/dev.suzent.bridge.json`.
//! - Windows: the manifest in the data directory and its path as the default value of
//!   `HKCU\Software\Google\Chrome\NativeMessagingHosts\dev.suzent.bridge` (and `Chromium`,
//!   `Microsoft\Edge`).
//!
//! A browser's directory is written only when that browser's own profile folder exists (so
//! nothing is created for browsers that are not installed); the install runs at every start.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// The native messaging host's name (what `chrome.runtime.sendNativeMessage` names).
pub const HOST_NAME: &str = "dev.suzent.bridge";

/// A browser a host manifest was written for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct HostInstall {
    /// `Chrome`, `Chromium` or `Edge`.
    pub browser: String,
    /// Where the manifest went (Windows: the registry key it is registered under, too).
    pub manifest: String,
}

/// Everything the installer needs; [`NativeHostPlan::for_this_user`] fills it from the
/// environment, tests point it at temporary folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeHostPlan {
    /// Where the host script (and, on Windows, the manifest) lives.
    pub host_dir: PathBuf,
    /// Each browser's name, its profile folder (must exist) and the manifest folder.
    pub browsers: Vec<(String, PathBuf, PathBuf)>,
}

impl NativeHostPlan {
    /// The plan for the current user on this platform; `host_dir` under the data directory.
    pub fn for_this_user(data_dir: &Path) -> NativeHostPlan {
        let host_dir = data_dir.join("browser").join("native-host");
        let mut browsers = Vec::new();
        #[cfg(target_os = "linux")]
        {
            let config = std::env::var_os("XDG_CONFIG_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
            if let Some(config) = config {
                for (name, dir) in [
                    ("Chrome", "google-chrome"),
                    ("Chromium", "chromium"),
                    ("Edge", "microsoft-edge"),
                ] {
                    let profile = config.join(dir);
                    let manifests = profile.join("NativeMessagingHosts");
                    browsers.push((name.to_string(), profile, manifests));
                }
            }
        }
        #[cfg(target_os = "macos")]
        {
            if let Some(home) = std::env::var_os("HOME") {
                let support = PathBuf::from(home).join("Library/Application Support");
                for (name, dir) in [
                    ("Chrome", "Google/Chrome"),
                    ("Chromium", "Chromium"),
                    ("Edge", "Microsoft Edge"),
                ] {
                    let profile = support.join(dir);
                    let manifests = profile.join("NativeMessagingHosts");
                    browsers.push((name.to_string(), profile, manifests));
                }
            }
        }
        #[cfg(windows)]
        {
            // The registry decides; the "profile" is the key's parent, checked by reg.exe.
            for (name, key) in [
                ("Chrome", r"Software\Google\Chrome"),
                ("Chromium", r"Software\Chromium"),
                ("Edge", r"Software\Microsoft\Edge"),
            ] {
                browsers.push((name.to_string(), PathBuf::from(key), host_dir.clone()));
            }
        }
        NativeHostPlan { host_dir, browsers }
    }
}

/// The manifest's JSON (the format Chrome and Edge document).
pub fn manifest_json(host_path: &Path, allowed_extension_ids: &[String]) -> String {
    let origins: Vec<String> = allowed_extension_ids
        .iter()
        .map(|id| format!("chrome-extension://{id}/"))
        .collect();
    let manifest = serde_json::json!({
        "name": HOST_NAME,
        "description": "Tells the Suzent browser extension the port of the Suzent app on this computer",
        "path": host_path.to_string_lossy(),
        "type": "stdio",
        "allowed_origins": origins,
    });
    serde_json::to_string_pretty(&manifest).unwrap_or_default()
}

/// The framed answer the host prints: `{"port":N}` after its length (4 bytes, little-endian,
/// which is the native byte order of every platform Chrome runs on).
pub fn framed_answer(port: u16) -> Vec<u8> {
    let body = format!("{{\"port\":{port}}}");
    let mut out = (body.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(body.as_bytes());
    out
}

/// The POSIX shell host: waits for the browser's message to start arriving (so the browser's
/// write never meets a closed pipe), then prints the framed answer with `printf` octal escapes.
pub fn unix_host_script(port: u16) -> String {
    let escaped: String = framed_answer(port)
        .iter()
        .map(|b| match b {
            b'0'..=b'9' | b'a'..=b'z' | b'{' | b'}' | b':' => (*b as char).to_string(),
            _ => format!("\\{b:03o}"),
        })
        .collect();
    format!(
        "#!/bin/sh\n# Written by Suzent: tells the Suzent browser extension this app's port.\n\
         head -c 4 >/dev/null\nprintf '{escaped}'\n"
    )
}

/// The Windows host (`.bat`): PowerShell writes the same framed answer to standard output.
pub fn windows_host_script(port: u16) -> String {
    format!(
        "@echo off\r\nrem Written by Suzent: tells the Suzent browser extension this app's port.\r\n\
         powershell -NoProfile -NonInteractive -Command \"$b=[Text.Encoding]::UTF8.GetBytes('{{\"\"port\"\":{port}}}');\
         $o=[Console]::OpenStandardOutput();$o.Write([BitConverter]::GetBytes([int]$b.Length),0,4);\
         $o.Write($b,0,$b.Length);$o.Flush()\"\r\n"
    )
}

/// Writes `text` to `path` atomically (a temporary file renamed over it).
fn write_atomic(path: &Path, text: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Writes the host script and a manifest for each installed browser. With no extension id
/// allowed, removes the manifests instead (nobody may ask).
///
/// Errors: the first I/O failure, naming the file.
pub fn install(
    plan: &NativeHostPlan,
    port: u16,
    allowed_extension_ids: &[String],
) -> Result<Vec<HostInstall>, String> {
    let script = if cfg!(windows) {
        plan.host_dir.join("suzent-bridge-host.bat")
    } else {
        plan.host_dir.join("suzent-bridge-host.sh")
    };
    let body = if cfg!(windows) {
        windows_host_script(port)
    } else {
        unix_host_script(port)
    };
    write_atomic(&script, body.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot make {} executable: {e}", script.display()))?;
    }
    let manifest = manifest_json(&script, allowed_extension_ids);
    let mut done = Vec::new();
    for (browser, profile, manifests) in &plan.browsers {
        if cfg!(windows) {
            let file = manifests.join(format!("{HOST_NAME}.{}.json", browser.to_lowercase()));
            register_windows(
                browser,
                profile,
                &file,
                &manifest,
                allowed_extension_ids.is_empty(),
            )?;
            if !allowed_extension_ids.is_empty() {
                done.push(HostInstall {
                    browser: browser.clone(),
                    manifest: file.display().to_string(),
                });
            }
            continue;
        }
        if !profile.is_dir() {
            continue;
        }
        let file = manifests.join(format!("{HOST_NAME}.json"));
        if allowed_extension_ids.is_empty() {
            match std::fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot remove {}: {e}", file.display())),
            }
            continue;
        }
        write_atomic(&file, manifest.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        done.push(HostInstall {
            browser: browser.clone(),
            manifest: file.display().to_string(),
        });
    }
    Ok(done)
}

#[cfg(windows)]
fn register_windows(
    _browser: &str,
    key: &Path,
    file: &Path,
    manifest: &str,
    remove: bool,
) -> Result<(), String> {
    let key = format!(r"HKCU\{}\NativeMessagingHosts\{HOST_NAME}", key.display());
    if remove {
        let _ = std::fs::remove_file(file);
        let _ = std::process::Command::new("reg")
            .args(["delete", &key, "/f"])
            .output();
        return Ok(());
    }
    write_atomic(file, manifest.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let out = std::process::Command::new("reg")
        .args(["add", &key, "/ve", "/t", "REG_SZ", "/d"])
        .arg(file)
        .arg("/f")
        .output()
        .map_err(|e| format!("cannot run reg.exe: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "reg add {key} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

#[cfg(not(windows))]
fn register_windows(
    _browser: &str,
    _key: &Path,
    _file: &Path,
    _manifest: &str,
    _remove: bool,
) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_framed_answer_is_length_then_json() {
        let framed = framed_answer(17345);
        assert_eq!(&framed[..4], &[14, 0, 0, 0]);
        assert_eq!(&framed[4..], b"{\"port\":17345}");
    }

    #[cfg(unix)]
    #[test]
    fn the_unix_host_prints_the_framed_answer_after_reading_the_request() -> anyhow::Result<()> {
        use std::io::Write;
        let dir = tempfile::tempdir()?;
        let plan = NativeHostPlan {
            host_dir: dir.path().join("host"),
            browsers: vec![],
        };
        install(&plan, 17345, &["a".repeat(32)]).map_err(anyhow::Error::msg)?;
        let mut child = std::process::Command::new(plan.host_dir.join("suzent-bridge-host.sh"))
            .arg("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(&[2, 0, 0, 0, b'{', b'}'])?;
        }
        let out = child.wait_with_output()?;
        assert_eq!(out.stdout, framed_answer(17345));
        Ok(())
    }

    #[cfg(not(windows))]
    #[test]
    fn manifests_go_only_to_installed_browsers_and_allow_only_the_given_extension()
    -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let chromium = dir.path().join("chromium");
        std::fs::create_dir_all(&chromium)?;
        let plan = NativeHostPlan {
            host_dir: dir.path().join("host"),
            browsers: vec![
                (
                    "Chromium".into(),
                    chromium.clone(),
                    chromium.join("NativeMessagingHosts"),
                ),
                (
                    "Chrome".into(),
                    dir.path().join("google-chrome"),
                    dir.path().join("google-chrome/NativeMessagingHosts"),
                ),
            ],
        };
        let id = "b".repeat(32);
        let done = install(&plan, 4000, std::slice::from_ref(&id)).map_err(anyhow::Error::msg)?;
        let manifest_path = chromium.join("NativeMessagingHosts/dev.suzent.bridge.json");
        assert_eq!(
            done,
            vec![HostInstall {
                browser: "Chromium".into(),
                manifest: manifest_path.display().to_string()
            }]
        );
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&manifest_path)?)?;
        assert_eq!(
            manifest["allowed_origins"],
            serde_json::json!([format!("chrome-extension://{id}/")])
        );
        assert!(!dir.path().join("google-chrome").exists());
        install(&plan, 4000, &[]).map_err(anyhow::Error::msg)?;
        assert!(!manifest_path.exists());
        Ok(())
    }
}
