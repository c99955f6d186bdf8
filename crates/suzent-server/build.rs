//! Packs the built browser extension (`extensions/browser/dist`, made by `npm --prefix
//! extensions/browser run build`) into a ZIP that the crate embeds, so the app and the CLI can
//! hand it to the user. Without a build, the crate embeds an empty file and says so at run time
//! (`extension_zip()` fails with the command to run); `scripts/test` and `scripts/run` build
//! the extension first.

use std::io::Write;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dist = manifest_dir.join("../../extensions/browser/dist");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default())
        .join("suzent-browser-extension.zip");
    println!("cargo:rerun-if-changed={}", dist.display());
    let mut files = Vec::new();
    if dist.join("manifest.json").is_file() {
        collect(&dist, &dist, &mut files);
        println!(
            "cargo:rerun-if-changed={}",
            dist.join("manifest.json").display()
        );
        for (_, path) in &files {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    } else {
        println!(
            "cargo:warning=the browser extension is not built ({} is missing): run `npm --prefix extensions/browser ci && npm --prefix extensions/browser run build`",
            dist.join("manifest.json").display()
        );
    }
    files.sort();
    let result = (|| -> std::io::Result<()> {
        let file = std::fs::File::create(&out)?;
        if files.is_empty() {
            return Ok(());
        }
        let mut zip = zip::ZipWriter::new(file);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            // Fixed timestamps: the same build gives the same bytes.
            .last_modified_time(zip::DateTime::default())
            .unix_permissions(0o644);
        for (name, path) in &files {
            zip.start_file(name.as_str(), options)?;
            zip.write_all(&std::fs::read(path)?)?;
        }
        zip.finish()?;
        Ok(())
    })();
    if let Err(e) = result {
        panic!(
            "cannot pack the browser extension into {}: {e}",
            out.display()
        );
    }
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, files);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            files.push((name, path));
        }
    }
}
