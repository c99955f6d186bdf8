//! One app per data folder (R2-D05). Two locks, taken before the runtime opens anything:
//!
//! 1. The single-instance plugin, registered first, under a D-Bus name derived from the data
//!    folder ([`instance_id`]): a second launch on the same folder forwards its argv (a
//!    `suzent://` link) to the running app and exits inside the plugin's setup, before Tauri
//!    runs the app's setup (which opens SQLite, binds the bridge's port and starts the
//!    scheduler). On Windows and macOS the plugin locks per user instead (a named mutex, a
//!    socket), so there a second data folder waits for the first app to quit.
//! 2. An exclusive OS file lock on `desktop.lock` in the data folder ([`DataDirLock`]), for a
//!    launch the plugin cannot route (no session bus, another bus): it fails closed, with a
//!    message naming the folder. The lock dies with its process; the file is never deleted, so
//!    no process removes another's lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use tauri::plugin::{Builder as PluginBuilder, TauriPlugin};
use tauri::{Manager, Runtime};

/// Name of the lock file in the data folder.
pub const LOCK_FILE: &str = "desktop.lock";

/// The app's identifier followed by a hash of the data folder (`dev.suzent.desktop.d0123…`): the
/// single-instance plugin's D-Bus id, one per data folder. The folder is canonicalized when it
/// exists, so two spellings of one folder share an id.
pub fn instance_id(identifier: &str, data_dir: &Path) -> String {
    let dir = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    // FNV-1a, 64 bits: stable across builds and Rust versions, unlike the std hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in dir.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{identifier}.d{hash:016x}")
}

/// The held lock on a data folder; released when the process ends.
pub struct DataDirLock {
    _file: File,
    /// The lock file.
    pub path: PathBuf,
}

impl DataDirLock {
    /// Takes the lock on `data_dir` (creating the folder and the file when missing), or says
    /// which process holds it.
    pub fn acquire(data_dir: &Path) -> Result<DataDirLock, String> {
        std::fs::create_dir_all(data_dir)
            .map_err(|e| format!("cannot create the data folder {}: {e}", data_dir.display()))?;
        let path = data_dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                return Err(format!(
                    "another Suzent app (pid {}) uses the data folder {}; quit it first or set \
                     SUZENT_HOME to another folder",
                    holder.trim(),
                    data_dir.display()
                ));
            }
            Err(TryLockError::Error(e)) => {
                return Err(format!("cannot lock {}: {e}", path.display()));
            }
        }
        // Ours now: record our pid for the message above (the file itself stays).
        let _ = file.set_len(0);
        let _ = write!(file, "{}", std::process::id());
        let _ = file.flush();
        Ok(DataDirLock { _file: file, path })
    }
}

/// A plugin, registered right after the single-instance plugin, that takes the [`DataDirLock`]
/// during Tauri's plugin setup (before the app's setup). Failing, it fails the build of the app,
/// so `run` returns the message and the process exits without opening anything.
pub fn data_dir_lock<R: Runtime>(data_dir: PathBuf) -> TauriPlugin<R> {
    PluginBuilder::new("suzent-data-dir-lock")
        .setup(move |app, _api| {
            let lock = DataDirLock::acquire(&data_dir)?;
            app.manage(lock);
            Ok(())
        })
        .build()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn each_data_folder_has_its_own_instance_id() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let id_a = instance_id("dev.suzent.desktop", a.path());
        assert_eq!(id_a, instance_id("dev.suzent.desktop", &a.path().join(".")));
        assert!(id_a != instance_id("dev.suzent.desktop", b.path()));
        assert!(id_a.starts_with("dev.suzent.desktop.d"));
    }

    #[test]
    fn a_second_lock_on_one_data_folder_is_refused_and_another_folder_is_not() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let held = DataDirLock::acquire(a.path()).unwrap();
        let refused = DataDirLock::acquire(a.path()).err().unwrap();
        assert_eq!(
            refused,
            format!(
                "another Suzent app (pid {}) uses the data folder {}; quit it first or set \
                 SUZENT_HOME to another folder",
                std::process::id(),
                a.path().display()
            )
        );
        let other = DataDirLock::acquire(b.path()).unwrap();
        drop(held);
        let again = DataDirLock::acquire(a.path()).unwrap();
        assert!(again.path.exists() && other.path.exists());
    }
}
