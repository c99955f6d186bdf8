//! Errors of the devices crate.

/// What went wrong with a device operation. Messages are lower-case and name the bad value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// The device key could not be created, stored or read.
    #[error("device key: {message}")]
    Key {
        /// What failed.
        message: String,
    },
    /// A file could not be read or written.
    #[error("'{path}': {message}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// A pairing code or link does not parse.
    #[error("invalid pairing code: {0}")]
    BadCode(String),
    /// The other device refused the pairing, or it was not confirmed.
    #[error("pairing failed: {0}")]
    Pairing(String),
    /// The other device cannot be reached or the connection broke.
    #[error("device {peer} is unreachable: {message}")]
    Unreachable {
        /// The device's short id.
        peer: String,
        /// Why.
        message: String,
    },
    /// The other device revoked the pairing with this device.
    #[error("device {peer} revoked the pairing with this device")]
    Revoked {
        /// The device's short id.
        peer: String,
    },
    /// The other device does not know this device (never paired, or it forgot the pairing).
    #[error("device {peer} does not know this device (not paired)")]
    NotPaired {
        /// The device's short id.
        peer: String,
    },
    /// The other device sent something that does not follow the protocol.
    #[error("protocol error with device {peer}: {message}")]
    Protocol {
        /// The device's short id.
        peer: String,
        /// What was wrong.
        message: String,
    },
    /// The endpoint could not be started.
    #[error("cannot start the device endpoint: {0}")]
    Bind(String),
}
