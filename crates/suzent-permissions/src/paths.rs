//! Path policy: which paths a chat may touch. (API fixed by the runtime; bodies to be implemented.)

use std::path::PathBuf;

/// A path the policy refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PathError {
    /// The resolved path is outside every allowed root.
    #[error("path '{requested}' resolves to '{resolved}', outside the workspace")]
    OutsideRoots {
        /// As given.
        requested: String,
        /// After resolving `..` and symlinks.
        resolved: PathBuf,
    },
    /// The path could not be resolved (too many symlinks, invalid).
    #[error("cannot resolve path '{requested}': {message}")]
    Unresolvable {
        /// As given.
        requested: String,
        /// Why.
        message: String,
    },
}

/// The roots a chat may touch: the workspace root plus extra roots (`/persistence`, `/shared`
/// mounts), each canonicalized once.
#[derive(Debug, Clone)]
pub struct PathPolicy {
    workspace: PathBuf,
    roots: Vec<PathBuf>,
}
