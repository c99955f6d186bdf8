//! The checked-in TypeScript bindings match the Rust commands and types.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

#[test]
fn bindings_are_up_to_date() {
    let checked_in = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(suzent_desktop::BINDINGS_PATH);
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("bindings.ts");
    suzent_desktop::export_bindings(&fresh).unwrap();
    let fresh = std::fs::read_to_string(&fresh).unwrap();
    let current = std::fs::read_to_string(&checked_in).unwrap_or_default();
    if current != fresh {
        let first = current
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| current.lines().count().min(fresh.lines().count()));
        panic!(
            "{} is out of date with the Rust commands and types (first difference at line {}: \
             checked in {:?}, generated {:?}): regenerate it with \
             `cargo run -p suzent-desktop --example gen-bindings` and commit the result",
            checked_in.display(),
            first + 1,
            current.lines().nth(first).unwrap_or("<end of file>"),
            fresh.lines().nth(first).unwrap_or("<end of file>"),
        );
    }
}
