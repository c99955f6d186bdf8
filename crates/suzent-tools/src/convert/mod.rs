//! Document conversion for `read_file` and `webpage_fetch` (seed 000 "read_file": documents
//! converted to Markdown, images through OCR): PDF text per page (pdf-extract), DOCX paragraphs,
//! headings, lists and tables, PPTX slide text and notes (zip + quick-xml over the Office Open
//! XML parts), XLSX sheets as Markdown tables (calamine), images through the Tesseract CLI.

mod ooxml;

use crate::tool::{ReadStamp, ToolError};
use std::path::Path;

/// Converts a document for `read_file`: its text and the stamp of the file read. Errors name
/// the file and say what went wrong.
pub fn read_document(
    path: &Path,
    kind: DocKind,
    shown: &str,
) -> Result<(String, ReadStamp), ToolError> {
    let meta = std::fs::metadata(path).map_err(|e| crate::builtin::io_failed("read", shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "{shown} is a directory, not a file; use glob_search to list its files"
        )));
    }
    let text = convert_file(path, kind)
        .map_err(|e| ToolError::Failed(format!("cannot read {shown} ({}): {e}", kind.label())))?;
    Ok((text, ReadStamp::from_metadata(&meta)))
}

/// A document kind the converter handles, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// `.pdf`
    Pdf,
    /// `.docx`
    Docx,
    /// `.xlsx`, `.xlsm`, `.xls`, `.ods`
    Spreadsheet,
    /// `.pptx`
    Pptx,
    /// `.png`, `.jpg`, `.jpeg`, `.tif`, `.tiff`, `.bmp`, `.gif`, `.webp`
    Image,
}

impl DocKind {
    /// The kind of a file by its extension (case-insensitive); `None` for text and unknown files.
    pub fn of(path: &Path) -> Option<DocKind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "pdf" => DocKind::Pdf,
            "docx" => DocKind::Docx,
            "xlsx" | "xlsm" | "xls" | "ods" => DocKind::Spreadsheet,
            "pptx" => DocKind::Pptx,
            "png" | "jpg" | "jpeg" | "tif" | "tiff" | "bmp" | "gif" | "webp" => DocKind::Image,
            _ => return None,
        })
    }

    /// A short name for messages.
    pub fn label(self) -> &'static str {
        match self {
            DocKind::Pdf => "PDF",
            DocKind::Docx => "Word document",
            DocKind::Spreadsheet => "spreadsheet",
            DocKind::Pptx => "PowerPoint presentation",
            DocKind::Image => "image (OCR)",
        }
    }
}

/// Largest document the converter opens.
pub const MAX_DOCUMENT_BYTES: u64 = 100 * 1024 * 1024;

/// Converts a document file to Markdown text. Errors are messages for the model.
pub fn convert_file(path: &Path, kind: DocKind) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > MAX_DOCUMENT_BYTES {
        return Err(format!(
            "the {} is too large to convert ({} bytes; the limit is {MAX_DOCUMENT_BYTES})",
            kind.label(),
            meta.len()
        ));
    }
    match kind {
        DocKind::Image => ocr(path),
        _ => {
            let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
            convert_bytes(&bytes, kind)
        }
    }
}

/// Converts document bytes (not images) to Markdown text.
pub fn convert_bytes(bytes: &[u8], kind: DocKind) -> Result<String, String> {
    match kind {
        DocKind::Pdf => pdf(bytes),
        DocKind::Docx => ooxml::docx(bytes),
        DocKind::Pptx => ooxml::pptx(bytes),
        DocKind::Spreadsheet => spreadsheet(bytes),
        DocKind::Image => Err("images are converted from files (OCR)".into()),
    }
}

/// PDF text, one `## Page N` section per page.
pub fn pdf(bytes: &[u8]) -> Result<String, String> {
    // pdf-extract panics on some malformed files instead of failing: contain it.
    let pages = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes))
        .map_err(|_| "the PDF could not be parsed (malformed file)".to_string())?
        .map_err(|e| format!("the PDF could not be read: {e}"))?;
    let mut out = String::new();
    for (i, page) in pages.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("## Page {}\n\n", i + 1));
        let text = page.trim();
        if text.is_empty() {
            out.push_str("(no text on this page; it may be a scanned image)\n");
        } else {
            for line in text.lines() {
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
    }
    if pages.is_empty() {
        return Err("the PDF has no pages".into());
    }
    Ok(out)
}

/// Every sheet as a `## Sheet` section with a Markdown table (first row as the header).
pub fn spreadsheet(bytes: &[u8]) -> Result<String, String> {
    use calamine::{Data, Reader, open_workbook_auto_from_rs};
    let mut book = open_workbook_auto_from_rs(std::io::Cursor::new(bytes.to_vec()))
        .map_err(|e| format!("the spreadsheet could not be read: {e}"))?;
    let mut out = String::new();
    for name in book.sheet_names() {
        let range = book
            .worksheet_range(&name)
            .map_err(|e| format!("sheet '{name}' could not be read: {e}"))?;
        out.push_str(&format!("## Sheet: {name}\n\n"));
        let cell = |c: &Data| -> String {
            let text = match c {
                Data::Empty => String::new(),
                Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
                other => other.to_string(),
            };
            text.replace('|', "\\|").replace('\n', " ")
        };
        let mut rows = range.rows();
        match rows.next() {
            None => out.push_str("(empty sheet)\n"),
            Some(header) => {
                let width = header.len();
                let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
                out.push_str(&line(header.iter().map(cell).collect()));
                out.push_str(&line(vec!["---".to_string(); width]));
                for row in rows {
                    out.push_str(&line(row.iter().map(cell).collect()));
                }
            }
        }
        out.push('\n');
    }
    Ok(out.trim_end().to_string() + "\n")
}

/// Text of an image through the `tesseract` command (English).
pub fn ocr(path: &Path) -> Result<String, String> {
    let output = std::process::Command::new("tesseract")
        .arg(path)
        .arg("stdout")
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                "reading text from images needs Tesseract OCR, which is not installed (Debian/Ubuntu: \
                 apt install tesseract-ocr; macOS: brew install tesseract; Windows: the UB Mannheim \
                 installer), then try again"
                    .to_string()
            } else {
                format!("tesseract could not be started: {e}")
            }
        })?;
    if !output.status.success() {
        return Err(format!(
            "tesseract failed on the image: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if text.is_empty() {
        return Ok("(OCR found no text in this image)\n".into());
    }
    Ok(format!("{text}\n"))
}
