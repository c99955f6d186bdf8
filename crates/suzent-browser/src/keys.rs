//! Key names and chords (`Enter`, `Shift+Tab`, `Control+a`) as input events.

use crate::backend::InputEvent;

/// Parses a key or chord into a key event. Modifiers: `Alt`, `Control`/`Ctrl`,
/// `Meta`/`Cmd`/`Command`, `Shift`. Errors name the key.
pub fn key_event(chord: &str) -> Result<InputEvent, String> {
    let parts: Vec<&str> = chord.split('+').map(str::trim).collect();
    let (key, mods) = match parts.split_last() {
        // `Control++` presses `+`.
        Some((last, rest)) if last.is_empty() && !rest.is_empty() && chord.ends_with("++") => {
            ("+", &rest[..rest.len() - 1])
        }
        Some((last, rest)) => (*last, rest),
        None => return Err(format!("unknown key '{chord}'")),
    };
    let mut modifiers = 0u8;
    for m in mods {
        modifiers |= match m.to_ascii_lowercase().as_str() {
            "alt" | "option" => 1,
            "control" | "ctrl" => 2,
            "meta" | "cmd" | "command" | "super" => 4,
            "shift" => 8,
            _ => return Err(format!("unknown modifier '{m}' in '{chord}'")),
        };
    }
    let named: Option<(&str, &str, u32, Option<&str>)> = match key.to_ascii_lowercase().as_str() {
        "enter" | "return" => Some(("Enter", "Enter", 13, Some("\r"))),
        "tab" => Some(("Tab", "Tab", 9, None)),
        "escape" | "esc" => Some(("Escape", "Escape", 27, None)),
        "backspace" => Some(("Backspace", "Backspace", 8, None)),
        "delete" | "del" => Some(("Delete", "Delete", 46, None)),
        "arrowup" | "up" => Some(("ArrowUp", "ArrowUp", 38, None)),
        "arrowdown" | "down" => Some(("ArrowDown", "ArrowDown", 40, None)),
        "arrowleft" | "left" => Some(("ArrowLeft", "ArrowLeft", 37, None)),
        "arrowright" | "right" => Some(("ArrowRight", "ArrowRight", 39, None)),
        "home" => Some(("Home", "Home", 36, None)),
        "end" => Some(("End", "End", 35, None)),
        "pageup" => Some(("PageUp", "PageUp", 33, None)),
        "pagedown" => Some(("PageDown", "PageDown", 34, None)),
        "space" | " " => Some((" ", "Space", 32, Some(" "))),
        _ => None,
    };
    let plain_text = modifiers & !8 == 0;
    if let Some((k, code, key_code, text)) = named {
        return Ok(InputEvent::Key {
            key: k.to_string(),
            code: code.to_string(),
            key_code,
            text: text.filter(|_| plain_text).map(str::to_string),
            modifiers,
        });
    }
    if let Some(n) = key
        .strip_prefix(['F', 'f'])
        .and_then(|d| d.parse::<u32>().ok())
        .filter(|n| (1..=12).contains(n))
    {
        return Ok(InputEvent::Key {
            key: format!("F{n}"),
            code: format!("F{n}"),
            key_code: 111 + n,
            text: None,
            modifiers,
        });
    }
    let mut chars = key.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return Err(format!(
            "unknown key '{key}' (use a single character or a name such as Enter, Tab, Escape, ArrowDown, Backspace, PageDown, F5)"
        ));
    };
    let shifted = modifiers & 8 != 0;
    let (code, key_code) = if c.is_ascii_alphabetic() {
        (
            format!("Key{}", c.to_ascii_uppercase()),
            c.to_ascii_uppercase() as u32,
        )
    } else if c.is_ascii_digit() {
        (format!("Digit{c}"), c as u32)
    } else {
        (String::new(), 0)
    };
    let shown = if shifted && c.is_ascii_alphabetic() {
        c.to_ascii_uppercase()
    } else {
        c
    };
    Ok(InputEvent::Key {
        key: shown.to_string(),
        code,
        key_code,
        text: plain_text.then(|| shown.to_string()),
        modifiers,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn chords_carry_their_modifiers_and_no_text() {
        assert_eq!(
            key_event("Control+a").unwrap(),
            InputEvent::Key {
                key: "a".into(),
                code: "KeyA".into(),
                key_code: 65,
                text: None,
                modifiers: 2
            }
        );
        assert_eq!(
            key_event("Enter").unwrap(),
            InputEvent::Key {
                key: "Enter".into(),
                code: "Enter".into(),
                key_code: 13,
                text: Some("\r".into()),
                modifiers: 0
            }
        );
        assert!(key_event("Hyper+x").unwrap_err().contains("Hyper"));
        assert!(key_event("NotAKey").unwrap_err().contains("NotAKey"));
    }
}
