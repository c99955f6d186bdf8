//! Regenerates `ui/src/bindings.ts` from the Rust commands and types:
//! `cargo run -p suzent-desktop --example gen-bindings`.

fn main() -> std::process::ExitCode {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(suzent_desktop::BINDINGS_PATH);
    match suzent_desktop::export_bindings(&path) {
        Ok(()) => {
            println!("wrote {}", path.display());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen-bindings: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
