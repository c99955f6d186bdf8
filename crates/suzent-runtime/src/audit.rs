//! The permission audit log lives in `suzent-permissions` (hash chain, rotation, `verify`); the
//! runtime re-exports its writer handle.

pub use suzent_permissions::audit::AuditLog;
