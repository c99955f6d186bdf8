//! The browser extension shipped inside Suzent: a ZIP built from `extensions/browser` at build
//! time (see `build.rs`), handed to the user as a file ("Download the extension (.zip)") or
//! unpacked into the data directory for Chrome's "Load unpacked" ("Show the folder").

use std::io::Read;
use std::path::{Path, PathBuf};

/// The packed extension, empty when this build was made without building the extension.
const EXTENSION_ZIP: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/suzent-browser-extension.zip"));

/// The id Chrome and Edge give the shipped extension: its manifest carries a fixed public key
/// (`key`), so the id is the same wherever it is loaded from.
pub const SHIPPED_EXTENSION_ID: &str = "mkppgeflpnljcodnkejndlmnggmhgmme";

/// Why the extension package cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// This build of Suzent was made before the extension was built.
    #[error(
        "this build of Suzent does not include the browser extension: build it with `npm --prefix extensions/browser ci && npm --prefix extensions/browser run build`, then rebuild Suzent"
    )]
    NotBundled,
    /// The embedded ZIP is damaged.
    #[error("the bundled browser extension is damaged: {0}")]
    Damaged(String),
    /// Writing it failed.
    #[error("cannot write {path}: {message}")]
    Io {
        /// The file or folder.
        path: String,
        /// The OS error.
        message: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PackageError + '_ {
    move |e| PackageError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The ZIP's bytes.
///
/// Errors: [`PackageError::NotBundled`].
pub fn extension_zip() -> Result<&'static [u8], PackageError> {
    if EXTENSION_ZIP.is_empty() {
        Err(PackageError::NotBundled)
    } else {
        Ok(EXTENSION_ZIP)
    }
}

fn archive() -> Result<zip::ZipArchive<std::io::Cursor<&'static [u8]>>, PackageError> {
    zip::ZipArchive::new(std::io::Cursor::new(extension_zip()?))
        .map_err(|e| PackageError::Damaged(e.to_string()))
}

/// The shipped extension's version (its manifest's `version`).
///
/// Errors: [`PackageError::NotBundled`], [`PackageError::Damaged`].
pub fn extension_version() -> Result<String, PackageError> {
    let mut zip = archive()?;
    let mut text = String::new();
    zip.by_name("manifest.json")
        .map_err(|e| PackageError::Damaged(format!("manifest.json: {e}")))?
        .read_to_string(&mut text)
        .map_err(|e| PackageError::Damaged(format!("manifest.json: {e}")))?;
    let manifest: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| PackageError::Damaged(format!("manifest.json: {e}")))?;
    manifest["version"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| PackageError::Damaged("manifest.json has no version".into()))
}

/// Writes the ZIP to `path` (atomically: a temporary file renamed over it).
///
/// Errors: [`PackageError`].
pub fn save_zip(path: &Path) -> Result<(), PackageError> {
    let bytes = extension_zip()?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.part",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// The unpacked extension under `data_dir` (`browser/extension-<version>`), unpacked first if it
/// is not there yet (into a temporary folder renamed into place, so a half-written folder is
/// never shown). Chrome's "Load unpacked" takes this folder.
///
/// Errors: [`PackageError`].
pub fn unpacked_extension(data_dir: &Path) -> Result<PathBuf, PackageError> {
    let version = extension_version()?;
    let parent = data_dir.join("browser");
    let target = parent.join(format!("extension-{version}"));
    if target.join("manifest.json").is_file() {
        return Ok(target);
    }
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let tmp = parent.join(format!(".extension-{version}.part"));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    let mut zip = archive()?;
    for i in 0..zip.len() {
        let mut entry = zip
            .by_index(i)
            .map_err(|e| PackageError::Damaged(e.to_string()))?;
        let Some(rel) = entry.enclosed_name() else {
            return Err(PackageError::Damaged(format!(
                "unsafe path '{}'",
                String::from_utf8_lossy(entry.name_raw())
            )));
        };
        let out = tmp.join(rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&out).map_err(io(&out))?;
            continue;
        }
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| PackageError::Damaged(e.to_string()))?;
        std::fs::write(&out, bytes).map_err(io(&out))?;
    }
    match std::fs::rename(&tmp, &target) {
        Ok(()) => Ok(target),
        // Another process unpacked it meanwhile.
        Err(_) if target.join("manifest.json").is_file() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(target)
        }
        Err(e) => Err(io(&target)(e)),
    }
}
