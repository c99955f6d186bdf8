//! read_file on real documents generated here with Python libraries (python-docx, openpyxl,
//! python-pptx, reportlab, Pillow; installed by .ci/run) and an image read through Tesseract.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Env;
use pretty_assertions::assert_eq;
use serde_json::json;

/// Runs a Python script with `OUT` bound to the output path; returns the path relative to the
/// workspace.
fn make(env: &Env, name: &str, script: &str) -> String {
    let out = env.ws().join(name);
    let program = format!("OUT = {:?}\n{script}", out.display().to_string());
    let result = std::process::Command::new("python3")
        .args(["-c", &program])
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "generating {name} failed (are the Python libraries from .ci/run installed?): {}",
        String::from_utf8_lossy(&result.stderr)
    );
    name.to_string()
}

async fn read(env: &Env, path: &str, extra: serde_json::Value) -> String {
    let mut args = json!({"file_path": path});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    env.call("read_file", args).await.unwrap()
}

/// The text of numbered lines (`     3\tfoo` -> `foo`).
fn body(out: &str) -> String {
    out.lines()
        .skip(1)
        .filter_map(|l| l.split_once('\t').map(|(_, t)| t))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_multi_page_pdf_reads_page_by_page_and_offset_applies_to_the_converted_text() {
    let env = Env::new();
    let file = make(
        &env,
        "report.pdf",
        "from reportlab.pdfgen import canvas\n\
         c = canvas.Canvas(OUT)\n\
         for i, line in enumerate(['Introduction to the harbour survey', 'Tide tables for March', 'Conclusions and next steps']):\n\
         \x20   c.drawString(72, 720, line)\n\
         \x20   c.showPage()\n\
         c.save()\n",
    );
    let out = read(&env, &file, json!({})).await;
    let text = body(&out);
    assert_eq!(
        text,
        "## Page 1\n\nIntroduction to the harbour survey\n\n## Page 2\n\nTide tables for March\n\n## Page 3\n\nConclusions and next steps"
    );
    assert!(
        out.starts_with("[lines 1-11 of 11] /workspace/report.pdf"),
        "{out}"
    );
    let window = read(&env, &file, json!({"offset": 4, "limit": 3})).await;
    assert_eq!(body(&window), "## Page 2\n\nTide tables for March");
    assert!(
        window.contains("[4 more lines; continue with offset 7]"),
        "{window}"
    );
}

#[tokio::test]
async fn a_docx_keeps_headings_lists_paragraphs_and_tables() {
    let env = Env::new();
    let file = make(
        &env,
        "minutes.docx",
        "import docx\n\
         d = docx.Document()\n\
         d.add_heading('Board minutes', 0)\n\
         d.add_heading('Attendees', level=1)\n\
         d.add_paragraph('Ana', style='List Bullet')\n\
         d.add_paragraph('Bo & Cy', style='List Bullet')\n\
         d.add_paragraph('The budget was approved.')\n\
         t = d.add_table(rows=3, cols=2)\n\
         for r, (a, b) in enumerate([('Item', 'Cost'), ('Roof', '1200'), ('Paint', '300')]):\n\
         \x20   t.cell(r, 0).text = a\n\
         \x20   t.cell(r, 1).text = b\n\
         d.save(OUT)\n",
    );
    let out = read(&env, &file, json!({})).await;
    assert_eq!(
        body(&out),
        "# Board minutes\n\n## Attendees\n\n- Ana\n\n- Bo & Cy\n\nThe budget was approved.\n\n| Item | Cost |\n| --- | --- |\n| Roof | 1200 |\n| Paint | 300 |"
    );
}

#[tokio::test]
async fn an_xlsx_with_two_sheets_becomes_two_markdown_tables() {
    let env = Env::new();
    let file = make(
        &env,
        "budget.xlsx",
        "import openpyxl\n\
         wb = openpyxl.Workbook()\n\
         ws = wb.active\n\
         ws.title = 'Income'\n\
         ws.append(['Month', 'Amount'])\n\
         ws.append(['Jan', 1500])\n\
         ws.append(['Feb', 1720.5])\n\
         ws2 = wb.create_sheet('Costs')\n\
         ws2.append(['Item', 'Cost'])\n\
         ws2.append(['Rent', 900])\n\
         wb.save(OUT)\n",
    );
    let out = read(&env, &file, json!({})).await;
    assert_eq!(
        body(&out),
        "## Sheet: Income\n\n| Month | Amount |\n| --- | --- |\n| Jan | 1500 |\n| Feb | 1720.5 |\n\n## Sheet: Costs\n\n| Item | Cost |\n| --- | --- |\n| Rent | 900 |"
    );
}

#[tokio::test]
async fn a_pptx_gives_each_slide_with_its_title_text_and_speaker_notes() {
    let env = Env::new();
    let file = make(
        &env,
        "deck.pptx",
        "from pptx import Presentation\n\
         p = Presentation()\n\
         s = p.slides.add_slide(p.slide_layouts[0])\n\
         s.shapes.title.text = 'Launch plan'\n\
         s.placeholders[1].text = 'Q3 rollout'\n\
         s.notes_slide.notes_text_frame.text = 'Mention the beta users'\n\
         s2 = p.slides.add_slide(p.slide_layouts[1])\n\
         s2.shapes.title.text = 'Risks'\n\
         s2.placeholders[1].text = 'Supply delays'\n\
         p.save(OUT)\n",
    );
    let out = read(&env, &file, json!({})).await;
    assert_eq!(
        body(&out),
        "## Slide 1: Launch plan\n\nQ3 rollout\n\nNotes: Mention the beta users\n\n## Slide 2: Risks\n\nSupply delays"
    );
}

#[tokio::test]
async fn a_png_of_text_is_read_through_ocr() {
    let env = Env::new();
    let file = make(
        &env,
        "sign.png",
        "from PIL import Image, ImageDraw, ImageFont\n\
         img = Image.new('RGB', (900, 160), 'white')\n\
         ImageDraw.Draw(img).text((30, 40), 'Invoice number 4471', fill='black', font=ImageFont.load_default(size=56))\n\
         img.save(OUT)\n",
    );
    let out = read(&env, &file, json!({})).await;
    assert_eq!(body(&out), "Invoice number 4471", "{out}");
}

#[tokio::test]
async fn a_broken_document_is_a_clear_error_naming_the_file() {
    let env = Env::new();
    std::fs::write(env.ws().join("fake.docx"), "not a zip").unwrap();
    let err = env
        .call("read_file", json!({"file_path": "fake.docx"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot read /workspace/fake.docx (Word document): the Word document is not a valid Office file (zip)"),
        "{err}"
    );
}
