//! Windows path rules as pure functions (compiled and tested on every platform): drive letters,
//! UNC and verbatim (`\\?\`) prefixes, device paths, `/` and `\` separators, repeated separators,
//! case folding, and 8.3 short names.
//!
//! Containment on Windows is decided on [`WinPath`] values: a path is inside a root when it has
//! the same prefix (drive letter or UNC server and share, compared without case) and the root's
//! components are a case-folded prefix of its own. A device path (`\\.\`, `\\?\GLOBALROOT`) is
//! never inside anything. A component that looks like an 8.3 short name (`PROGRA~1`) cannot be
//! compared with the long name it stands for without asking the file system, so a policy refuses
//! it unless the OS has already expanded it (fail closed).

/// The root of a Windows path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WinPrefix {
    /// `C:` (stored upper-case).
    Drive(char),
    /// `\\server\share` (stored case-folded).
    Unc {
        /// Server name.
        server: String,
        /// Share name.
        share: String,
    },
    /// `\\.\...` or `\\?\` forms that name devices, not files.
    Device,
}

/// A parsed, normalized Windows path: `.` dropped, `..` applied (never above the root), repeated
/// separators collapsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WinPath {
    /// The root; None for a relative path.
    pub prefix: Option<WinPrefix>,
    /// The components after the root, as written.
    pub components: Vec<String>,
}

/// Case folding used for comparisons on case-insensitive volumes (Unicode lower case, which
/// matches NTFS's upcase table for the characters paths use in practice).
pub fn fold_case(s: &str) -> String {
    s.to_lowercase()
}

/// Parses a Windows path written with `\` or `/`.
pub fn parse_windows_path(input: &str) -> WinPath {
    let s = input.replace('/', "\\");
    let (prefix, rest): (Option<WinPrefix>, &str) = if let Some(rest) = s
        .strip_prefix("\\\\?\\")
        .or_else(|| s.strip_prefix("\\??\\"))
    {
        if let Some(unc) = rest
            .strip_prefix("UNC\\")
            .or_else(|| rest.strip_prefix("unc\\"))
        {
            split_unc(unc)
        } else if let Some((d, tail)) = drive(rest) {
            (Some(WinPrefix::Drive(d)), tail)
        } else {
            (Some(WinPrefix::Device), "")
        }
    } else if s.starts_with("\\\\.\\") {
        (Some(WinPrefix::Device), "")
    } else if let Some(unc) = s.strip_prefix("\\\\") {
        split_unc(unc)
    } else if let Some((d, tail)) = drive(&s) {
        (Some(WinPrefix::Drive(d)), tail)
    } else {
        (None, s.as_str())
    };
    // Windows ignores trailing dots and spaces of a component (`secret.txt.` is `secret.txt`).
    let mut normalized: Vec<String> = Vec::new();
    for raw in rest.split('\\') {
        match raw {
            "" | "." => {}
            ".." => {
                normalized.pop();
            }
            other => {
                let t = other.trim_end_matches(['.', ' ']);
                if !t.is_empty() {
                    normalized.push(t.to_string());
                }
            }
        }
    }
    WinPath {
        prefix,
        components: normalized,
    }
}

fn drive(s: &str) -> Option<(char, &str)> {
    let mut chars = s.chars();
    let letter = chars.next()?;
    if letter.is_ascii_alphabetic() && chars.next() == Some(':') {
        Some((letter.to_ascii_uppercase(), &s[2..]))
    } else {
        None
    }
}

fn split_unc(s: &str) -> (Option<WinPrefix>, &str) {
    let mut parts = s.splitn(3, '\\');
    let server = parts.next().unwrap_or("");
    let share = parts.next().unwrap_or("");
    if server.is_empty() || share.is_empty() || server == "." || server == "?" {
        return (Some(WinPrefix::Device), "");
    }
    (
        Some(WinPrefix::Unc {
            server: fold_case(server),
            share: fold_case(share),
        }),
        parts.next().unwrap_or(""),
    )
}

/// Whether a component looks like an 8.3 short name: a base of 1 to 8 characters ending in `~`
/// and digits, optionally a dot and an extension of 1 to 3 characters (`PROGRA~1`, `DOCUME~2.TXT`).
pub fn is_short_name(component: &str) -> bool {
    let (base, ext) = match component.rsplit_once('.') {
        Some((b, e)) => (b, Some(e)),
        None => (component, None),
    };
    if ext.is_some_and(|e| e.is_empty() || e.chars().count() > 3) {
        return false;
    }
    let Some(tilde) = base.rfind('~') else {
        return false;
    };
    let digits = &base[tilde + 1..];
    base.chars().count() <= 8
        && tilde > 0
        && !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
}

/// Whether `path` is `root` or inside it, on a case-insensitive Windows volume. Relative paths,
/// device paths and different drives or shares are never inside.
pub fn windows_contains(root: &WinPath, path: &WinPath) -> bool {
    let (Some(rp), Some(pp)) = (&root.prefix, &path.prefix) else {
        return false;
    };
    if matches!(rp, WinPrefix::Device) || matches!(pp, WinPrefix::Device) || rp != pp {
        return false;
    }
    path.components.len() >= root.components.len()
        && root
            .components
            .iter()
            .zip(&path.components)
            .all(|(a, b)| fold_case(a) == fold_case(b))
}

/// Checks a Windows path against roots: `Ok` when inside one, else why not.
pub fn check_windows_path(roots: &[WinPath], path: &str) -> Result<WinPath, String> {
    let parsed = parse_windows_path(path);
    match &parsed.prefix {
        None => return Err(format!("'{path}' is not absolute")),
        Some(WinPrefix::Device) => return Err(format!("'{path}' names a device, not a file")),
        Some(_) => {}
    }
    if let Some(c) = parsed.components.iter().find(|c| is_short_name(c)) {
        return Err(format!(
            "'{path}' contains the 8.3 short name '{c}', which cannot be compared safely; use the long name"
        ));
    }
    if parsed.components.iter().any(|c| c.contains(':')) {
        return Err(format!("'{path}' names an alternate data stream"));
    }
    if roots.iter().any(|r| windows_contains(r, &parsed)) {
        Ok(parsed)
    } else {
        Err(format!("'{path}' is outside the workspace"))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn roots() -> Vec<WinPath> {
        vec![
            parse_windows_path(r"C:\Users\Ann\project"),
            parse_windows_path(r"\\fileserver\team\shared"),
        ]
    }

    #[test]
    fn drive_letters_and_separators_are_normalized() {
        assert_eq!(
            parse_windows_path("c:/Users//Ann\\.\\project\\"),
            WinPath {
                prefix: Some(WinPrefix::Drive('C')),
                components: vec!["Users".into(), "Ann".into(), "project".into()]
            }
        );
    }

    #[test]
    fn containment_folds_case_and_applies_dot_dot() {
        let r = roots();
        assert!(check_windows_path(&r, r"c:\users\ann\PROJECT\src\main.rs").is_ok());
        assert!(check_windows_path(&r, r"C:\Users\Ann\project\..\project-evil\x").is_err());
        assert!(check_windows_path(&r, r"C:\Users\Ann\project\..\..\Ann\project\x").is_ok());
        assert!(check_windows_path(&r, r"D:\Users\Ann\project\x").is_err());
        assert!(check_windows_path(&r, r"C:\Users\Ann\projectile\x").is_err());
    }

    #[test]
    fn unc_and_verbatim_prefixes_are_understood() {
        let r = roots();
        assert!(check_windows_path(&r, r"\\FileServer\Team\shared\notes.md").is_ok());
        assert!(check_windows_path(&r, r"\\fileserver\other\shared\notes.md").is_err());
        assert!(check_windows_path(&r, r"\\?\UNC\fileserver\team\shared\a").is_ok());
        assert!(check_windows_path(&r, r"\\?\C:\Users\Ann\project\a").is_ok());
        assert!(check_windows_path(&r, r"\\.\PhysicalDrive0").is_err());
        assert!(check_windows_path(&r, r"\\?\GLOBALROOT\Device\HarddiskVolume1\x").is_err());
    }

    #[test]
    fn short_names_streams_and_relative_paths_are_refused() {
        let r = roots();
        assert!(is_short_name("PROGRA~1"));
        assert!(is_short_name("DOCUM~12.TXT"));
        assert!(!is_short_name("DOCUMENT~12.TXT"));
        assert!(!is_short_name("notes~.md"));
        assert!(!is_short_name("backup~1.tar.gz"));
        let err = check_windows_path(&r, r"C:\Users\Ann\PROJEC~1\x").unwrap_err();
        assert!(err.contains("8.3"), "{err}");
        assert!(check_windows_path(&r, r"C:\Users\Ann\project\a.txt:secret").is_err());
        assert!(check_windows_path(&r, r"project\a.txt").is_err());
    }

    #[test]
    fn trailing_dots_and_spaces_do_not_hide_a_name() {
        assert_eq!(
            parse_windows_path(r"C:\x\secret.txt. ").components,
            vec!["x".to_string(), "secret.txt".to_string()]
        );
    }
}
