//! Device ids: an install's ed25519 public key, its text forms and its fingerprint.

use crate::error::DeviceError;
use sha2::{Digest, Sha256};

/// Characters of [`DeviceId::short`].
pub const SHORT_ID_CHARS: usize = 12;

/// A device: the ed25519 public key it proves on every connection. Nothing else (name, address,
/// advert) identifies a device.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceId(iroh::PublicKey);

impl DeviceId {
    /// The id of a public key.
    pub fn from_public_key(key: iroh::PublicKey) -> DeviceId {
        DeviceId(key)
    }

    /// The public key.
    pub fn public_key(&self) -> iroh::PublicKey {
        self.0
    }

    /// The 32 key bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        self.0.as_bytes()
    }

    /// The id from 32 key bytes.
    ///
    /// Errors: [`DeviceError::BadCode`] when the bytes are not an ed25519 public key.
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<DeviceId, DeviceError> {
        iroh::PublicKey::from_bytes(bytes)
            .map(DeviceId)
            .map_err(|e| DeviceError::BadCode(format!("not a device key: {e}")))
    }

    /// The full text form: the key in lower-case base32 without padding (52 characters), as
    /// iroh's LAN discovery names endpoints.
    pub fn encode(&self) -> String {
        data_encoding::BASE32_NOPAD
            .encode(self.as_bytes())
            .to_ascii_lowercase()
    }

    /// Parses [`DeviceId::encode`]'s form (any case).
    ///
    /// Errors: [`DeviceError::BadCode`] naming the text.
    pub fn parse(text: &str) -> Result<DeviceId, DeviceError> {
        let bad = |why: &str| DeviceError::BadCode(format!("device id '{text}': {why}"));
        let bytes = data_encoding::BASE32_NOPAD
            .decode(text.trim().to_ascii_uppercase().as_bytes())
            .map_err(|_| bad("not base32"))?;
        let bytes: [u8; 32] = bytes.try_into().map_err(|_| bad("not 32 bytes"))?;
        DeviceId::from_bytes(&bytes)
    }

    /// The short id used in `peer:<short>` addresses: the first [`SHORT_ID_CHARS`] characters of
    /// [`DeviceId::encode`] (60 bits). Resolved against the pinned full key of a pairing, never
    /// trusted alone.
    pub fn short(&self) -> String {
        self.encode()[..SHORT_ID_CHARS].to_string()
    }

    /// The fingerprint people compare: SHA-256 of the key, the first 8 bytes as upper-case hex in
    /// four groups (`1A2B 3C4D 5E6F 7081`).
    pub fn fingerprint(&self) -> String {
        let digest = Sha256::digest(self.as_bytes());
        digest[..8]
            .chunks(2)
            .map(|pair| format!("{:02X}{:02X}", pair[0], pair[1]))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl std::fmt::Display for DeviceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.encode())
    }
}

impl std::fmt::Debug for DeviceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceId({})", self.short())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_text_form_round_trips_and_the_short_form_is_its_prefix() {
        let id = DeviceId::from_public_key(iroh::SecretKey::generate().public());
        let text = id.encode();
        assert_eq!(text.len(), 52);
        assert_eq!(DeviceId::parse(&text.to_ascii_uppercase()).unwrap(), id);
        assert!(text.starts_with(&id.short()));
        assert_eq!(id.fingerprint().len(), 19);
        assert!(DeviceId::parse("not-a-key").is_err());
    }
}
