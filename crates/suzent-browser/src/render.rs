//! Snapshot text: frames nested where their iframes are, refs qualified by snapshot and frame,
//! and pages under a character budget.

use crate::agent::{FrameSnapshot, SnapNode};

/// A ref to an element of a snapshot: `s{snapshot}e{index}` in the top frame,
/// `s{snapshot}f{frame}e{index}` in frame `frame` of the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElementRef {
    /// The snapshot number.
    pub snapshot: u64,
    /// The frame number in that snapshot (0: the top frame).
    pub frame: usize,
    /// The element's index in the frame's snapshot.
    pub index: u32,
}

impl ElementRef {
    /// Parses `s3e12` or `s3f1e4` (an optional leading `@` or `ref=` is accepted).
    pub fn parse(text: &str) -> Option<ElementRef> {
        let t = text.trim();
        let t = t.strip_prefix('@').unwrap_or(t);
        let t = t.strip_prefix("ref=").unwrap_or(t);
        let rest = t.strip_prefix('s')?;
        let digits = |s: &str| -> Option<(u64, usize)> {
            let n = s.chars().take_while(char::is_ascii_digit).count();
            if n == 0 {
                return None;
            }
            Some((s[..n].parse().ok()?, n))
        };
        let (snapshot, n) = digits(rest)?;
        let rest = &rest[n..];
        let (frame, rest) = match rest.strip_prefix('f') {
            Some(r) => {
                let (f, n) = digits(r)?;
                (usize::try_from(f).ok()?, &r[n..])
            }
            None => (0, rest),
        };
        let rest = rest.strip_prefix('e')?;
        let (index, n) = digits(rest)?;
        if n != rest.len() {
            return None;
        }
        Some(ElementRef {
            snapshot,
            frame,
            index: u32::try_from(index).ok()?,
        })
    }

    /// The ref as text.
    pub fn render(&self) -> String {
        if self.frame == 0 {
            format!("s{}e{}", self.snapshot, self.index)
        } else {
            format!("s{}f{}e{}", self.snapshot, self.frame, self.index)
        }
    }
}

/// One frame of a snapshot as the renderer sees it.
#[derive(Debug, Clone)]
pub struct RenderFrame {
    /// The frame's number in the snapshot (0: top).
    pub number: usize,
    /// The parent frame's number.
    pub parent: Option<usize>,
    /// Which iframe slot of the parent it fills, when known.
    pub slot: Option<u32>,
    /// Its snapshot, or why it could not be read.
    pub content: Result<FrameSnapshot, String>,
}

/// The lines of a snapshot and how many of them carry refs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The lines, without trailing newlines.
    pub lines: Vec<String>,
    /// How many elements have refs.
    pub interactive: usize,
    /// How many elements the agents visited.
    pub elements: usize,
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() > max {
        let head: String = s.chars().take(max.saturating_sub(1)).collect();
        format!("{head}…")
    } else {
        s.to_string()
    }
}

fn node_line(node: &SnapNode, indent: usize, snapshot: u64, frame: usize) -> String {
    let mut line = "  ".repeat(indent);
    line.push_str("- ");
    line.push_str(&node.role);
    if !node.name.is_empty() {
        line.push(' ');
        line.push_str(&quote(&node.name));
    }
    if let Some(v) = &node.value {
        line.push_str(" value=");
        line.push_str(&quote(v));
    }
    if !node.props.is_empty() {
        line.push_str(" [");
        line.push_str(&node.props.join(", "));
        line.push(']');
    }
    if let Some(h) = &node.href {
        if node.role == "link" {
            line.push_str(" -> ");
            line.push_str(&clip(h, 160));
        } else if node.role == "iframe" {
            line.push(' ');
            line.push_str(&clip(h, 160));
        }
    }
    if let Some(note) = &node.note {
        line.push_str(" (");
        line.push_str(note);
        line.push(')');
    }
    if let Some(i) = node.index {
        let r = ElementRef {
            snapshot,
            frame,
            index: i,
        };
        line.push_str(" [ref=");
        line.push_str(&r.render());
        line.push(']');
    }
    line
}

/// Renders frames into lines: each frame's nodes, with a child frame's nodes under the
/// `iframe` line of its slot; frames that could not be read, or iframes whose frame is not
/// known, are marked `(not reachable: …)`; child frames whose slot is unknown are listed after
/// their parent's nodes.
pub fn render(snapshot: u64, frames: &[RenderFrame]) -> Rendered {
    let mut out = Rendered {
        lines: Vec::new(),
        interactive: 0,
        elements: 0,
    };
    if let Some(top) = frames.iter().find(|f| f.parent.is_none()) {
        let mut placed = vec![false; frames.len()];
        emit(snapshot, frames, top, 0, &mut placed, &mut out);
    }
    out
}

fn emit(
    snapshot: u64,
    frames: &[RenderFrame],
    frame: &RenderFrame,
    base: usize,
    placed: &mut Vec<bool>,
    out: &mut Rendered,
) {
    if let Some(p) = placed.get_mut(frame.number) {
        *p = true;
    }
    let content = match &frame.content {
        Ok(c) => c,
        Err(_) => return,
    };
    out.elements += content.elements as usize;
    for node in &content.nodes {
        let indent = base + node.depth as usize;
        if node.role == "iframe" {
            let child = node.slot.and_then(|slot| {
                frames.iter().find(|f| {
                    f.parent == Some(frame.number)
                        && f.slot == Some(slot)
                        && !placed.get(f.number).copied().unwrap_or(true)
                })
            });
            let mut line = node_line(node, indent, snapshot, frame.number);
            match child {
                Some(c) => match &c.content {
                    Ok(_) => {
                        line.push_str(&format!(" [frame f{}]", c.number));
                        out.lines.push(line);
                        emit(snapshot, frames, c, indent + 1, placed, out);
                    }
                    Err(why) => {
                        line.push_str(&format!(" (not reachable: {why})"));
                        out.lines.push(line);
                        if let Some(p) = placed.get_mut(c.number) {
                            *p = true;
                        }
                    }
                },
                None => {
                    line.push_str(" (not reachable: its content cannot be read)");
                    out.lines.push(line);
                }
            }
            continue;
        }
        if node.index.is_some() {
            out.interactive += 1;
        }
        out.lines
            .push(node_line(node, indent, snapshot, frame.number));
    }
    // Child frames whose position is unknown.
    let orphans: Vec<&RenderFrame> = frames
        .iter()
        .filter(|f| f.parent == Some(frame.number))
        .filter(|f| !placed.get(f.number).copied().unwrap_or(true))
        .collect();
    for c in orphans {
        if placed.get(c.number).copied().unwrap_or(true) {
            continue;
        }
        let mut line = format!("{}- iframe (position unknown)", "  ".repeat(base));
        match &c.content {
            Ok(content) => {
                line.push_str(&format!(
                    " {} [frame f{}]",
                    clip(&content.url, 160),
                    c.number
                ));
                out.lines.push(line);
                emit(snapshot, frames, c, base + 1, placed, out);
            }
            Err(why) => {
                line.push_str(&format!(" (not reachable: {why})"));
                out.lines.push(line);
                if let Some(p) = placed.get_mut(c.number) {
                    *p = true;
                }
            }
        }
    }
}

/// Splits lines into pages of at most `budget` characters each (counting a newline per line);
/// a line is never split. Every line is on exactly one page; there is always one page.
pub fn paginate(lines: &[String], budget: usize) -> Vec<Vec<String>> {
    let budget = budget.max(200);
    let mut pages: Vec<Vec<String>> = Vec::new();
    let mut page: Vec<String> = Vec::new();
    let mut size = 0usize;
    for line in lines {
        let len = line.chars().count() + 1;
        if !page.is_empty() && size + len > budget {
            pages.push(std::mem::take(&mut page));
            size = 0;
        }
        size += len;
        page.push(line.clone());
    }
    if !page.is_empty() || pages.is_empty() {
        pages.push(page);
    }
    pages
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn button(i: u32) -> SnapNode {
        SnapNode {
            depth: 0,
            role: "button".into(),
            name: format!("Item {i}"),
            index: Some(i),
            value: None,
            props: vec![],
            href: None,
            slot: None,
            note: None,
        }
    }

    fn frame_snapshot(nodes: Vec<SnapNode>, slots: u32) -> FrameSnapshot {
        FrameSnapshot {
            url: "http://127.0.0.1/".into(),
            title: "t".into(),
            elements: nodes.len() as u32,
            nodes,
            frame_slots: slots,
        }
    }

    #[test]
    fn refs_round_trip_and_reject_garbage() {
        for text in ["s3e12", "s3f1e4", "s10f22e0"] {
            assert_eq!(ElementRef::parse(text).unwrap().render(), text);
        }
        assert_eq!(
            ElementRef::parse("@s2e7"),
            Some(ElementRef {
                snapshot: 2,
                frame: 0,
                index: 7
            })
        );
        for bad in ["e12", "s3", "s3e", "s3e1x", "sxe1", "s3f1", "s3g1e2", ""] {
            assert_eq!(ElementRef::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn pages_hold_every_line_once_within_the_budget() {
        let lines: Vec<String> = (0..5000)
            .map(|i| format!("- button \"Item {i}\" [ref=s1e{i}]"))
            .collect();
        let pages = paginate(&lines, 20_000);
        assert!(pages.len() > 1);
        for p in &pages {
            let size: usize = p.iter().map(|l| l.chars().count() + 1).sum();
            assert!(size <= 20_000, "{size}");
        }
        let joined: Vec<String> = pages.concat();
        assert_eq!(joined, lines);
        assert_eq!(paginate(&[], 1000), vec![Vec::<String>::new()]);
    }

    #[test]
    fn child_frames_sit_under_their_iframe_and_unreadable_ones_say_so() {
        let mut top_nodes = vec![button(0)];
        top_nodes.push(SnapNode {
            role: "iframe".into(),
            name: "pay".into(),
            index: None,
            slot: Some(0),
            href: Some("http://127.0.0.1/inner.html".into()),
            ..button(0)
        });
        top_nodes.push(SnapNode {
            role: "iframe".into(),
            name: "".into(),
            index: None,
            slot: Some(1),
            href: Some("http://localhost:9/inner.html".into()),
            ..button(0)
        });
        top_nodes.push(SnapNode {
            role: "iframe".into(),
            name: "".into(),
            index: None,
            slot: Some(2),
            href: Some("http://x/".into()),
            ..button(0)
        });
        let frames = vec![
            RenderFrame {
                number: 0,
                parent: None,
                slot: None,
                content: Ok(frame_snapshot(top_nodes, 3)),
            },
            RenderFrame {
                number: 1,
                parent: Some(0),
                slot: Some(0),
                content: Ok(frame_snapshot(vec![button(0)], 0)),
            },
            RenderFrame {
                number: 2,
                parent: Some(0),
                slot: Some(1),
                content: Err("cross-origin frame without access".into()),
            },
        ];
        let r = render(4, &frames);
        assert_eq!(
            r.lines,
            vec![
                "- button \"Item 0\" [ref=s4e0]".to_string(),
                "- iframe \"pay\" http://127.0.0.1/inner.html [frame f1]".to_string(),
                "  - button \"Item 0\" [ref=s4f1e0]".to_string(),
                "- iframe http://localhost:9/inner.html (not reachable: cross-origin frame without access)".to_string(),
                "- iframe http://x/ (not reachable: its content cannot be read)".to_string(),
            ]
        );
        assert_eq!(r.interactive, 2);
    }
}
