//! DOCX and PPTX: the Office Open XML parts read with zip + quick-xml.

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use std::io::Read;

type Archive<'a> = zip::ZipArchive<std::io::Cursor<&'a [u8]>>;

fn open<'a>(bytes: &'a [u8], what: &str) -> Result<Archive<'a>, String> {
    zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("the {what} is not a valid Office file (zip): {e}"))
}

fn part(archive: &mut Archive<'_>, name: &str) -> Result<Option<String>, String> {
    let mut file = match archive.by_name(name) {
        Ok(f) => f,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(format!("cannot open {name}: {e}")),
    };
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    Ok(Some(text))
}

fn attr(e: &BytesStart<'_>, local: &str) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.local_name().as_ref() == local)
            .then(|| {
                a.normalized_value(XmlVersion::Implicit1_0)
                    .ok()
                    .map(|v| v.into_owned())
            })
            .flatten()
    })
}

/// Text of an entity or character reference (`&amp;`, `&#x41;`).
fn reference(r: &quick_xml::events::BytesRef<'_>) -> String {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        return c.to_string();
    }
    let name = r.xml10_content();
    quick_xml::escape::unescape(&format!("&{name};"))
        .map(|s| s.into_owned())
        .unwrap_or_default()
}

fn xml_err(name: &str, e: impl std::fmt::Display) -> String {
    format!("{name} is not well-formed XML: {e}")
}

#[derive(Default)]
struct Paragraph {
    text: String,
    style: Option<String>,
    numbered: bool,
    level: usize,
}

/// Markdown of a paragraph outside tables.
fn render_paragraph(p: &Paragraph) -> Option<String> {
    let text = p.text.trim();
    if text.is_empty() {
        return None;
    }
    let style = p
        .style
        .as_deref()
        .unwrap_or("")
        .to_ascii_lowercase()
        .replace(' ', "");
    if style == "title" {
        return Some(format!("# {text}"));
    }
    if let Some(level) = style
        .strip_prefix("heading")
        .and_then(|n| n.parse::<usize>().ok())
    {
        return Some(format!("{} {text}", "#".repeat((level + 1).min(6))));
    }
    let indent = "  ".repeat(p.level);
    if style.starts_with("listnumber") {
        return Some(format!("{indent}1. {text}"));
    }
    if p.numbered || style.starts_with("listbullet") || style.starts_with("listparagraph") {
        return Some(format!("{indent}- {text}"));
    }
    Some(text.to_string())
}

fn render_table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let mut cells: Vec<String> = row
            .iter()
            .map(|c| c.trim().replace('|', "\\|").replace('\n', " "))
            .collect();
        cells.resize(width, String::new());
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
        if i == 0 {
            out.push_str(&format!("| {} |\n", vec!["---"; width].join(" | ")));
        }
    }
    out
}

/// `word/document.xml` as Markdown: headings, lists, paragraphs and tables.
pub fn docx(bytes: &[u8]) -> Result<String, String> {
    let mut archive = open(bytes, "Word document")?;
    let xml = part(&mut archive, "word/document.xml")?
        .ok_or("the Word document has no word/document.xml part")?;
    let mut reader = Reader::from_str(&xml);
    let mut blocks: Vec<String> = Vec::new();
    let mut para: Option<Paragraph> = None;
    let mut in_text = false;
    // Open tables (nested tables are flattened into their cell), each: rows, current row, cell.
    let mut tables: Vec<(Vec<Vec<String>>, Vec<String>, String)> = Vec::new();
    loop {
        let event = reader
            .read_event()
            .map_err(|e| xml_err("word/document.xml", e))?;
        let is_start = matches!(event, Event::Start(_));
        match event {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                "p" => para = Some(Paragraph::default()),
                "pStyle" => {
                    if let Some(p) = para.as_mut() {
                        p.style = attr(&e, "val");
                    }
                }
                "numPr" => {
                    if let Some(p) = para.as_mut() {
                        p.numbered = true;
                    }
                }
                "ilvl" => {
                    if let Some(p) = para.as_mut() {
                        p.level = attr(&e, "val").and_then(|v| v.parse().ok()).unwrap_or(0);
                    }
                }
                "t" => in_text = is_start,
                "tab" => {
                    if let Some(p) = para.as_mut() {
                        p.text.push('\t');
                    }
                }
                "br" | "cr" => {
                    if let Some(p) = para.as_mut() {
                        p.text.push(' ');
                    }
                }
                "tbl" => tables.push((Vec::new(), Vec::new(), String::new())),
                "tr" => {
                    if let Some(t) = tables.last_mut() {
                        t.1 = Vec::new();
                    }
                }
                "tc" => {
                    if let Some(t) = tables.last_mut() {
                        t.2 = String::new();
                    }
                }
                _ => {}
            },
            Event::Text(t) if in_text => {
                if let Some(p) = para.as_mut() {
                    p.text.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) if in_text => {
                if let Some(p) = para.as_mut() {
                    p.text.push_str(&reference(&r));
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "p" => {
                    if let Some(p) = para.take() {
                        if let Some(t) = tables.last_mut() {
                            let text = p.text.trim();
                            if !text.is_empty() {
                                if !t.2.is_empty() {
                                    t.2.push(' ');
                                }
                                t.2.push_str(text);
                            }
                        } else if let Some(block) = render_paragraph(&p) {
                            blocks.push(block);
                        }
                    }
                }
                "tc" => {
                    if let Some(t) = tables.last_mut() {
                        let cell = std::mem::take(&mut t.2);
                        t.1.push(cell);
                    }
                }
                "tr" => {
                    if let Some(t) = tables.last_mut() {
                        let row = std::mem::take(&mut t.1);
                        t.0.push(row);
                    }
                }
                "tbl" => {
                    if let Some((rows, _, _)) = tables.pop() {
                        let rendered = render_table(&rows);
                        match tables.last_mut() {
                            Some(outer) => outer.2.push_str(&rendered.replace('\n', " ")),
                            None => blocks.push(rendered.trim_end().to_string()),
                        }
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(blocks.join("\n\n") + "\n")
}

/// A shape's placeholder type (`title`, `body`...; `None` for free shapes) and its paragraphs.
type Shape = (Option<String>, Vec<String>);

/// Paragraphs of the shapes in a slide or notes part, with the placeholder type of each shape.
fn shapes(xml: &str, name: &str) -> Result<Vec<Shape>, String> {
    let mut reader = Reader::from_str(xml);
    let mut out: Vec<Shape> = Vec::new();
    let mut current: Option<Shape> = None;
    let mut para: Option<String> = None;
    let mut in_text = false;
    loop {
        let event = reader.read_event().map_err(|e| xml_err(name, e))?;
        let is_start = matches!(event, Event::Start(_));
        match event {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                "sp" | "graphicFrame" => current = Some((None, Vec::new())),
                "ph" => {
                    if let Some(c) = current.as_mut() {
                        c.0 = Some(attr(&e, "type").unwrap_or_else(|| "body".into()));
                    }
                }
                "p" => para = Some(String::new()),
                "t" => in_text = is_start,
                "br" => {
                    if let Some(p) = para.as_mut() {
                        p.push(' ');
                    }
                }
                _ => {}
            },
            Event::Text(t) if in_text => {
                if let Some(p) = para.as_mut() {
                    p.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) if in_text => {
                if let Some(p) = para.as_mut() {
                    p.push_str(&reference(&r));
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "p" => {
                    if let (Some(p), Some(c)) = (para.take(), current.as_mut())
                        && !p.trim().is_empty()
                    {
                        c.1.push(p.trim().to_string());
                    }
                }
                "sp" | "graphicFrame" => {
                    if let Some(c) = current.take()
                        && !c.1.is_empty()
                    {
                        out.push(c);
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

/// Slides in order, each `## Slide N: title`, its text, then its speaker notes.
pub fn pptx(bytes: &[u8]) -> Result<String, String> {
    let mut archive = open(bytes, "presentation")?;
    let mut slides: Vec<(usize, String)> = archive
        .file_names()
        .filter_map(|n| {
            let n = n.ok()?;
            let num = n.strip_prefix("ppt/slides/slide")?.strip_suffix(".xml")?;
            Some((num.parse().ok()?, n.to_string()))
        })
        .collect();
    slides.sort();
    if slides.is_empty() {
        return Err("the presentation has no slides".into());
    }
    let mut out = String::new();
    for (index, (num, name)) in slides.iter().enumerate() {
        let xml = part(&mut archive, name)?.unwrap_or_default();
        let shapes = shapes(&xml, name)?;
        let is_title = |t: &Option<String>| matches!(t.as_deref(), Some("title" | "ctrTitle"));
        let title = shapes
            .iter()
            .find(|s| is_title(&s.0))
            .map(|s| s.1.join(" "));
        out.push_str(&format!("## Slide {}", index + 1));
        if let Some(t) = &title {
            out.push_str(&format!(": {t}"));
        }
        out.push_str("\n\n");
        for (_, paras) in shapes.iter().filter(|s| !is_title(&s.0)) {
            for p in paras {
                out.push_str(p);
                out.push('\n');
            }
        }
        let rels = part(
            &mut archive,
            &format!("ppt/slides/_rels/slide{num}.xml.rels"),
        )?;
        if let Some(target) = rels.as_deref().and_then(notes_target) {
            let notes_name = format!("ppt/notesSlides/{target}");
            if let Some(notes_xml) = part(&mut archive, &notes_name)? {
                let notes: Vec<String> = shapes_of_notes(&notes_xml, &notes_name)?;
                if !notes.is_empty() {
                    out.push_str(&format!("\nNotes: {}\n", notes.join(" ")));
                }
            }
        }
        out.push('\n');
    }
    Ok(out.trim_end().to_string() + "\n")
}

fn shapes_of_notes(xml: &str, name: &str) -> Result<Vec<String>, String> {
    Ok(shapes(xml, name)?
        .into_iter()
        .filter(|(ph, _)| ph.as_deref() == Some("body"))
        .flat_map(|(_, p)| p)
        .collect())
}

/// The notes part named in a slide's relationships (`notesSlide3.xml`).
fn notes_target(rels: &str) -> Option<String> {
    let mut reader = Reader::from_str(rels);
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "Relationship" => {
                let kind = attr(&e, "Type").unwrap_or_default();
                if kind.ends_with("/notesSlide") {
                    let target = attr(&e, "Target")?;
                    return target.rsplit('/').next().map(str::to_string);
                }
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}
