//! Splitting a long reply into messages a platform accepts: in order, each within the limit,
//! nothing dropped (the parts joined are the text), cut where a reader would: between
//! paragraphs, else lines, else words, else anywhere (between characters, never inside one).

/// How a platform counts the length of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthUnit {
    /// UTF-16 code units (Telegram: "1-4096 characters after entities parsing", counted in
    /// UTF-16 like JavaScript strings).
    Utf16,
    /// Unicode scalar values.
    Chars,
    /// UTF-8 bytes.
    Bytes,
}

impl LengthUnit {
    /// The length of `text` in this unit.
    pub fn len(self, text: &str) -> usize {
        match self {
            LengthUnit::Utf16 => text.encode_utf16().count(),
            LengthUnit::Chars => text.chars().count(),
            LengthUnit::Bytes => text.len(),
        }
    }

    fn of_char(self, c: char) -> usize {
        match self {
            LengthUnit::Utf16 => c.len_utf16(),
            LengthUnit::Chars => 1,
            LengthUnit::Bytes => c.len_utf8(),
        }
    }
}

/// The longest message a platform takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageLimit {
    /// At most this many units (at least 4 is assumed; smaller limits count as 4).
    pub max: usize,
    /// Counted in this unit.
    pub unit: LengthUnit,
}

/// Splits `text` into parts of at most `limit` each, in order, whose concatenation is `text`.
/// A cut goes after the last blank line that fits, else the last line break, else the last
/// space, else after the last whole character that fits. Text that fits is one part; empty or
/// whitespace-only text is no part.
pub fn split_message(text: &str, limit: MessageLimit) -> Vec<String> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let max = limit.max.max(4);
    let mut parts = Vec::new();
    let mut rest = text;
    while limit.unit.len(rest) > max {
        // The byte index just after the longest prefix that fits.
        let mut fit = 0;
        let mut used = 0;
        for (i, c) in rest.char_indices() {
            let n = limit.unit.of_char(c);
            if used + n > max {
                break;
            }
            used += n;
            fit = i + c.len_utf8();
        }
        let head = &rest[..fit];
        // Never cut in the first quarter: a cut there would leave tiny parts.
        let floor = fit / 4;
        let cut = [
            head.rfind("\n\n").map(|i| i + 2),
            head.rfind('\n').map(|i| i + 1),
            head.rfind(' ').map(|i| i + 1),
        ]
        .into_iter()
        .flatten()
        .find(|&i| i > floor)
        .unwrap_or(fit);
        parts.push(rest[..cut].to_string());
        rest = &rest[cut..];
    }
    if !rest.is_empty() {
        parts.push(rest.to_string());
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const TELEGRAM: MessageLimit = MessageLimit {
        max: 4096,
        unit: LengthUnit::Utf16,
    };

    #[test]
    fn a_9000_character_reply_becomes_three_ordered_parts_that_join_to_the_text() {
        let text: String = (0..900).map(|i| format!("line {i:04}\n")).collect();
        assert_eq!(text.chars().count(), 9000);
        let parts = split_message(&text, TELEGRAM);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.encode_utf16().count() <= 4096));
        assert_eq!(parts.concat(), text);
        // Cut at line ends: every part but the last ends with a newline.
        assert!(parts[..2].iter().all(|p| p.ends_with('\n')));
    }

    #[test]
    fn paragraphs_win_over_lines_and_words_and_text_without_spaces_is_cut_between_characters() {
        let limit = MessageLimit {
            max: 12,
            unit: LengthUnit::Chars,
        };
        assert_eq!(
            split_message("aaaa bbb\n\ncc dd ee", limit),
            vec!["aaaa bbb\n\n", "cc dd ee"]
        );
        assert_eq!(
            split_message("aaaa bbbb cccc dddd", limit),
            vec!["aaaa bbbb ", "cccc dddd"]
        );
        assert_eq!(
            split_message("abcdefghijklmnopqrstuvwxyz", limit),
            vec!["abcdefghijkl", "mnopqrstuvwx", "yz"]
        );
    }

    #[test]
    fn characters_outside_the_bmp_count_twice_in_utf16_and_are_never_split() {
        let limit = MessageLimit {
            max: 5,
            unit: LengthUnit::Utf16,
        };
        let parts = split_message("😀😀😀😀", limit);
        assert_eq!(parts, vec!["😀😀", "😀😀"]);
    }

    #[test]
    fn empty_and_blank_text_is_no_message() {
        assert_eq!(split_message("", TELEGRAM), Vec::<String>::new());
        assert_eq!(split_message(" \n ", TELEGRAM), Vec::<String>::new());
    }
}
