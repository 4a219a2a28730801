//! Credentials at rest: AES-256-GCM with a key from the environment or a
//! key file created on first start (mode 0600).

use std::path::Path;

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;

/// The environment variable holding the base64 of a 32-byte key.
pub const KEY_ENV: &str = "OXISCOPE_SECRET_KEY";
/// The key file inside the data directory.
pub const KEY_FILE: &str = "secret.key";
/// The version prefix of sealed values.
const PREFIX: &str = "v1:";

/// Why sealing or unsealing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CryptoError {
    /// The key is not the base64 of 32 bytes.
    #[error("the secret key must be the base64 of 32 bytes ({0})")]
    BadKey(String),
    /// The key file could not be read or created.
    #[error("key file {path}: {source}")]
    KeyFile {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A sealed value is damaged or was sealed with another key.
    #[error("a stored secret cannot be decrypted (damaged, or another key)")]
    Open,
    /// Encryption failed.
    #[error("encryption failed")]
    Seal,
}

/// Encrypts and decrypts stored secrets.
#[derive(Clone)]
pub struct Sealer {
    cipher: Aes256Gcm,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(..)")
    }
}

impl Sealer {
    /// A sealer with a raw 32-byte key.
    #[must_use]
    pub fn from_key(key: &[u8; 32]) -> Self {
        Self {
            cipher: Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(key)),
        }
    }

    /// A sealer from a base64 key.
    ///
    /// # Errors
    /// [`CryptoError::BadKey`] unless it decodes to 32 bytes.
    pub fn from_base64(text: &str) -> Result<Self, CryptoError> {
        let bytes = B64
            .decode(text.trim())
            .map_err(|e| CryptoError::BadKey(e.to_string()))?;
        let key: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| CryptoError::BadKey(format!("{} bytes", b.len())))?;
        Ok(Self::from_key(&key))
    }

    /// The key from `OXISCOPE_SECRET_KEY` when set, else from
    /// `<data_dir>/secret.key`, created with a random key and mode 0600
    /// when missing.
    ///
    /// # Errors
    /// [`CryptoError::BadKey`] for a malformed key, [`CryptoError::KeyFile`]
    /// when the file cannot be read or written.
    pub fn load_or_create(data_dir: &Path) -> Result<Self, CryptoError> {
        if let Ok(text) = std::env::var(KEY_ENV) {
            return Self::from_base64(&text);
        }
        let path = data_dir.join(KEY_FILE);
        let io = |source| CryptoError::KeyFile {
            path: path.clone(),
            source,
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::from_base64(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(data_dir).map_err(io)?;
                let key = Aes256Gcm::generate_key(OsRng);
                write_private(&path, B64.encode(key).as_bytes()).map_err(io)?;
                Ok(Self {
                    cipher: Aes256Gcm::new(&key),
                })
            }
            Err(e) => Err(io(e)),
        }
    }

    /// Encrypts `plain`: `v1:` + base64(nonce ‖ ciphertext).
    ///
    /// # Errors
    /// [`CryptoError::Seal`] if the cipher fails.
    pub fn seal(&self, plain: &[u8]) -> Result<String, CryptoError> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let mut out = nonce.to_vec();
        out.extend(
            self.cipher
                .encrypt(&nonce, plain)
                .map_err(|_| CryptoError::Seal)?,
        );
        Ok(format!("{PREFIX}{}", B64.encode(out)))
    }

    /// Decrypts what [`Sealer::seal`] wrote.
    ///
    /// # Errors
    /// [`CryptoError::Open`] for damaged data or another key.
    pub fn open(&self, sealed: &str) -> Result<Vec<u8>, CryptoError> {
        let body = sealed.strip_prefix(PREFIX).ok_or(CryptoError::Open)?;
        let bytes = B64.decode(body).map_err(|_| CryptoError::Open)?;
        if bytes.len() < 12 {
            return Err(CryptoError::Open);
        }
        let (nonce, data) = bytes.split_at(12);
        self.cipher
            .decrypt(Nonce::from_slice(nonce), data)
            .map_err(|_| CryptoError::Open)
    }
}

/// Writes a file only its owner can read.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_open_with_the_same_key_only() {
        let a = Sealer::from_key(&[7; 32]);
        let b = Sealer::from_key(&[8; 32]);
        let sealed = a.seal(b"sk-secret").unwrap();
        assert!(!sealed.contains("sk-secret"));
        assert_eq!(a.open(&sealed).unwrap(), b"sk-secret");
        assert!(matches!(b.open(&sealed), Err(CryptoError::Open)));
        assert!(matches!(a.open("v1:AAAA"), Err(CryptoError::Open)));
    }

    #[cfg(unix)]
    #[test]
    fn key_file_is_created_private_and_reused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let first = Sealer::load_or_create(dir.path()).unwrap();
        let mode = std::fs::metadata(dir.path().join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let second = Sealer::load_or_create(dir.path()).unwrap();
        let sealed = first.seal(b"x").unwrap();
        assert_eq!(second.open(&sealed).unwrap(), b"x");
    }
}
