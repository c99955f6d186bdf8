//! The device identity: an ed25519 key pair created once per install. The secret half lives in
//! the OS keychain (`keyring`); where there is none it is a 0600 file in a 0700 folder, and
//! [`DeviceIdentity::storage`] says so, so the app can tell the user.
//!
//! `identity.json` beside it holds only public facts: the public key and where the secret is.
//! A secret that cannot be read is an error, never a reason to create a new identity silently
//! (that would break every pairing).

use crate::error::DeviceError;
use crate::id::DeviceId;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The keychain service of device keys.
pub const KEYCHAIN_SERVICE: &str = "suzent-device";

/// Where the secret half of the device key is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum KeyStorage {
    /// In the OS keychain under [`KEYCHAIN_SERVICE`] and this account.
    Keychain {
        /// The keychain account (`device-key:<device id>`).
        account: String,
    },
    /// In this file (mode 0600, in a 0700 folder), because no OS keychain was usable.
    File {
        /// The key file.
        path: PathBuf,
    },
}

impl KeyStorage {
    /// One sentence for people: where the key is and what that means.
    pub fn describe(&self) -> String {
        match self {
            KeyStorage::Keychain { .. } => "the device key is in the OS keychain".to_string(),
            KeyStorage::File { path } => format!(
                "no OS keychain is available: the device key is in '{}' (readable only by you)",
                path.display()
            ),
        }
    }
}

/// Where to put a new key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyStorePreference {
    /// The OS keychain, or the file when the keychain does not work.
    #[default]
    Auto,
    /// The file only (portable installs, tests).
    File,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct IdentityFile {
    public_key: String,
    storage: StorageKind,
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum StorageKind {
    Keychain,
    File,
}

/// This install's device key pair.
#[derive(Clone)]
pub struct DeviceIdentity {
    secret: iroh::SecretKey,
    storage: KeyStorage,
}

impl std::fmt::Debug for DeviceIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceIdentity")
            .field("device", &self.device_id())
            .field("storage", &self.storage)
            .finish_non_exhaustive()
    }
}

fn io(path: &Path, e: impl std::fmt::Display) -> DeviceError {
    DeviceError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn key_err(message: impl Into<String>) -> DeviceError {
    DeviceError::Key {
        message: message.into(),
    }
}

impl DeviceIdentity {
    /// Loads the identity kept under `dir` (`identity.json`, `secret/device-key`), or creates
    /// one there the first time.
    ///
    /// Errors: [`DeviceError::Key`] when the recorded secret cannot be read or does not match the
    /// recorded public key; [`DeviceError::Io`] for file errors.
    pub fn load_or_create(
        dir: &Path,
        preference: KeyStorePreference,
    ) -> Result<DeviceIdentity, DeviceError> {
        let record = dir.join("identity.json");
        match std::fs::read_to_string(&record) {
            Ok(text) => Self::load(dir, &record, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::create(dir, preference),
            Err(e) => Err(io(&record, e)),
        }
    }

    /// The device id (the public key).
    pub fn device_id(&self) -> DeviceId {
        DeviceId::from_public_key(self.secret.public())
    }

    /// Where the secret half is kept.
    pub fn storage(&self) -> &KeyStorage {
        &self.storage
    }

    /// The secret key, for the transport only.
    pub(crate) fn secret_key(&self) -> iroh::SecretKey {
        self.secret.clone()
    }

    fn load(dir: &Path, record: &Path, text: &str) -> Result<DeviceIdentity, DeviceError> {
        let file: IdentityFile = serde_json::from_str(text)
            .map_err(|e| key_err(format!("'{}' is not valid: {e}", record.display())))?;
        let public = DeviceId::parse(&file.public_key)?;
        let (secret, storage) = match file.storage {
            StorageKind::Keychain => {
                let account = account_of(&public);
                let encoded = keychain_entry(&account)?.get_password().map_err(|e| {
                    key_err(format!(
                        "the device key is recorded in the OS keychain (service '{KEYCHAIN_SERVICE}', account '{account}') but cannot be read: {e}"
                    ))
                })?;
                (decode_secret(&encoded)?, KeyStorage::Keychain { account })
            }
            StorageKind::File => {
                let path = key_file(dir);
                let encoded = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
                tighten(&path)?;
                (decode_secret(&encoded)?, KeyStorage::File { path })
            }
        };
        if DeviceId::from_public_key(secret.public()) != public {
            return Err(key_err(format!(
                "the stored secret key does not belong to device {} recorded in '{}'",
                public.short(),
                record.display()
            )));
        }
        Ok(DeviceIdentity { secret, storage })
    }

    fn create(dir: &Path, preference: KeyStorePreference) -> Result<DeviceIdentity, DeviceError> {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let secret = iroh::SecretKey::generate();
        let id = DeviceId::from_public_key(secret.public());
        let encoded = data_encoding::BASE32_NOPAD.encode(&secret.to_bytes());
        let storage = match preference {
            KeyStorePreference::Auto => match store_in_keychain(&id, &encoded) {
                Ok(account) => KeyStorage::Keychain { account },
                Err(e) => {
                    tracing::info!(
                        "no usable OS keychain for the device key ({e}); using a private file"
                    );
                    store_in_file(dir, &encoded)?
                }
            },
            KeyStorePreference::File => store_in_file(dir, &encoded)?,
        };
        let record = IdentityFile {
            public_key: id.encode(),
            storage: match storage {
                KeyStorage::Keychain { .. } => StorageKind::Keychain,
                KeyStorage::File { .. } => StorageKind::File,
            },
        };
        let text = serde_json::to_string_pretty(&record)
            .map_err(|e| key_err(format!("cannot encode the identity record: {e}")))?;
        write_atomically(&dir.join("identity.json"), text.as_bytes(), false)?;
        Ok(DeviceIdentity { secret, storage })
    }
}

fn account_of(id: &DeviceId) -> String {
    format!("device-key:{}", id.encode())
}

fn keychain_entry(account: &str) -> Result<keyring::Entry, DeviceError> {
    keyring::Entry::new(KEYCHAIN_SERVICE, account)
        .map_err(|e| key_err(format!("the OS keychain is not usable: {e}")))
}

/// Stores the secret in the keychain and reads it back through a fresh entry (a backend that
/// accepts but does not keep it counts as no keychain).
fn store_in_keychain(id: &DeviceId, encoded: &str) -> Result<String, DeviceError> {
    let account = account_of(id);
    keychain_entry(&account)?
        .set_password(encoded)
        .map_err(|e| key_err(e.to_string()))?;
    match keychain_entry(&account)?.get_password() {
        Ok(back) if back == encoded => Ok(account),
        Ok(_) => Err(key_err("the keychain returned another value")),
        Err(e) => Err(key_err(format!("the keychain does not keep entries: {e}"))),
    }
}

fn key_file(dir: &Path) -> PathBuf {
    dir.join("secret").join("device-key")
}

fn store_in_file(dir: &Path, encoded: &str) -> Result<KeyStorage, DeviceError> {
    let folder = dir.join("secret");
    std::fs::create_dir_all(&folder).map_err(|e| io(&folder, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| io(&folder, e))?;
    }
    let path = key_file(dir);
    write_atomically(&path, encoded.as_bytes(), true)?;
    Ok(KeyStorage::File { path })
}

/// Keeps the key file and its folder private (0600 / 0700) if something loosened them.
fn tighten(path: &Path) -> Result<(), DeviceError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Some(folder) = path.parent() {
            std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| io(folder, e))?;
        }
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| io(path, e))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Writes `bytes` to a temporary file beside `path` (mode 0600 when `private`) and renames it
/// into place, so a crash never leaves a half-written file.
pub(crate) fn write_atomically(
    path: &Path,
    bytes: &[u8],
    private: bool,
) -> Result<(), DeviceError> {
    use std::io::Write;
    let folder = path.parent().ok_or_else(|| io(path, "no parent folder"))?;
    std::fs::create_dir_all(folder).map_err(|e| io(folder, e))?;
    let tmp = folder.join(format!(
        ".{}.tmp{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        std::process::id()
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if private { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options.open(&tmp).map_err(|e| io(&tmp, e))?;
    file.write_all(bytes).map_err(|e| io(&tmp, e))?;
    file.sync_all().map_err(|e| io(&tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

fn decode_secret(encoded: &str) -> Result<iroh::SecretKey, DeviceError> {
    let bytes = data_encoding::BASE32_NOPAD
        .decode(encoded.trim().as_bytes())
        .map_err(|_| key_err("the stored secret key is not base32"))?;
    let bytes: [u8; 32] = bytes
        .try_into()
        .map_err(|_| key_err("the stored secret key is not 32 bytes"))?;
    Ok(iroh::SecretKey::from_bytes(&bytes))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_file_identity_is_created_once_private_and_loaded_again() {
        let dir = tempfile::tempdir().unwrap();
        let first = DeviceIdentity::load_or_create(dir.path(), KeyStorePreference::File).unwrap();
        let again = DeviceIdentity::load_or_create(dir.path(), KeyStorePreference::File).unwrap();
        assert_eq!(first.device_id(), again.device_id());
        let KeyStorage::File { path } = first.storage().clone() else {
            panic!("expected a file");
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        // The public record holds no secret.
        let record = std::fs::read_to_string(dir.path().join("identity.json")).unwrap();
        let secret = std::fs::read_to_string(&path).unwrap();
        assert!(!record.contains(secret.trim()));
        assert!(first.storage().describe().contains("no OS keychain"));
    }

    #[test]
    fn a_secret_of_another_device_is_refused_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let first = DeviceIdentity::load_or_create(dir.path(), KeyStorePreference::File).unwrap();
        let other = data_encoding::BASE32_NOPAD.encode(&iroh::SecretKey::generate().to_bytes());
        std::fs::write(key_file(dir.path()), other).unwrap();
        let err = DeviceIdentity::load_or_create(dir.path(), KeyStorePreference::File).unwrap_err();
        assert!(
            err.to_string().contains(&first.device_id().short()),
            "{err}"
        );
    }
}
