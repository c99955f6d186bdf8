//! Automatic chat titles: a chat still called "New chat" is named after its first exchange
//! (the user's first message, cut to a short line), when that message is stored.

/// The title new chats get until they are named.
pub const DEFAULT_TITLE: &str = "New chat";
/// Longest automatic title, in characters (an ellipsis marks a cut).
pub const MAX_TITLE_CHARS: usize = 48;

/// A title for a chat that starts with `text`: its first non-empty line without Markdown
/// markers, spaces collapsed, cut at a word boundary; `None` when nothing readable is left.
pub fn title_from(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line.trim_start_matches(['#', '>', '-', '*', ' ']);
    let cleaned: String = line
        .chars()
        .filter(|c| !matches!(c, '`' | '*' | '_'))
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if cleaned.is_empty() {
        return None;
    }
    if cleaned.chars().count() <= MAX_TITLE_CHARS {
        return Some(cleaned);
    }
    let cut: String = cleaned.chars().take(MAX_TITLE_CHARS - 1).collect();
    // Back to the last space when it is not too far (words stay whole; CJK has no spaces).
    let at_word = match cut.rfind(' ') {
        Some(i) if cut[..i].chars().count() >= MAX_TITLE_CHARS / 2 => cut[..i].to_string(),
        _ => cut,
    };
    Some(format!(
        "{}…",
        at_word.trim_end_matches([',', '.', ';', ':', ' '])
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_title_is_the_first_line_cleaned_and_cut_at_a_word() {
        assert_eq!(
            [
                title_from("  \n## Fix the **login** bug\nmore"),
                title_from("Please summarise the quarterly report for the board meeting tomorrow morning"),
                title_from("请帮我整理一下本周所有会议的记录并按照项目分类然后发给团队里的每一个成员以便大家提前准备下周的评审会议内容"),
                title_from("`  `\n\n"),
            ],
            [
                Some("Fix the login bug".to_string()),
                Some("Please summarise the quarterly report for the…".to_string()),
                Some("请帮我整理一下本周所有会议的记录并按照项目分类然后发给团队里的每一个成员以便大家提前准备下周的…".to_string()),
                None,
            ]
        );
    }
}
