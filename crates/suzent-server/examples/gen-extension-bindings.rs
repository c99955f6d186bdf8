//! Writes the extension's TypeScript bridge types (`extensions/browser/src/bindings.ts`) from
//! the Rust protocol types. Run from the repository root:
//! `cargo run -p suzent-server --example gen-extension-bindings`.

fn main() -> std::process::ExitCode {
    let path = std::path::Path::new(suzent_server::protocol::BINDINGS_PATH);
    let text = match suzent_server::protocol::typescript_bindings() {
        Ok(text) => text,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match std::fs::write(path, text) {
        Ok(()) => {
            println!("wrote {}", path.display());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cannot write {}: {e}", path.display());
            std::process::ExitCode::FAILURE
        }
    }
}
