//! Capped output: the tail of a stream kept in memory ([`TailBuffer`], `run_command`: the last
//! 30,000 bytes) and the on-disk spool of a background command ([`Spool`]: a few fixed-size
//! segment files, the oldest deleted when a new one starts, so disk use is bounded and memory
//! stays flat whatever the command prints). Neither splits a character.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// The last `cap` bytes of a stream, and how many were dropped before them.
#[derive(Debug)]
pub(crate) struct TailBuffer {
    buf: Vec<u8>,
    dropped: u64,
    cap: usize,
}

impl TailBuffer {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            buf: Vec::new(),
            dropped: 0,
            cap,
        }
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
        if self.buf.len() > self.cap.saturating_mul(2) {
            let excess = self.buf.len() - self.cap;
            self.buf.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    /// The kept text (lossy UTF-8, starting at a character boundary) and the dropped count.
    pub(crate) fn finish(&self) -> (String, u64) {
        let mut start = self.buf.len().saturating_sub(self.cap);
        let mut dropped = self.dropped + start as u64;
        if dropped > 0 {
            // Do not start in the middle of a UTF-8 sequence.
            let mut skipped = 0;
            while skipped < 3 && self.buf.get(start).is_some_and(|b| b & 0xC0 == 0x80) {
                start += 1;
                skipped += 1;
            }
            dropped += skipped as u64;
        }
        (
            String::from_utf8_lossy(&self.buf[start..]).into_owned(),
            dropped,
        )
    }
}

/// One page of a command's output (`check_command`).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputPage {
    /// Absolute offset of the first byte returned.
    pub start: u64,
    /// The bytes, as lossy UTF-8.
    pub text: String,
    /// Offset to ask for next.
    pub next_offset: u64,
    /// Bytes the command printed so far.
    pub total: u64,
    /// Bytes between the requested offset and `start` that are no longer kept.
    pub dropped: u64,
}

/// The length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence.
fn complete_utf8_len(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for back in 1..=len.min(4) {
        let b = bytes[len - back];
        if b & 0xC0 != 0x80 {
            let need = match b {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if need > back { len - back } else { len };
        }
    }
    len
}

/// A command's output on disk: segment files `<id>.<k>.log`, each `segment` bytes, of which the
/// last `keep` exist.
#[derive(Debug)]
pub(crate) struct Spool {
    dir: PathBuf,
    id: String,
    segment: u64,
    keep: u64,
    inner: Mutex<SpoolInner>,
    total: AtomicU64,
}

#[derive(Debug)]
struct SpoolInner {
    /// Index of the segment being written and its open file.
    current: u64,
    file: Option<File>,
    /// Index of the oldest segment kept.
    first: u64,
    removed: bool,
}

impl Spool {
    pub(crate) fn create(dir: &Path, id: &str, segment: u64, keep: u64) -> std::io::Result<Spool> {
        let spool = Spool {
            dir: dir.to_path_buf(),
            id: id.to_string(),
            segment: segment.max(4096),
            keep: keep.max(2),
            inner: Mutex::new(SpoolInner {
                current: 0,
                file: None,
                first: 0,
                removed: false,
            }),
            total: AtomicU64::new(0),
        };
        let file = File::create(spool.path(0))?;
        spool
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .file = Some(file);
        Ok(spool)
    }

    fn path(&self, k: u64) -> PathBuf {
        self.dir.join(format!("{}.{k}.log", self.id))
    }

    pub(crate) fn total(&self) -> u64 {
        self.total.load(Ordering::Acquire)
    }

    /// Appends output; an I/O error (disk full) drops the data but keeps counting it.
    pub(crate) fn write(&self, mut data: &[u8]) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.removed {
            return;
        }
        let mut total = self.total();
        while !data.is_empty() {
            let seg = total / self.segment;
            if seg != inner.current || inner.file.is_none() {
                inner.current = seg;
                inner.file = File::create(self.path(seg)).ok();
                while inner.first + self.keep <= seg {
                    let _ = std::fs::remove_file(self.path(inner.first));
                    inner.first += 1;
                }
            }
            let room = (self.segment - total % self.segment) as usize;
            let n = room.min(data.len());
            if let Some(f) = inner.file.as_mut() {
                let _ = f.write_all(&data[..n]);
            }
            total += n as u64;
            self.total.store(total, Ordering::Release);
            data = &data[n..];
        }
    }

    pub(crate) fn flush(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(f) = inner.file.as_mut() {
            let _ = f.flush();
        }
    }

    /// First byte still kept.
    fn retained_start(&self, inner: &SpoolInner) -> u64 {
        inner.first * self.segment
    }

    pub(crate) fn read(&self, offset: u64, max_bytes: usize) -> std::io::Result<OutputPage> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let total = self.total();
        let kept = self.retained_start(&inner);
        let start = offset.max(kept).min(total);
        let dropped = start.saturating_sub(offset.min(total));
        let end = total.min(start + max_bytes as u64);
        let mut bytes = Vec::with_capacity((end - start) as usize);
        let mut pos = start;
        while pos < end && !inner.removed {
            let seg = pos / self.segment;
            let within = pos % self.segment;
            let n = (self.segment - within).min(end - pos);
            let mut f = File::open(self.path(seg))?;
            f.seek(SeekFrom::Start(within))?;
            let got = f.take(n).read_to_end(&mut bytes)?;
            if got == 0 {
                break;
            }
            pos += got as u64;
        }
        drop(inner);
        // End on a character boundary when more follows, so a page never splits a character.
        let len = if pos < total {
            complete_utf8_len(&bytes)
        } else {
            bytes.len()
        };
        bytes.truncate(len);
        Ok(OutputPage {
            start,
            next_offset: start + bytes.len() as u64,
            text: String::from_utf8_lossy(&bytes).into_owned(),
            total,
            dropped,
        })
    }

    /// The last `n` characters of output.
    pub(crate) fn tail_chars(&self, n: usize) -> String {
        let total = self.total();
        let want = (n as u64).saturating_mul(4);
        let from = total.saturating_sub(want);
        match self.read(from, want as usize) {
            Ok(page) => suzent_core::text::tail_chars_lossy(page.text.as_bytes(), n),
            Err(_) => String::new(),
        }
    }

    pub(crate) fn remove_files(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.removed = true;
        inner.file = None;
        for k in inner.first..=inner.current {
            let _ = std::fs::remove_file(self.path(k));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_tail_buffer_keeps_the_last_bytes_and_counts_the_rest() {
        let mut b = TailBuffer::new(10);
        for _ in 0..10 {
            b.push(b"0123456789");
        }
        let (text, dropped) = b.finish();
        assert_eq!(text, "0123456789");
        assert_eq!(dropped, 90);
    }

    #[test]
    fn the_tail_buffer_does_not_start_inside_a_character() {
        let mut b = TailBuffer::new(4);
        b.push("aé€".as_bytes()); // 1 + 2 + 3 bytes
        let (text, dropped) = b.finish();
        assert_eq!(text, "€");
        assert_eq!(dropped, 3);
    }

    #[test]
    fn the_spool_keeps_the_last_segments_and_reports_what_was_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::create(dir.path(), "t", 4096, 2).unwrap();
        let line = vec![b'x'; 1000];
        for _ in 0..20 {
            spool.write(&line);
        }
        assert_eq!(spool.total(), 20_000);
        let page = spool.read(0, 100).unwrap();
        // Segments 3 and 4 (12288..20000) are kept.
        assert_eq!(page.start, 12_288);
        assert_eq!(page.dropped, 12_288);
        assert_eq!(page.text.len(), 100);
        let end = spool.read(19_990, 100).unwrap();
        assert_eq!(
            (end.start, end.next_offset, end.text.len()),
            (19_990, 20_000, 10)
        );
        let files = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(files, 2);
    }

    #[test]
    fn a_page_never_splits_a_character() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::create(dir.path(), "t", 4096, 2).unwrap();
        spool.write("aé€b".as_bytes());
        let page = spool.read(0, 3).unwrap();
        assert_eq!(page.text, "aé");
        let rest = spool.read(page.next_offset, 100).unwrap();
        assert_eq!(rest.text, "€b");
        assert_eq!(spool.tail_chars(2), "€b");
    }
}
