//! The desktop app's own preferences (`desktop.toml` in the config folder): where updates come
//! from and whether the app checks for them, whether closing the window keeps Suzent running in
//! the tray, and whether the first-time tray notice was shown. Read and written whole; a save
//! replaces the file atomically.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The project's release feed: the signed update manifest (`latest.json`) of the newest release.
pub const DEFAULT_UPDATE_ENDPOINT: &str = "https://releases.suzent.dev/desktop/latest.json";
/// Name of the file in the config folder.
pub const DESKTOP_PREFS_FILE: &str = "desktop.toml";

/// The desktop preferences.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct DesktopPrefs {
    /// URL of the update manifest (https; http only on loopback, for a local feed).
    pub update_endpoint: String,
    /// Check at start and once a day.
    pub check_for_updates: bool,
    /// Closing the window keeps Suzent running in the tray while schedules, background
    /// commands or paired devices need it.
    pub keep_running_in_tray: bool,
    /// The first-time notice about running in the tray was shown.
    pub tray_notice_shown: bool,
}

impl Default for DesktopPrefs {
    fn default() -> Self {
        DesktopPrefs {
            update_endpoint: DEFAULT_UPDATE_ENDPOINT.to_string(),
            check_for_updates: true,
            keep_running_in_tray: true,
            tray_notice_shown: false,
        }
    }
}

impl DesktopPrefs {
    /// Checks the values; the message names the bad one.
    pub fn validate(&self) -> Result<(), String> {
        validate_endpoint(&self.update_endpoint)
    }
}

/// An update endpoint must be https, or http on a loopback host (a local feed, tests).
pub fn validate_endpoint(endpoint: &str) -> Result<(), String> {
    let url = url::Url::parse(endpoint)
        .map_err(|e| format!("update endpoint '{endpoint}' is not a URL: {e}"))?;
    let loopback = matches!(
        url.host_str(),
        Some("127.0.0.1" | "localhost" | "[::1]" | "::1")
    );
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(format!(
            "update endpoint '{endpoint}' must use https (http only on 127.0.0.1 or localhost)"
        )),
    }
}

/// The file holding the preferences.
#[derive(Debug, Clone)]
pub struct DesktopPrefsFile {
    path: PathBuf,
}

impl DesktopPrefsFile {
    /// The file `desktop.toml` in `config_dir`.
    pub fn in_config_dir(config_dir: &Path) -> DesktopPrefsFile {
        DesktopPrefsFile {
            path: config_dir.join(DESKTOP_PREFS_FILE),
        }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The saved preferences, or the defaults when there is no file. A file that does not
    /// parse or holds a bad value is an error naming the file.
    pub fn load(&self) -> Result<DesktopPrefs, String> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(DesktopPrefs::default());
            }
            Err(e) => return Err(format!("cannot read {}: {e}", self.path.display())),
        };
        let prefs: DesktopPrefs =
            toml::from_str(&text).map_err(|e| format!("{}: {e}", self.path.display()))?;
        prefs
            .validate()
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        Ok(prefs)
    }

    /// Validates and saves `prefs` (write to a temporary file, then rename over the old one).
    pub fn save(&self, prefs: &DesktopPrefs) -> Result<(), String> {
        prefs.validate()?;
        let dir = self
            .path
            .parent()
            .ok_or_else(|| format!("{} has no folder", self.path.display()))?;
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let text =
            toml::to_string(prefs).map_err(|e| format!("cannot write the preferences: {e}"))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)
            .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
        std::io::Write::write_all(&mut tmp, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        tmp.persist(&self.path)
            .map_err(|e| format!("cannot save {}: {e}", self.path.display()))?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn without_a_file_the_defaults_apply_and_a_save_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let file = DesktopPrefsFile::in_config_dir(dir.path());
        assert_eq!(file.load().unwrap(), DesktopPrefs::default());
        let prefs = DesktopPrefs {
            update_endpoint: "http://127.0.0.1:8123/latest.json".into(),
            check_for_updates: false,
            keep_running_in_tray: false,
            tray_notice_shown: true,
        };
        file.save(&prefs).unwrap();
        assert_eq!(file.load().unwrap(), prefs);
    }

    #[test]
    fn a_plain_http_endpoint_off_loopback_is_refused() {
        assert_eq!(
            validate_endpoint("http://updates.evil.test/latest.json"),
            Err("update endpoint 'http://updates.evil.test/latest.json' must use https (http only on 127.0.0.1 or localhost)".into())
        );
        assert_eq!(
            validate_endpoint("https://releases.suzent.dev/x.json"),
            Ok(())
        );
        assert_eq!(validate_endpoint("http://localhost:9/x.json"), Ok(()));
    }

    #[test]
    fn a_file_with_an_unknown_key_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = DesktopPrefsFile::in_config_dir(dir.path());
        std::fs::write(
            file.path(),
            "updateEndpoint = \"https://a.test/x\"\nbogus = 1\n",
        )
        .unwrap();
        let err = file.load().unwrap_err();
        assert!(err.starts_with(&file.path().display().to_string()), "{err}");
        assert!(err.contains("bogus"), "{err}");
    }
}
