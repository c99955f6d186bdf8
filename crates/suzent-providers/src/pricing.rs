//! List prices of the hosted models Suzent knows, to show what a turn cost. Prices are US
//! dollars per million tokens, as the providers published them (OpenAI, Anthropic and Google
//! pricing pages, 2025–2026); a model not in the table has no cost shown, never a guess.
//! Local models cost nothing and report no price.

use crate::Usage;

/// US dollars per million input tokens and per million output tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Per million request (prompt) tokens.
    pub input_per_million: f64,
    /// Per million generated tokens.
    pub output_per_million: f64,
}

/// Model-name prefixes and their prices; the longest matching prefix wins (`gpt-4.1-mini`
/// before `gpt-4.1`). Dated snapshots (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`)
/// match their family.
const PRICES: &[(&str, f64, f64)] = &[
    // OpenAI
    ("gpt-5-nano", 0.05, 0.40),
    ("gpt-5-mini", 0.25, 2.00),
    ("gpt-5", 1.25, 10.00),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1", 2.00, 8.00),
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4o", 2.50, 10.00),
    ("o4-mini", 1.10, 4.40),
    ("o3-mini", 1.10, 4.40),
    ("o3", 2.00, 8.00),
    ("o1", 15.00, 60.00),
    // Anthropic
    ("claude-opus-4", 15.00, 75.00),
    ("claude-sonnet-4", 3.00, 15.00),
    ("claude-3-7-sonnet", 3.00, 15.00),
    ("claude-3-5-sonnet", 3.00, 15.00),
    ("claude-haiku-4", 1.00, 5.00),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("claude-3-haiku", 0.25, 1.25),
    // Google
    ("gemini-2.5-pro", 1.25, 10.00),
    ("gemini-2.5-flash-lite", 0.10, 0.40),
    ("gemini-2.5-flash", 0.30, 2.50),
    ("gemini-2.0-flash-lite", 0.075, 0.30),
    ("gemini-2.0-flash", 0.10, 0.40),
];

/// The list price of `model` (the provider's model id, with or without a `provider/` prefix),
/// or `None` when it is not in the table.
pub fn price(model: &str) -> Option<Price> {
    let name = model.rsplit('/').next().unwrap_or(model);
    PRICES
        .iter()
        .filter(|(prefix, _, _)| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', ':', '@']))
        })
        .max_by_key(|(prefix, _, _)| prefix.len())
        .map(|&(_, input, output)| Price {
            input_per_million: input,
            output_per_million: output,
        })
}

/// What `usage` of `model` costs in US dollars: at `configured` (the model's `input_price` and
/// `output_price` settings) when set, else at list price; `None` for a model in neither.
pub fn cost_usd(model: &str, configured: Option<Price>, usage: &Usage) -> Option<f64> {
    let p = configured.or_else(|| price(model))?;
    Some(
        (usage.input_tokens as f64 * p.input_per_million
            + usage.output_tokens as f64 * p.output_per_million)
            / 1_000_000.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_longest_prefix_wins_and_dated_snapshots_match_their_family() {
        let p = |m: &str| price(m).map(|p| (p.input_per_million, p.output_per_million));
        assert_eq!(p("gpt-4.1-mini"), Some((0.40, 1.60)));
        assert_eq!(p("gpt-4.1"), Some((2.00, 8.00)));
        assert_eq!(p("openai/gpt-4o-2024-08-06"), Some((2.50, 10.00)));
        assert_eq!(p("claude-sonnet-4-5-20250929"), Some((3.00, 15.00)));
        assert_eq!(p("gemini-2.5-flash-lite"), Some((0.10, 0.40)));
    }

    #[test]
    fn an_unknown_model_or_a_lookalike_has_no_price() {
        for m in [
            "scripted-small",
            "gpt-4.10",
            "o3x",
            "llama-3.1-8b",
            "local/qwen2.5",
        ] {
            assert_eq!(price(m), None, "{m}");
        }
    }

    #[test]
    fn cost_is_tokens_times_the_price_per_million() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 500_000,
        };
        assert_eq!(cost_usd("gpt-4.1", None, &usage), Some(2.00 + 4.00));
        assert_eq!(cost_usd("scripted-small", None, &usage), None);
    }

    #[test]
    fn a_configured_price_wins_and_prices_a_model_the_table_lacks() {
        let usage = Usage {
            input_tokens: 2_000_000,
            output_tokens: 1_000_000,
        };
        let own = Price {
            input_per_million: 0.5,
            output_per_million: 1.5,
        };
        assert_eq!(cost_usd("my-model", Some(own), &usage), Some(1.0 + 1.5));
        assert_eq!(cost_usd("gpt-4.1", Some(own), &usage), Some(1.0 + 1.5));
    }
}
