//! The seatbelt backend (macOS): `sandbox-exec -p PROFILE` with a generated deny-by-default
//! Seatbelt (SBPL) profile.

use super::Sandbox;
#[cfg(target_os = "macos")]
use super::{ProbeError, run_probe};
use std::path::Path;

pub(super) const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

#[cfg(target_os = "macos")]
pub(super) fn probe_seatbelt() -> Result<(), String> {
    run_probe(
        SANDBOX_EXEC,
        &["-p", "(version 1)(allow default)", "/usr/bin/true"],
    )
    .map(|_| ())
    .map_err(|e| match e {
        ProbeError::Missing => format!("'{SANDBOX_EXEC}' is missing"),
        ProbeError::Failed(why) => format!("the macOS system sandbox does not work: {why}"),
    })
}

#[cfg(not(target_os = "macos"))]
pub(super) fn probe_seatbelt() -> Result<(), String> {
    Err("the system sandbox profile (sandbox-exec) exists only on macOS".into())
}

impl Sandbox {
    /// The Seatbelt (SBPL) profile of `sandbox-exec -p` (pure): deny by default; processes may
    /// run, fork and signal each other; the whole file system may be read; writes only into the
    /// workspace, the persistence and shared directories and the usual devices; Mach service
    /// look-ups only for [`SEATBELT_MACH_SERVICES`] (and [`SEATBELT_NETWORK_MACH_SERVICES`] with
    /// the network), [`SEATBELT_DENIED_MACH_SERVICES`], LaunchServices opens, Apple Events and
    /// launchd job creation denied explicitly; the network is denied unless allowed. Paths are
    /// written as SBPL string literals; a path with a control character other than tab, newline
    /// or carriage return is an error.
    pub fn seatbelt_profile(&self) -> Result<String, String> {
        let mut p = String::from(
            "(version 1)\n\
             (deny default)\n\
             (allow process-exec)\n\
             (allow process-fork)\n\
             (allow signal (target same-sandbox))\n\
             (allow sysctl-read)\n\
             (allow ipc-posix-shm)\n\
             (allow file-read*)\n\
             (allow file-ioctl (regex #\"^/dev/tty\"))\n",
        );
        p.push_str(&mach_lookup_rules(SEATBELT_MACH_SERVICES)?);
        if self.network {
            p.push_str(&mach_lookup_rules(SEATBELT_NETWORK_MACH_SERVICES)?);
        }
        // Later rules win in SBPL: these stay denied whatever an allow above matches. Asking
        // LaunchServices to open a file, an application or a URL, sending Apple Events, and
        // submitting launchd jobs would each run code or fetch URLs outside this sandbox.
        p.push_str("(deny mach-lookup\n");
        for name in SEATBELT_DENIED_MACH_SERVICES {
            p.push_str(&format!("    (global-name {})\n", sbpl_string(name)?));
        }
        p.push_str("    (global-name-regex #\"^com\\.apple\\.lsd\\.\"))\n");
        p.push_str("(deny lsopen)\n(deny appleevent-send)\n(deny job-creation)\n");
        p.push_str("(allow file-write*\n");
        for dir in [&self.workspace, &self.persistence, &self.shared] {
            let path = dir
                .to_str()
                .ok_or_else(|| format!("the path '{}' is not valid UTF-8", dir.display()))?;
            p.push_str(&format!("    (subpath {})\n", sbpl_string(path)?));
        }
        for dev in [
            "/dev/null",
            "/dev/zero",
            "/dev/stdout",
            "/dev/stderr",
            "/dev/dtracehelper",
        ] {
            p.push_str(&format!("    (literal {})\n", sbpl_string(dev)?));
        }
        p.push_str("    (regex #\"^/dev/tty\")\n    (regex #\"^/dev/fd/\"))\n");
        // Suzent's own state: neither read nor written (later rules win), except the chat's
        // roots that lie inside it.
        let (hidden, nested) = self.hidden_and_nested();
        let subpaths = |dirs: &[&std::path::PathBuf]| -> Result<String, String> {
            let mut out = Vec::new();
            for dir in dirs {
                let path = dir
                    .to_str()
                    .ok_or_else(|| format!("the path '{}' is not valid UTF-8", dir.display()))?;
                out.push(format!("    (subpath {})", sbpl_string(path)?));
            }
            Ok(out.join("\n"))
        };
        if !hidden.is_empty() {
            p.push_str(&format!(
                "(deny file-read* file-write*\n{})\n",
                subpaths(&hidden)?
            ));
            if !nested.is_empty() {
                p.push_str(&format!(
                    "(allow file-read* file-write*\n{})\n",
                    subpaths(&nested)?
                ));
            }
        }
        if self.network {
            p.push_str("(allow network*)\n");
        } else {
            p.push_str("(deny network*)\n");
        }
        Ok(p)
    }
}

/// The system services (Mach `global-name`s) a sandboxed shell may look up whatever the network
/// setting: user and group look-ups (`id`, `ls -l`, `~user`), the per-user temporary and cache
/// directories, change notifications, the old system log, and power assertions (`caffeinate`).
/// Modelled on the service lists of the Chromium and Codex CLI base Seatbelt policies. Any other
/// service is denied, so sandboxed code cannot ask a daemon to act for it outside the sandbox.
/// Left out on purpose: `com.apple.cfprefsd.*` (the preferences daemon writes the user's
/// preference files outside the sandbox; tools reading defaults fall back to built-in values)
/// and `com.apple.SecurityServer` (the keychain). Unverified on a Mac: whether the `xcrun` shims
/// (`/usr/bin/git`, `/usr/bin/python3`) need either.
pub const SEATBELT_MACH_SERVICES: &[&str] = &[
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.bsd.dirhelper",
    "com.apple.system.notification_center",
    "com.apple.system.logger",
    "com.apple.PowerManagement.control",
];

/// The system services a sandboxed shell may also look up when the network is allowed: name
/// resolution (`com.apple.dnssd.service` is mDNSResponder, the DNS resolver of macOS), the
/// network configuration, and certificate trust evaluation for TLS. Without the network these
/// stay denied, because a DNS query sent through mDNSResponder leaves the machine even when
/// the process itself may not open a socket.
pub const SEATBELT_NETWORK_MACH_SERVICES: &[&str] = &[
    "com.apple.dnssd.service",
    "com.apple.SystemConfiguration.DNSConfiguration",
    "com.apple.SystemConfiguration.configd",
    "com.apple.networkd",
    "com.apple.trustd.agent",
    "com.apple.ocspd",
];

/// Services that are denied explicitly (after every allow, so no allow can reopen them):
/// LaunchServices (`open`, `open -a Terminal x.command`, `open https://…`), launchd's
/// ServiceManagement job submission, and the window server. The `com.apple.lsd.*` services are
/// denied by a pattern in the profile.
pub const SEATBELT_DENIED_MACH_SERVICES: &[&str] = &[
    "com.apple.coreservices.launchservicesd",
    "com.apple.CoreServices.coreservicesd",
    "com.apple.coreservices.quarantine-resolver",
    "com.apple.xpc.smd",
    "com.apple.windowserver.active",
];

/// One `(allow mach-lookup …)` rule for `names`, each as a `global-name` string literal.
fn mach_lookup_rules(names: &[&str]) -> Result<String, String> {
    let mut rule = String::from("(allow mach-lookup\n");
    for name in names {
        rule.push_str(&format!("    (global-name {})\n", sbpl_string(name)?));
    }
    rule.pop();
    rule.push_str(")\n");
    Ok(rule)
}

/// `text` as an SBPL string literal: in double quotes, backslash and double quote escaped, tab,
/// newline and carriage return written as `\t`, `\n`, `\r`. Other control characters are an
/// error (the profile language has no portable escape for them).
pub fn sbpl_string(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                return Err(format!(
                    "'{}' contains the control character U+{:04X}",
                    text.escape_debug(),
                    u32::from(c)
                ));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

/// The arguments of `sandbox-exec` that run `script` under `profile` with `TMPDIR` set.
pub(super) fn seatbelt_args(profile: &str, tmp: &Path, script: &str) -> Vec<String> {
    vec![
        "-p".into(),
        profile.into(),
        "/usr/bin/env".into(),
        format!("TMPDIR={}", tmp.display()),
        "bash".into(),
        "-c".into(),
        script.into(),
    ]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::tests::sandbox;
    use super::*;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    #[test]
    fn seatbelt_denies_suzent_state_but_keeps_the_nested_roots() {
        let mut sb = sandbox(false);
        sb.persistence = "/h/data/chats/c".into();
        sb.hidden = vec!["/h/config".into(), "/h/data".into()];
        let profile = sb.seatbelt_profile().unwrap();
        assert!(
            profile.contains(
                "(deny file-read* file-write*\n    (subpath \"/h/config\")\n    (subpath \"/h/data\"))\n(allow file-read* file-write*\n    (subpath \"/h/data/chats/c\"))\n"
            ),
            "{profile}"
        );
    }

    #[test]
    fn the_seatbelt_profile_denies_by_default_and_writes_only_where_allowed() {
        let profile = sandbox(false).seatbelt_profile().unwrap();
        let expected = "(version 1)\n\
            (deny default)\n\
            (allow process-exec)\n\
            (allow process-fork)\n\
            (allow signal (target same-sandbox))\n\
            (allow sysctl-read)\n\
            (allow ipc-posix-shm)\n\
            (allow file-read*)\n\
            (allow file-ioctl (regex #\"^/dev/tty\"))\n\
            (allow mach-lookup\n    \
            (global-name \"com.apple.system.opendirectoryd.libinfo\")\n    \
            (global-name \"com.apple.system.opendirectoryd.membership\")\n    \
            (global-name \"com.apple.bsd.dirhelper\")\n    \
            (global-name \"com.apple.system.notification_center\")\n    \
            (global-name \"com.apple.system.logger\")\n    \
            (global-name \"com.apple.PowerManagement.control\"))\n\
            (deny mach-lookup\n    \
            (global-name \"com.apple.coreservices.launchservicesd\")\n    \
            (global-name \"com.apple.CoreServices.coreservicesd\")\n    \
            (global-name \"com.apple.coreservices.quarantine-resolver\")\n    \
            (global-name \"com.apple.xpc.smd\")\n    \
            (global-name \"com.apple.windowserver.active\")\n    \
            (global-name-regex #\"^com\\.apple\\.lsd\\.\"))\n\
            (deny lsopen)\n\
            (deny appleevent-send)\n\
            (deny job-creation)\n\
            (allow file-write*\n    (subpath \"/w\")\n    (subpath \"/p\")\n    (subpath \"/s\")\n    \
            (literal \"/dev/null\")\n    (literal \"/dev/zero\")\n    (literal \"/dev/stdout\")\n    \
            (literal \"/dev/stderr\")\n    (literal \"/dev/dtracehelper\")\n    \
            (regex #\"^/dev/tty\")\n    (regex #\"^/dev/fd/\"))\n\
            (deny network*)\n";
        assert_eq!(profile, expected);
        let open = sandbox(true).seatbelt_profile().unwrap();
        assert!(open.ends_with("(allow network*)\n"), "{open}");
        assert!(!open.contains("(deny network*)"), "{open}");
    }

    #[test]
    fn seatbelt_looks_up_only_named_services_and_never_launch_services() {
        for network in [false, true] {
            let profile = sandbox(network).seatbelt_profile().unwrap();
            // No rule allows every service: each allow names its services.
            assert!(!profile.contains("(allow mach-lookup)"), "{profile}");
            assert!(!profile.contains("(allow mach*"), "{profile}");
            assert!(!profile.contains("(allow lsopen"), "{profile}");
            assert!(!profile.contains("(allow job-creation"), "{profile}");
            assert!(!profile.contains("(allow appleevent-send"), "{profile}");
            // The denials come after every mach-lookup allow (the last matching rule wins).
            let deny = profile.find("(deny mach-lookup").unwrap();
            assert!(
                profile.rfind("(allow mach-lookup").unwrap() < deny,
                "{profile}"
            );
            for denied in [
                "(deny lsopen)",
                "(deny appleevent-send)",
                "(deny job-creation)",
            ] {
                assert!(profile.contains(denied), "{denied} missing: {profile}");
            }
            assert!(profile.contains("(global-name-regex #\"^com\\.apple\\.lsd\\.\")"));
            for service in SEATBELT_MACH_SERVICES {
                assert!(profile.contains(&format!("(global-name \"{service}\")")));
            }
        }
        // Name resolution goes through mDNSResponder, outside the process: only with the network.
        let closed = sandbox(false).seatbelt_profile().unwrap();
        for service in SEATBELT_NETWORK_MACH_SERVICES {
            assert!(
                !closed.contains(service),
                "{service} allowed offline: {closed}"
            );
        }
        assert!(!closed.contains("dnssd"), "{closed}");
        let open = sandbox(true).seatbelt_profile().unwrap();
        assert!(
            open.contains("(global-name \"com.apple.dnssd.service\")"),
            "{open}"
        );
        assert!(
            open.contains("(global-name \"com.apple.SystemConfiguration.configd\")"),
            "{open}"
        );
    }

    #[test]
    fn seatbelt_paths_are_escaped_as_string_literals() {
        let mut sb = sandbox(false);
        sb.workspace = PathBuf::from("/Users/me/my \"quoted\" dir\\x");
        sb.persistence = PathBuf::from("/tmp/a)(allow default)(b");
        sb.shared = PathBuf::from("/tmp/new\nline");
        let profile = sb.seatbelt_profile().unwrap();
        assert!(
            profile.contains("(subpath \"/Users/me/my \\\"quoted\\\" dir\\\\x\")"),
            "{profile}"
        );
        // Parentheses stay inside the literal: they cannot open a new rule.
        assert!(
            profile.contains("(subpath \"/tmp/a)(allow default)(b\")"),
            "{profile}"
        );
        assert!(
            profile.contains("(subpath \"/tmp/new\\nline\")"),
            "{profile}"
        );
        assert_eq!(sbpl_string("a\"b\\c").unwrap(), "\"a\\\"b\\\\c\"");
        let err = sbpl_string("/tmp/bell\u{7}").unwrap_err();
        assert!(err.contains("U+0007"), "{err}");
        sb.shared = PathBuf::from("/tmp/bell\u{7}");
        assert!(sb.seatbelt_profile().is_err());
    }

    #[test]
    fn seatbelt_runs_bash_under_the_profile_with_tmpdir_set() {
        let args = seatbelt_args("(version 1)", Path::new("/p/.tmp"), "ls");
        assert_eq!(
            args,
            [
                "-p",
                "(version 1)",
                "/usr/bin/env",
                "TMPDIR=/p/.tmp",
                "bash",
                "-c",
                "ls"
            ]
        );
    }
}
