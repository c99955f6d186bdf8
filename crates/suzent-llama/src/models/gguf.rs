//! Reads the metadata at the head of a GGUF file (format: ggml's `docs/gguf.md`): magic `GGUF`,
//! version, tensor and key-value counts, then typed key-value pairs, all little-endian. Used to
//! check an imported or downloaded file and to describe a model without loading it.

use std::io::{BufReader, Read};
use std::path::Path;

/// What the metadata says about a model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GgufInfo {
    /// GGUF version (2 or 3).
    pub version: u32,
    /// `general.architecture` (`llama`, `qwen2`, `gemma3`, ...).
    pub architecture: String,
    /// `general.name`.
    pub name: Option<String>,
    /// `{architecture}.context_length`.
    pub context_length: Option<u64>,
    /// `tokenizer.chat_template`: the Jinja chat template.
    pub chat_template: Option<String>,
}

/// A file that is not a readable GGUF model.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    /// Reading failed.
    #[error("cannot read '{path}': {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The content is not GGUF.
    #[error("'{path}' is not a GGUF model: {message}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// Most key-value pairs read (real models have a few dozen).
const MAX_KV: u64 = 100_000;
/// Longest string read (chat templates are the longest, a few tens of KiB).
const MAX_STRING: u64 = 16 << 20;

/// Reads the metadata of the GGUF file at `path`.
pub fn read_gguf_info(path: &Path) -> Result<GgufInfo, GgufError> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| GgufError::Io {
        path: shown.clone(),
        source,
    })?;
    let mut reader = Reader {
        inner: BufReader::new(file),
        path: shown,
    };
    let mut magic = [0u8; 4];
    reader.exact(&mut magic)?;
    if &magic != b"GGUF" {
        return Err(reader.format("the file does not start with GGUF"));
    }
    let version = reader.u32()?;
    if !(2..=3).contains(&version) {
        return Err(reader.format(&format!("unsupported GGUF version {version}")));
    }
    let _tensors = reader.u64()?;
    let kv_count = reader.u64()?;
    if kv_count > MAX_KV {
        return Err(reader.format(&format!("{kv_count} metadata entries")));
    }
    let mut info = GgufInfo {
        version,
        ..GgufInfo::default()
    };
    let mut context_lengths: Vec<(String, u64)> = Vec::new();
    for _ in 0..kv_count {
        let key = reader.string()?;
        let kind = reader.u32()?;
        match (key.as_str(), kind) {
            ("general.architecture", TYPE_STRING) => info.architecture = reader.string()?,
            ("general.name", TYPE_STRING) => info.name = Some(reader.string()?),
            ("tokenizer.chat_template", TYPE_STRING) => {
                info.chat_template = Some(reader.string()?);
            }
            (k, _) if k.ends_with(".context_length") => {
                let arch = k.trim_end_matches(".context_length").to_string();
                if let Some(value) = reader.integer(kind)? {
                    context_lengths.push((arch, value));
                }
            }
            _ => reader.skip_value(kind)?,
        }
    }
    if info.architecture.is_empty() {
        return Err(reader.format("no general.architecture"));
    }
    info.context_length = context_lengths
        .into_iter()
        .find(|(arch, _)| *arch == info.architecture)
        .map(|(_, value)| value);
    Ok(info)
}

const TYPE_STRING: u32 = 8;
const TYPE_ARRAY: u32 = 9;

struct Reader<R> {
    inner: R,
    path: String,
}

impl<R: Read> Reader<R> {
    fn format(&self, message: &str) -> GgufError {
        GgufError::Format {
            path: self.path.clone(),
            message: message.to_string(),
        }
    }

    fn exact(&mut self, buffer: &mut [u8]) -> Result<(), GgufError> {
        self.inner.read_exact(buffer).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                self.format("the metadata is cut short")
            } else {
                GgufError::Io {
                    path: self.path.clone(),
                    source: e,
                }
            }
        })
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        let mut b = [0u8; 4];
        self.exact(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        let mut b = [0u8; 8];
        self.exact(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn string(&mut self) -> Result<String, GgufError> {
        let len = self.u64()?;
        if len > MAX_STRING {
            return Err(self.format(&format!("a string of {len} bytes")));
        }
        let mut bytes = vec![0u8; usize::try_from(len).unwrap_or(0)];
        self.exact(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn skip(&mut self, bytes: u64) -> Result<(), GgufError> {
        let copied = std::io::copy(&mut (&mut self.inner).take(bytes), &mut std::io::sink())
            .map_err(|source| GgufError::Io {
                path: self.path.clone(),
                source,
            })?;
        if copied < bytes {
            return Err(self.format("the metadata is cut short"));
        }
        Ok(())
    }

    /// Size in bytes of a scalar of GGUF type `kind`.
    fn scalar_size(&self, kind: u32) -> Result<u64, GgufError> {
        Ok(match kind {
            0 | 1 | 7 => 1, // u8, i8, bool
            2 | 3 => 2,     // u16, i16
            4..=6 => 4,     // u32, i32, f32
            10..=12 => 8,   // u64, i64, f64
            other => return Err(self.format(&format!("unknown value type {other}"))),
        })
    }

    fn integer(&mut self, kind: u32) -> Result<Option<u64>, GgufError> {
        Ok(match kind {
            4 => Some(u64::from(self.u32()?)),
            5 => Some(u64::try_from(i32::from_le_bytes(self.u32()?.to_le_bytes())).unwrap_or(0)),
            10 | 11 => Some(self.u64()?),
            other => {
                self.skip_value(other)?;
                None
            }
        })
    }

    fn skip_value(&mut self, kind: u32) -> Result<(), GgufError> {
        match kind {
            TYPE_STRING => {
                let len = self.u64()?;
                self.skip(len)
            }
            TYPE_ARRAY => {
                let item = self.u32()?;
                let count = self.u64()?;
                if item == TYPE_STRING || item == TYPE_ARRAY {
                    for _ in 0..count {
                        self.skip_value(item)?;
                    }
                    Ok(())
                } else {
                    let size = self.scalar_size(item)?;
                    let total = size
                        .checked_mul(count)
                        .ok_or_else(|| self.format("an array too large"))?;
                    self.skip(total)
                }
            }
            other => {
                let size = self.scalar_size(other)?;
                self.skip(size)
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn string(out: &mut Vec<u8>, text: &str) {
        out.extend((text.len() as u64).to_le_bytes());
        out.extend(text.as_bytes());
    }

    /// A GGUF head with `general.architecture`, `general.name`, `llama.context_length`, a token
    /// array and a chat template.
    fn sample() -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend(0u64.to_le_bytes());
        out.extend(5u64.to_le_bytes());
        string(&mut out, "general.architecture");
        out.extend(TYPE_STRING.to_le_bytes());
        string(&mut out, "llama");
        string(&mut out, "tokenizer.ggml.tokens");
        out.extend(TYPE_ARRAY.to_le_bytes());
        out.extend(TYPE_STRING.to_le_bytes());
        out.extend(2u64.to_le_bytes());
        string(&mut out, "<s>");
        string(&mut out, "</s>");
        string(&mut out, "llama.context_length");
        out.extend(4u32.to_le_bytes());
        out.extend(8192u32.to_le_bytes());
        string(&mut out, "general.name");
        out.extend(TYPE_STRING.to_le_bytes());
        string(&mut out, "Tiny");
        string(&mut out, "tokenizer.chat_template");
        out.extend(TYPE_STRING.to_le_bytes());
        string(&mut out, "{{ messages }}");
        out
    }

    #[test]
    fn the_metadata_of_a_gguf_head_is_read() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("m.gguf");
        std::fs::write(&path, sample())?;
        assert_eq!(
            read_gguf_info(&path)?,
            GgufInfo {
                version: 3,
                architecture: "llama".into(),
                name: Some("Tiny".into()),
                context_length: Some(8192),
                chat_template: Some("{{ messages }}".into()),
            }
        );
        Ok(())
    }

    #[test]
    fn a_file_that_is_not_gguf_is_refused_with_its_name() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("notes.gguf");
        std::fs::write(&path, b"hello world, not a model")?;
        let error = read_gguf_info(&path).unwrap_err().to_string();
        assert!(
            error.contains("notes.gguf") && error.contains("does not start with GGUF"),
            "{error}"
        );
        Ok(())
    }

    #[test]
    fn a_cut_short_head_is_refused() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("cut.gguf");
        let bytes = sample();
        std::fs::write(&path, &bytes[..bytes.len() - 5])?;
        let error = read_gguf_info(&path).unwrap_err().to_string();
        assert!(error.contains("cut short"), "{error}");
        Ok(())
    }
}
