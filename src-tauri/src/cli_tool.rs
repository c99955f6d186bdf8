//! Settings → Desktop → "Install command-line tool": puts the `suzent` CLI that ships beside the
//! app on the user's PATH.
//!
//! - macOS: a symbolic link `/usr/local/bin/suzent` → `Suzent.app/Contents/MacOS/suzent`. When
//!   the folder is not writable, the system's own administrator prompt asks (AppleScript's
//!   `do shell script … with administrator privileges`, through `osascript`).
//! - Windows: the install folder (where `suzent.exe` sits beside the app) is appended to the
//!   user's `Path` in `HKEY_CURRENT_USER\Environment` (keeping the value's type, so `%VARS%` in
//!   a `REG_EXPAND_SZ` stay unexpanded), then `WM_SETTINGCHANGE` ("Environment") is broadcast so
//!   new terminals see it.
//! - Linux: the .deb and .rpm install `/usr/bin/suzent` already; the action is not offered
//!   (`supported: false`).
//!
//! The pure parts (where the link goes, whether it is already ours, the PATH edit on a string,
//! the AppleScript text) are plain functions tested on every system; the platform calls are
//! small and `cfg`'d.

use crate::error::{AppError, AppErrorKind};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where the CLI stands on this system (the `cli_tool_status` command).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct CliToolStatus {
    /// Whether this system offers the action (macOS and Windows; on Linux the packages put the
    /// CLI on PATH).
    pub supported: bool,
    /// Whether `suzent` from this app is on PATH already (the link points at it, or the folder is
    /// in the user's Path).
    pub installed: bool,
    /// The bundled CLI (`…/Suzent.app/Contents/MacOS/suzent`, `…\suzent.exe`), when found.
    pub cli: Option<String>,
    /// What the action changes: the link (macOS) or the folder added to Path (Windows).
    pub target: Option<String>,
    /// Why the action cannot run, when it cannot (no bundled CLI, another program's `suzent`
    /// in the link's place).
    pub problem: Option<String>,
}

/// The link the macOS action makes.
pub const MACOS_LINK: &str = "/usr/local/bin/suzent";

/// The CLI's file name on this system.
fn cli_file_name(windows: bool) -> &'static str {
    if windows { "suzent.exe" } else { "suzent" }
}

/// The CLI the bundle ships beside the app executable `app_exe` (Tauri puts external binaries
/// next to the main one: `Contents/MacOS/` in a macOS .app, the install folder on Windows).
pub fn bundled_cli(app_exe: &Path, windows: bool) -> Option<PathBuf> {
    Some(app_exe.parent()?.join(cli_file_name(windows)))
}

/// What is at the link's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// Nothing.
    Missing,
    /// A link to this app's CLI.
    Ours,
    /// A link elsewhere (an older copy of the app, say): replaced by the action.
    OtherLink(PathBuf),
    /// A file that is not a link (another program's `suzent`): left alone.
    NotALink,
}

/// Looks at `link` and says whether it is a symbolic link to `cli`.
pub fn link_state(link: &Path, cli: &Path) -> LinkState {
    match std::fs::symlink_metadata(link) {
        Err(_) => LinkState::Missing,
        Ok(meta) if !meta.file_type().is_symlink() => LinkState::NotALink,
        Ok(_) => match std::fs::read_link(link) {
            Ok(points_to) if same_path(&points_to, cli) => LinkState::Ours,
            Ok(points_to) => LinkState::OtherLink(points_to),
            Err(_) => LinkState::Missing,
        },
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

/// Quotes `text` for `/bin/sh` (single quotes; a `'` inside becomes `'\''`).
fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The AppleScript that makes the link as administrator: `do shell script "…" with
/// administrator privileges` shows the system's own password prompt. The shell command is
/// `mkdir -p` of the link's folder, then `ln -sfn`; the paths are shell-quoted, then the whole
/// command is escaped for an AppleScript string (`\` and `"`).
pub fn admin_link_script(cli: &Path, link: &Path) -> String {
    let folder = link.parent().unwrap_or_else(|| Path::new("/"));
    let command = format!(
        "/bin/mkdir -p {} && /bin/ln -sfn {} {}",
        sh_quote(&folder.to_string_lossy()),
        sh_quote(&cli.to_string_lossy()),
        sh_quote(&link.to_string_lossy()),
    );
    let escaped = command.replace('\\', r"\\").replace('"', "\\\"");
    format!("do shell script \"{escaped}\" with administrator privileges")
}

/// Normalizes one Windows PATH entry for comparison: no surrounding quotes or blanks, no
/// trailing `\` or `/`, case-insensitive.
fn path_entry_key(entry: &str) -> String {
    entry
        .trim()
        .trim_matches('"')
        .trim_end_matches(['\\', '/'])
        .to_lowercase()
}

/// Whether the `;`-separated Windows PATH `path` lists `dir` (in any case, with or without a
/// trailing backslash or quotes).
pub fn path_contains(path: &str, dir: &str) -> bool {
    let key = path_entry_key(dir);
    path.split(';').any(|entry| path_entry_key(entry) == key)
}

/// The user's PATH with `dir` appended, or `None` when it lists `dir` already. Empty entries
/// (`;;`, a trailing `;`) are dropped; every other entry is kept as written.
pub fn path_with_dir(path: &str, dir: &str) -> Option<String> {
    if path_contains(path, dir) {
        return None;
    }
    let mut entries: Vec<&str> = path.split(';').filter(|e| !e.trim().is_empty()).collect();
    entries.push(dir);
    Some(entries.join(";"))
}

/// The status on this system, for the app executable `app_exe`.
pub fn status(app_exe: &Path) -> CliToolStatus {
    let windows = cfg!(windows);
    let supported = cfg!(any(target_os = "macos", windows));
    let cli = bundled_cli(app_exe, windows).filter(|cli| cli.is_file());
    let mut status = CliToolStatus {
        supported,
        installed: false,
        cli: cli.as_ref().map(|c| c.display().to_string()),
        target: None,
        problem: None,
    };
    if !supported {
        return status;
    }
    let Some(cli) = cli else {
        status.problem = Some(format!(
            "this build has no bundled command-line tool beside {}",
            app_exe.display()
        ));
        return status;
    };
    if cfg!(windows) {
        let dir = cli
            .parent()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        status.installed = platform::user_path().is_ok_and(|path| path_contains(&path, &dir));
        status.target = Some(dir);
    } else {
        let link = Path::new(MACOS_LINK);
        match link_state(link, &cli) {
            LinkState::Ours => status.installed = true,
            LinkState::NotALink => {
                status.problem = Some(format!(
                    "{MACOS_LINK} is another program's file, not a link; remove it to install \
                     Suzent's"
                ));
            }
            LinkState::Missing | LinkState::OtherLink(_) => {}
        }
        status.target = Some(MACOS_LINK.into());
    }
    status
}

/// Installs the CLI (see the module docs); errors name what failed.
pub fn install(app_exe: &Path) -> Result<CliToolStatus, AppError> {
    let before = status(app_exe);
    if !before.supported {
        return Err(AppError::new(
            AppErrorKind::InvalidInput,
            "the installed packages put `suzent` on PATH on this system already",
        ));
    }
    if let Some(problem) = before.problem {
        return Err(AppError::new(AppErrorKind::InvalidInput, problem));
    }
    if before.installed {
        return Ok(before);
    }
    let cli = before
        .cli
        .map(PathBuf::from)
        .ok_or_else(|| AppError::new(AppErrorKind::NotFound, "no bundled command-line tool"))?;
    platform::install(&cli).map_err(|e| AppError::new(AppErrorKind::Io, e))?;
    let after = status(app_exe);
    if !after.installed {
        return Err(AppError::new(
            AppErrorKind::Io,
            format!(
                "the command-line tool is still not on PATH after installing it at {}",
                after.target.unwrap_or_default()
            ),
        ));
    }
    Ok(after)
}

#[cfg(target_os = "macos")]
mod platform {
    use super::{MACOS_LINK, admin_link_script};
    use std::path::Path;

    pub fn user_path() -> Result<String, String> {
        Err("not used on macOS".into())
    }

    /// Links the CLI; asks for an administrator through the system prompt when the folder is
    /// not writable (or missing: /usr/local/bin is not there on a fresh Mac).
    pub fn install(cli: &Path) -> Result<(), String> {
        let link = Path::new(MACOS_LINK);
        let direct = std::fs::remove_file(link)
            .or_else(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Ok(())
                } else {
                    Err(e)
                }
            })
            .and_then(|()| std::os::unix::fs::symlink(cli, link));
        match direct {
            Ok(()) => Ok(()),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::NotFound
                ) =>
            {
                let output = std::process::Command::new("/usr/bin/osascript")
                    .arg("-e")
                    .arg(admin_link_script(cli, link))
                    .output()
                    .map_err(|e| format!("cannot run osascript: {e}"))?;
                if output.status.success() {
                    Ok(())
                } else {
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    if stderr.contains("-128") {
                        Err("the administrator prompt was cancelled".into())
                    } else {
                        Err(format!("cannot link {MACOS_LINK}: {}", stderr.trim()))
                    }
                }
            }
            Err(e) => Err(format!("cannot link {MACOS_LINK}: {e}")),
        }
    }
}

#[cfg(windows)]
mod platform {
    use super::path_with_dir;
    use std::path::Path;
    use winreg::RegKey;
    use winreg::RegValue;
    use winreg::enums::{HKEY_CURRENT_USER, KEY_READ, KEY_WRITE, RegType};

    fn environment() -> Result<RegKey, String> {
        RegKey::predef(HKEY_CURRENT_USER)
            .open_subkey_with_flags("Environment", KEY_READ | KEY_WRITE)
            .map_err(|e| format!("cannot open HKEY_CURRENT_USER\\Environment: {e}"))
    }

    /// The user's `Path` as stored (unexpanded), with its registry type; empty when unset.
    fn raw_path(key: &RegKey) -> Result<(String, RegType), String> {
        match key.get_raw_value("Path") {
            Ok(value) => {
                let units: Vec<u16> = value
                    .bytes
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect();
                let text = String::from_utf16(&units)
                    .map_err(|e| format!("the user's Path is not UTF-16: {e}"))?;
                Ok((text.trim_end_matches('\0').to_string(), value.vtype))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok((String::new(), RegType::REG_EXPAND_SZ))
            }
            Err(e) => Err(format!("cannot read the user's Path: {e}")),
        }
    }

    pub fn user_path() -> Result<String, String> {
        raw_path(&environment()?).map(|(path, _)| path)
    }

    /// Appends the CLI's folder to the user's Path and tells running programs.
    pub fn install(cli: &Path) -> Result<(), String> {
        let dir = cli
            .parent()
            .ok_or_else(|| format!("{} has no folder", cli.display()))?
            .display()
            .to_string();
        let key = environment()?;
        let (path, vtype) = raw_path(&key)?;
        let Some(new_path) = path_with_dir(&path, &dir) else {
            return Ok(());
        };
        let vtype = match vtype {
            RegType::REG_SZ => RegType::REG_SZ,
            _ => RegType::REG_EXPAND_SZ,
        };
        let bytes: Vec<u8> = new_path
            .encode_utf16()
            .chain(std::iter::once(0))
            .flat_map(u16::to_le_bytes)
            .collect();
        key.set_raw_value(
            "Path",
            &RegValue {
                bytes: bytes.into(),
                vtype,
            },
        )
        .map_err(|e| format!("cannot write the user's Path: {e}"))?;
        broadcast_environment_change();
        Ok(())
    }

    /// `WM_SETTINGCHANGE` with "Environment" to every top-level window, so Explorer (and the
    /// terminals it starts next) read the new Path; a window that hangs is skipped after 5 s.
    #[allow(unsafe_code)]
    fn broadcast_environment_change() {
        use windows_sys::Win32::UI::WindowsAndMessaging::{
            HWND_BROADCAST, SMTO_ABORTIFHUNG, SendMessageTimeoutW, WM_SETTINGCHANGE,
        };
        let what: Vec<u16> = "Environment"
            .encode_utf16()
            .chain(std::iter::once(0))
            .collect();
        let mut result: usize = 0;
        // SAFETY: `what` is a NUL-terminated UTF-16 string that outlives the call (the lParam
        // of WM_SETTINGCHANGE is read during the call only), and `result` is a valid out pointer.
        unsafe {
            SendMessageTimeoutW(
                HWND_BROADCAST,
                WM_SETTINGCHANGE,
                0,
                what.as_ptr() as isize,
                SMTO_ABORTIFHUNG,
                5000,
                &mut result,
            );
        }
    }
}

#[cfg(not(any(target_os = "macos", windows)))]
mod platform {
    use std::path::Path;

    pub fn user_path() -> Result<String, String> {
        Err("not used on this system".into())
    }

    pub fn install(_cli: &Path) -> Result<(), String> {
        Err("the installed packages put `suzent` on PATH on this system already".into())
    }
}

/// Where the command-line tool stands (Settings → Desktop shows the action when `supported`).
#[tauri::command]
#[specta::specta]
pub fn cli_tool_status() -> Result<CliToolStatus, AppError> {
    let exe = std::env::current_exe()
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("cannot find the app: {e}")))?;
    Ok(status(&exe))
}

/// Installs the command-line tool (macOS: the link, asking for an administrator when needed;
/// Windows: the user's Path). An error names what failed.
#[tauri::command]
#[specta::specta]
pub async fn install_cli_tool() -> Result<CliToolStatus, AppError> {
    let exe = std::env::current_exe()
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("cannot find the app: {e}")))?;
    tauri::async_runtime::spawn_blocking(move || install(&exe))
        .await
        .map_err(|e| AppError::new(AppErrorKind::Io, format!("the install stopped: {e}")))?
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_cli_is_looked_for_beside_the_app() {
        assert_eq!(
            bundled_cli(
                Path::new("/Applications/Suzent.app/Contents/MacOS/suzent-desktop"),
                false
            ),
            Some(PathBuf::from(
                "/Applications/Suzent.app/Contents/MacOS/suzent"
            ))
        );
        assert_eq!(
            bundled_cli(
                Path::new("C:/Users/a/AppData/Local/Suzent/suzent-desktop.exe"),
                true
            ),
            Some(PathBuf::from("C:/Users/a/AppData/Local/Suzent/suzent.exe"))
        );
    }

    #[test]
    fn a_link_is_ours_only_when_it_points_at_this_apps_cli() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let cli = dir.path().join("Suzent.app/Contents/MacOS/suzent");
        std::fs::create_dir_all(cli.parent().unwrap())?;
        std::fs::write(&cli, b"#!/bin/sh\n")?;
        let other = dir.path().join("Old.app/suzent");
        let link = dir.path().join("bin/suzent");
        std::fs::create_dir_all(link.parent().unwrap())?;

        assert_eq!(link_state(&link, &cli), LinkState::Missing);
        std::os::unix::fs::symlink(&cli, &link)?;
        assert_eq!(link_state(&link, &cli), LinkState::Ours);
        std::fs::remove_file(&link)?;
        std::os::unix::fs::symlink(&other, &link)?;
        assert_eq!(link_state(&link, &cli), LinkState::OtherLink(other));
        std::fs::remove_file(&link)?;
        std::fs::write(&link, b"another program")?;
        assert_eq!(link_state(&link, &cli), LinkState::NotALink);
        Ok(())
    }

    #[test]
    fn the_admin_script_quotes_paths_for_the_shell_and_applescript() {
        let script = admin_link_script(
            Path::new("/Applications/Bob's \"Suzent\".app/Contents/MacOS/suzent"),
            Path::new(MACOS_LINK),
        );
        assert_eq!(
            script,
            r#"do shell script "/bin/mkdir -p '/usr/local/bin' && /bin/ln -sfn '/Applications/Bob'\\''s \"Suzent\".app/Contents/MacOS/suzent' '/usr/local/bin/suzent'" with administrator privileges"#
        );
    }

    #[test]
    fn the_install_folder_is_appended_to_the_users_path() {
        assert_eq!(
            path_with_dir(
                r"%USERPROFILE%\bin;C:\Tools;",
                r"C:\Users\a\AppData\Local\Suzent"
            ),
            Some(r"%USERPROFILE%\bin;C:\Tools;C:\Users\a\AppData\Local\Suzent".to_string())
        );
        assert_eq!(
            path_with_dir("", r"C:\Suzent"),
            Some(r"C:\Suzent".to_string())
        );
    }

    #[test]
    fn a_path_that_lists_the_folder_in_another_spelling_is_left_alone() {
        for path in [
            r"C:\Tools;c:\users\a\appdata\local\suzent",
            r"C:\Users\A\AppData\Local\Suzent\;C:\Tools",
            r#""C:\Users\a\AppData\Local\Suzent";C:\Tools"#,
        ] {
            assert!(
                path_contains(path, r"C:\Users\a\AppData\Local\Suzent"),
                "{path}"
            );
            assert_eq!(
                path_with_dir(path, r"C:\Users\a\AppData\Local\Suzent"),
                None,
                "{path}"
            );
        }
        assert!(!path_contains(
            r"C:\Users\a\AppData\Local\Suzent2",
            r"C:\Users\a\AppData\Local\Suzent"
        ));
    }

    #[test]
    fn linux_does_not_offer_the_action() {
        let status = status(Path::new("/usr/bin/suzent-desktop"));
        assert_eq!(status.supported, cfg!(any(target_os = "macos", windows)));
        if !status.supported {
            assert_eq!(
                install(Path::new("/usr/bin/suzent-desktop"))
                    .map(|_| ())
                    .unwrap_err()
                    .message,
                "the installed packages put `suzent` on PATH on this system already"
            );
        }
    }
}
