//! The free-text index behind `tool_search`: tokens of each tool's names, description and
//! capability, precomputed once, so a query over thousands of tools touches only the postings
//! of its own words.

use std::collections::HashMap;

/// What the index knows of one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchEntry {
    /// Name the model calls (`glob_search`, `mcp__fs__read_text_file`).
    pub runtime_name: String,
    /// Legacy class name (`GlobTool`); equal to the runtime name for MCP tools.
    pub class_name: String,
    /// Human name.
    pub display_name: String,
    /// Description.
    pub description: String,
    /// Capability id (`filesystem`, `mcp:fs`).
    pub capability: String,
}

/// One result of [`ToolIndex::search`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchHit {
    /// Index into [`ToolIndex::entries`].
    pub entry: usize,
    /// Relevance (higher is better).
    pub score: f32,
}

/// Field weights: a word in the name counts most.
const W_NAME: f32 = 3.0;
const W_DISPLAY: f32 = 2.0;
const W_CAPABILITY: f32 = 1.5;
const W_DESCRIPTION: f32 = 1.0;
/// A query word that is only a prefix of an indexed word counts this much of a full match.
const PREFIX_FACTOR: f32 = 0.5;
/// At most this many indexed words are expanded from one query prefix.
const MAX_PREFIX_TERMS: usize = 64;

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "the", "to", "of", "or", "for", "in", "on", "with", "is", "it", "by", "as",
    "at", "be", "from", "this", "that", "tool",
];

/// A precomputed token index over tools.
#[derive(Debug, Clone, Default)]
pub struct ToolIndex {
    entries: Vec<SearchEntry>,
    /// term -> (entry, weight), one posting per entry (the best field's weight).
    postings: HashMap<String, Vec<(u32, f32)>>,
    /// Every term, sorted, for prefix lookups.
    terms: Vec<String>,
    /// Runtime and class names -> entry.
    exact: HashMap<String, usize>,
    /// Lower-cased runtime and class names -> entry.
    exact_lower: HashMap<String, usize>,
}

/// Splits text into lower-case words: on anything not alphanumeric, and between a lower-case
/// letter or digit and an upper-case letter (`ReadFileTool` -> read, file, tool).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out.retain(|w| !STOPWORDS.contains(&w.as_str()));
    out
}

impl ToolIndex {
    /// Builds the index.
    pub fn build(entries: Vec<SearchEntry>) -> ToolIndex {
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        let mut exact = HashMap::new();
        let mut exact_lower = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            let id = u32::try_from(i).unwrap_or(u32::MAX);
            let mut best: HashMap<String, f32> = HashMap::new();
            let fields = [
                (&e.runtime_name, W_NAME),
                (&e.class_name, W_NAME),
                (&e.display_name, W_DISPLAY),
                (&e.capability, W_CAPABILITY),
                (&e.description, W_DESCRIPTION),
            ];
            for (text, weight) in fields {
                for t in tokenize(text) {
                    let w = best.entry(t).or_insert(0.0);
                    if weight > *w {
                        *w = weight;
                    }
                }
            }
            for (t, w) in best {
                postings.entry(t).or_default().push((id, w));
            }
            exact.entry(e.runtime_name.clone()).or_insert(i);
            exact.entry(e.class_name.clone()).or_insert(i);
            exact_lower
                .entry(e.runtime_name.to_lowercase())
                .or_insert(i);
            exact_lower.entry(e.class_name.to_lowercase()).or_insert(i);
        }
        let mut terms: Vec<String> = postings.keys().cloned().collect();
        terms.sort_unstable();
        ToolIndex {
            entries,
            postings,
            terms,
            exact,
            exact_lower,
        }
    }

    /// The indexed tools, in build order.
    pub fn entries(&self) -> &[SearchEntry] {
        &self.entries
    }

    /// The tool whose runtime or class name is `name` (exact case first, then ignoring case).
    pub fn find_exact(&self, name: &str) -> Option<usize> {
        let name = name.trim();
        self.exact
            .get(name)
            .or_else(|| self.exact_lower.get(&name.to_lowercase()))
            .copied()
    }

    /// The best `limit` tools for a free-text query, best first (ties by name). Each query word
    /// adds the weight of the best field it appears in (names > display name > capability >
    /// description); a word that only prefixes an indexed word adds half; tools matching every
    /// query word rank above the rest.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let words = tokenize(query);
        if words.is_empty() || limit == 0 {
            return Vec::new();
        }
        let mut scores: HashMap<u32, (f32, u32)> = HashMap::new();
        for (wi, word) in words.iter().enumerate() {
            let bit = 1u32 << wi.min(31);
            // The best weight of this word per entry.
            let mut best: HashMap<u32, f32> = HashMap::new();
            let mut add = |entry: u32, w: f32| {
                let b = best.entry(entry).or_insert(0.0);
                if w > *b {
                    *b = w;
                }
            };
            if let Some(list) = self.postings.get(word) {
                for &(e, w) in list {
                    add(e, w);
                }
            }
            if word.len() >= 2 {
                let start = self.terms.partition_point(|t| t.as_str() < word.as_str());
                for term in self.terms[start..]
                    .iter()
                    .take_while(|t| t.starts_with(word.as_str()))
                    .filter(|t| *t != word)
                    .take(MAX_PREFIX_TERMS)
                {
                    if let Some(list) = self.postings.get(term) {
                        for &(e, w) in list {
                            add(e, w * PREFIX_FACTOR);
                        }
                    }
                }
            }
            for (e, w) in best {
                let s = scores.entry(e).or_insert((0.0, 0));
                s.0 += w;
                s.1 |= bit;
            }
        }
        let all_bits = if words.len() >= 32 {
            u32::MAX
        } else {
            (1u32 << words.len()) - 1
        };
        let mut hits: Vec<SearchHit> = scores
            .into_iter()
            .map(|(e, (score, bits))| SearchHit {
                entry: e as usize,
                score: if bits & all_bits == all_bits {
                    score * 1.5
                } else {
                    score
                },
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score.total_cmp(&a.score).then_with(|| {
                self.entries[a.entry]
                    .runtime_name
                    .cmp(&self.entries[b.entry].runtime_name)
            })
        });
        hits.truncate(limit);
        hits
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn entry(name: &str, class: &str, desc: &str, cap: &str) -> SearchEntry {
        SearchEntry {
            runtime_name: name.into(),
            class_name: class.into(),
            display_name: name.replace('_', " "),
            description: desc.into(),
            capability: cap.into(),
        }
    }

    fn index() -> ToolIndex {
        ToolIndex::build(vec![
            entry(
                "glob_search",
                "GlobTool",
                "Find files by glob pattern.",
                "filesystem",
            ),
            entry(
                "grep_search",
                "GrepTool",
                "Search file contents with a regular expression.",
                "filesystem",
            ),
            entry("web_search", "WebSearchTool", "Search the web.", "web"),
            entry(
                "mcp__mail__send_email",
                "mcp__mail__send_email",
                "Send an email message.",
                "mcp:mail",
            ),
        ])
    }

    #[test]
    fn camel_case_and_snake_case_split_into_words() {
        assert_eq!(tokenize("WebSearchTool"), ["web", "search"]);
        assert_eq!(
            tokenize("mcp__fs__read_text_file"),
            ["mcp", "fs", "read", "text", "file"]
        );
    }

    #[test]
    fn name_matches_rank_above_description_matches() {
        let idx = index();
        let hits = idx.search("search web", 10);
        assert_eq!(idx.entries()[hits[0].entry].runtime_name, "web_search");
        let names: Vec<&str> = hits
            .iter()
            .map(|h| idx.entries()[h.entry].runtime_name.as_str())
            .collect();
        assert!(
            names.contains(&"grep_search") && names.contains(&"glob_search"),
            "{names:?}"
        );
    }

    #[test]
    fn prefixes_match_and_unknown_words_find_nothing() {
        let idx = index();
        let hits = idx.search("emai", 5);
        assert_eq!(
            idx.entries()[hits[0].entry].runtime_name,
            "mcp__mail__send_email"
        );
        assert!(idx.search("kubernetes", 5).is_empty());
    }

    #[test]
    fn exact_names_are_found_by_runtime_or_class_name_in_any_case() {
        let idx = index();
        assert_eq!(idx.find_exact("GlobTool"), Some(0));
        assert_eq!(idx.find_exact("grep_search"), Some(1));
        assert_eq!(idx.find_exact("websearchtool"), Some(2));
        assert_eq!(idx.find_exact("nope"), None);
    }
}
