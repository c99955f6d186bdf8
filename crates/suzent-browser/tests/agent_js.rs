//! The in-page agent is plain JavaScript checked by TypeScript (`// @ts-check`, JSDoc types,
//! strict), with the UI's pinned compiler (`ui/node_modules`, installed by `scripts/test`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

#[test]
fn the_agent_type_checks_with_tsc_in_strict_mode() -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tsc = root.join("ui/node_modules/typescript/bin/tsc");
    anyhow::ensure!(
        tsc.is_file(),
        "{} is missing: run `npm --prefix ui ci` (scripts/test does)",
        tsc.display()
    );
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("js/agent.js");
    let out = std::process::Command::new("node")
        .arg(&tsc)
        .args([
            "--noEmit",
            "--allowJs",
            "--checkJs",
            "--strict",
            "--target",
            "es2022",
        ])
        .args(["--lib", "es2022,dom"])
        .arg(&agent)
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "tsc found errors:\n{text}");
    Ok(())
}
