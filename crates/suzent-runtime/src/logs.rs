//! Where Suzent's log files go: one daily-rotated file, `suzent.log.YYYY-MM-DD`, in `logs/` under
//! the data directory. The CLI and the desktop app write the same files.

use crate::Paths;
use std::path::PathBuf;

/// The log files' name; the rotation appends `.YYYY-MM-DD`.
pub const LOG_FILE_NAME: &str = "suzent.log";

/// The folder of the log files for `paths`.
pub fn log_dir(paths: &Paths) -> PathBuf {
    paths.data_dir.join("logs")
}
