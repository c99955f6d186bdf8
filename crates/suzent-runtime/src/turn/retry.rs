//! Providers fail gracefully (issue #13 item 5): a model step that failed in a way worth
//! retrying is asked again, after a wait announced as a `provider_retry` event. Retried, only
//! while nothing of the step was shown yet: HTTP 429 and 5xx (529 is Anthropic's "overloaded"),
//! up to [`MAX_HTTP_RETRIES`] times with exponential backoff from [`BASE_DELAY_MS`] or the
//! server's `Retry-After` (a wait over [`MAX_WAIT_MS`] is not waited: the step fails with the
//! server's message); a broken connection once; an empty completion (public case R2-L10) once.
//! Everything else fails the step at once.

use crate::provider::ProviderError;

/// Retries of a 429 or 5xx answer.
pub const MAX_HTTP_RETRIES: u32 = 3;
/// The first backoff without `Retry-After`, in milliseconds; it doubles each retry.
pub const BASE_DELAY_MS: u64 = 1_000;
/// The longest wait the runtime accepts, in milliseconds (a server asking for more fails the
/// step with its message: a quota that resets in an hour is not waited out in a turn).
pub const MAX_WAIT_MS: u64 = 60_000;

/// Whether and how long to wait before asking again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    /// This retry's number, from 1.
    pub(super) attempt: u32,
    /// The most retries this kind of failure gets.
    pub(super) max_attempts: u32,
    /// Milliseconds to wait.
    pub(super) wait_ms: u64,
}

/// The retry for `error` after `done` retries of the same step, or `None` (fail the step).
/// `shown`: some of the step's text already reached the user (a retry would show it twice).
pub(super) fn plan(error: &ProviderError, done: u32, shown: bool) -> Option<Plan> {
    if shown {
        return None;
    }
    let (max_attempts, wait_ms) = match error {
        ProviderError::Http {
            status,
            retry_after_ms,
            ..
        } if *status == 429 || (500..600).contains(status) => {
            let backoff = BASE_DELAY_MS.saturating_mul(1u64 << done.min(16));
            (MAX_HTTP_RETRIES, retry_after_ms.unwrap_or(backoff))
        }
        ProviderError::Transport { .. } => (1, BASE_DELAY_MS),
        ProviderError::EmptyCompletion { .. } => (1, 0),
        _ => return None,
    };
    (done < max_attempts && wait_ms <= MAX_WAIT_MS).then_some(Plan {
        attempt: done + 1,
        max_attempts,
        wait_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn http(status: u16, retry_after_ms: Option<u64>) -> ProviderError {
        ProviderError::Http {
            provider: "openai".into(),
            status,
            body: "{}".into(),
            retry_after_ms,
        }
    }

    #[test]
    fn a_429_waits_what_retry_after_says_up_to_the_limit() {
        let waits: Vec<Option<u64>> = (0..4)
            .map(|done| plan(&http(429, Some(2_000)), done, false).map(|p| p.wait_ms))
            .collect();
        assert_eq!(waits, vec![Some(2_000), Some(2_000), Some(2_000), None]);
        assert_eq!(plan(&http(429, Some(3_600_000)), 0, false), None);
    }

    #[test]
    fn a_5xx_without_retry_after_backs_off_exponentially() {
        let waits: Vec<Option<u64>> = (0..4)
            .map(|done| plan(&http(503, None), done, false).map(|p| p.wait_ms))
            .collect();
        assert_eq!(waits, vec![Some(1_000), Some(2_000), Some(4_000), None]);
    }

    #[test]
    fn client_errors_and_steps_already_shown_are_not_retried() {
        assert_eq!(plan(&http(400, None), 0, false), None);
        assert_eq!(plan(&http(401, None), 0, false), None);
        assert_eq!(plan(&http(503, None), 0, true), None);
    }

    #[test]
    fn an_empty_completion_and_a_broken_connection_are_retried_once() {
        let empty = ProviderError::EmptyCompletion {
            provider: "openai".into(),
            completion_tokens: 40,
        };
        assert_eq!(
            (
                plan(&empty, 0, false).map(|p| p.attempt),
                plan(&empty, 1, false)
            ),
            (Some(1), None)
        );
        let broken = ProviderError::Transport {
            provider: "openai".into(),
            message: "connection reset".into(),
        };
        assert_eq!(
            (
                plan(&broken, 0, false).map(|p| p.wait_ms),
                plan(&broken, 1, false)
            ),
            (Some(1_000), None)
        );
    }
}
