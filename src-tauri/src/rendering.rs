//! How the webview renders on Linux when the machine has no GPU.
//!
//! WebKitGTK (2.46 and later) paints page content with Skia on the GPU. Without a GPU render node
//! (`/dev/dri/renderD*`: VMs, remote desktops, Xvfb) that "GPU" is Mesa's llvmpipe, and its
//! tiles cost the web process about 45 MiB at idle (290–305 → 251 MiB with the app's empty chat,
//! release build under Xvfb). There the app asks WebKit to paint with Skia on the CPU
//! (`WEBKIT_SKIA_ENABLE_CPU_RENDERING=1`) before GTK starts, unless the user set that variable
//! either way. Compositing stays on: turning it off (`WEBKIT_DISABLE_COMPOSITING_MODE`) saved
//! more, but then WebKitGTK under Xvfb stopped running rendering updates while the page was idle
//! (requestAnimationFrame and WebDriver snapshots never returned). Machines with a render node
//! are left as they are.

use std::path::Path;

/// The variable WebKitGTK reads at start to paint page content with Skia on the CPU.
pub const CPU_RENDERING: &str = "WEBKIT_SKIA_ENABLE_CPU_RENDERING";

/// Whether `dri` (normally `/dev/dri`) holds a GPU render node (`renderD128`, ...).
pub fn has_render_node(dri: &Path) -> bool {
    std::fs::read_dir(dri).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// The environment variables to set before the webview starts: [`CPU_RENDERING`] when the
/// machine has no render node under `dri` and the user did not set it (`is_set`). Empty on
/// other systems.
pub fn webview_env(dri: &Path, is_set: impl Fn(&str) -> bool) -> Vec<(&'static str, &'static str)> {
    if cfg!(target_os = "linux") && !is_set(CPU_RENDERING) && !has_render_node(dri) {
        vec![(CPU_RENDERING, "1")]
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
    fn without_a_render_node_pages_are_painted_on_the_cpu() {
        let dri = tempfile::tempdir().unwrap();
        std::fs::write(dri.path().join("card0"), "").unwrap();
        assert_eq!(
            webview_env(dri.path(), |_| false),
            vec![(CPU_RENDERING, "1")]
        );
        assert_eq!(
            webview_env(&dri.path().join("missing"), |_| false),
            vec![(CPU_RENDERING, "1")]
        );
    }

    #[test]
    fn a_render_node_or_the_users_own_setting_is_left_alone() {
        let dri = tempfile::tempdir().unwrap();
        std::fs::write(dri.path().join("renderD128"), "").unwrap();
        assert_eq!(webview_env(dri.path(), |_| false), Vec::new());
        let none = tempfile::tempdir().unwrap();
        assert_eq!(webview_env(none.path(), |v| v == CPU_RENDERING), Vec::new());
    }
}
