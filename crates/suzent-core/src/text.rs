//! Cutting text to a budget without splitting a character: prefixes and tails by bytes or
//! characters, with the marker that tells the reader something was left out.
//!
//! Every crate cuts text through these (tool results, events, audit lines, reviewer input,
//! error bodies), so a cut never lands inside a UTF-8 sequence and the markers stay alike.
//!
//! ```
//! use suzent_core::text::{head_tail, tail_chars, truncate_bytes, truncate_chars};
//! assert_eq!(truncate_chars("héllo world", 5, "…"), "héllo…");
//! assert_eq!(truncate_chars("short", 5, "…"), "short");
//! assert_eq!(tail_chars("héllo", 3), "llo");
//! assert_eq!(truncate_bytes("héllo", 2), "h… [5 more bytes]");
//! assert_eq!(head_tail("abcdefghij", 2, 3, "[{n} characters cut]"), "ab[5 characters cut]hij");
//! ```

/// The longest prefix of `text` with at most `max_bytes` bytes that ends on a character
/// boundary.
pub fn prefix_bytes(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut cut = max_bytes;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

/// The first `max_chars` characters of `text`, or `None` when it has no more than that.
pub fn prefix_chars(text: &str, max_chars: usize) -> Option<&str> {
    text.char_indices()
        .nth(max_chars)
        .map(|(cut, _)| &text[..cut])
}

/// `text` cut to its first `max_chars` characters followed by `marker`; unchanged when it has
/// no more than `max_chars` characters.
pub fn truncate_chars(text: &str, max_chars: usize, marker: &str) -> String {
    match prefix_chars(text, max_chars) {
        Some(head) => format!("{head}{marker}"),
        None => text.to_string(),
    }
}

/// `text` cut to at most `max_bytes` bytes on a character boundary, followed by
/// `… [N more bytes]` (N counts the bytes left out); unchanged when it fits.
pub fn truncate_bytes(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let head = prefix_bytes(text, max_bytes);
    format!("{head}… [{} more bytes]", text.len() - head.len())
}

/// The last `max_chars` characters of `text` (all of it when it is shorter).
pub fn tail_chars(text: &str, max_chars: usize) -> &str {
    if max_chars == 0 {
        return &text[text.len()..];
    }
    match text.char_indices().rev().nth(max_chars - 1) {
        Some((start, _)) => &text[start..],
        None => text,
    }
}

/// The first `head` and the last `tail` characters of `text` with `marker` between them, `{n}`
/// in the marker replaced by the number of characters left out; unchanged when `text` has no
/// more than `head + tail` characters.
pub fn head_tail(text: &str, head: usize, tail: usize, marker: &str) -> String {
    let count = text.chars().count();
    if count <= head.saturating_add(tail) {
        return text.to_string();
    }
    let first = prefix_chars(text, head).unwrap_or(text);
    let last = tail_chars(text, tail);
    let left_out = count - head - tail;
    format!(
        "{first}{}{last}",
        marker.replace("{n}", &left_out.to_string())
    )
}

/// The last `max_chars` characters of `bytes` read as lossy UTF-8, not starting inside a
/// character (a tail of a byte buffer may begin with the continuation bytes of a cut one).
pub fn tail_chars_lossy(bytes: &[u8], max_chars: usize) -> String {
    let mut start = 0;
    while start < bytes.len() && start < 4 && bytes[start] & 0xC0 == 0x80 {
        start += 1;
    }
    let text = String::from_utf8_lossy(&bytes[start..]);
    tail_chars(&text, max_chars).to_string()
}

/// A size for people, in SI units with one decimal: `512 B`, `1.2 kB`, `3.1 MB`, `2.0 GB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 999.95 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_si_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1200), "1.2 kB");
        assert_eq!(human_bytes(999_960), "1.0 MB");
        assert_eq!(human_bytes(3 * 1024 * 1024), "3.1 MB");
    }

    #[test]
    fn a_byte_prefix_never_splits_a_character() {
        assert_eq!(prefix_bytes("aé€", 2), "a");
        assert_eq!(prefix_bytes("aé€", 3), "aé");
        assert_eq!(prefix_bytes("aé€", 6), "aé€");
        assert_eq!(prefix_bytes("", 0), "");
    }

    #[test]
    fn a_character_cut_marks_only_text_that_was_cut() {
        assert_eq!(truncate_chars("abc", 3, "…[truncated]"), "abc");
        assert_eq!(truncate_chars("abcd", 3, "…[truncated]"), "abc…[truncated]");
        assert_eq!(truncate_chars("€€€€", 2, ""), "€€");
    }

    #[test]
    fn a_byte_cut_counts_the_bytes_left_out() {
        assert_eq!(truncate_bytes("abc", 3), "abc");
        assert_eq!(truncate_bytes("a€b", 2), "a… [4 more bytes]");
    }

    #[test]
    fn a_tail_keeps_the_last_characters() {
        assert_eq!(tail_chars("aé€b", 2), "€b");
        assert_eq!(tail_chars("ab", 5), "ab");
        assert_eq!(tail_chars("ab", 0), "");
        assert_eq!(tail_chars_lossy(&"aé€b".as_bytes()[2..], 5), "€b");
    }

    #[test]
    fn a_head_and_tail_cut_says_how_much_is_left_out() {
        assert_eq!(head_tail("abcdef", 3, 3, "[{n}]"), "abcdef");
        assert_eq!(head_tail("aé€bcdefg", 2, 2, " … {n} … "), "aé … 5 … fg");
    }
}
