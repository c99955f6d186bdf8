//! How the webview renders on Linux when the machine has no GPU.
//!
//! WebKitGTK composites pages with OpenGL. Without a GPU render node (`/dev/dri/renderD*`: VMs,
//! remote desktops, Xvfb) Mesa does that in software (llvmpipe), which costs the web process about
//! 120 MiB at idle here (309 → 189 MiB, measured with the app's empty chat) and CPU on every
//! frame, for nothing a chat window needs. There the app turns accelerated compositing off
//! (`WEBKIT_DISABLE_COMPOSITING_MODE=1`) before GTK starts, unless the user set that variable
//! either way. Machines with a render node are left as they are.

use std::path::Path;

/// The variable WebKitGTK reads at start to render without accelerated compositing.
pub const DISABLE_COMPOSITING: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// Whether `dri` (normally `/dev/dri`) holds a GPU render node (`renderD128`, ...).
pub fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// The environment variables to set before the webview starts: [`DISABLE_COMPOSITING`] when the
/// machine has no render node under `dri` and the user did not set it (`is_set`). Empty on
/// other systems.
pub fn webview_env(dri: &Path, is_set: impl Fn(&str) -> bool) -> Vec<(&'static str, &'static str)> {
    if cfg!(target_os = "linux") && !is_set(DISABLE_COMPOSITING) && !has_render_node(dri) {
        vec![(DISABLE_COMPOSITING, "1")]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn without_a_render_node_compositing_is_turned_off() {
        let dri = tempfile::tempdir().unwrap();
        std::fs::write(dri.path().join("card0"), "").unwrap();
        assert_eq!(
            webview_env(dri.path(), |_| false),
            vec![(DISABLE_COMPOSITING, "1")]
        );
        assert_eq!(
            webview_env(&dri.path().join("missing"), |_| false),
            vec![(DISABLE_COMPOSITING, "1")]
        );
    }

    #[test]
    fn a_render_node_or_the_users_own_setting_is_left_alone() {
        let dri = tempfile::tempdir().unwrap();
        std::fs::write(dri.path().join("renderD128"), "").unwrap();
        assert_eq!(webview_env(dri.path(), |_| false), Vec::new());
        let none = tempfile::tempdir().unwrap();
        assert_eq!(
            webview_env(none.path(), |v| v == DISABLE_COMPOSITING),
            Vec::new()
        );
    }
}
