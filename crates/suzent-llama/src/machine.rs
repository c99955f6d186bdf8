//! Defaults read from the machine: threads and a context size that fits in memory.

/// Threads for llama.cpp: the cores this process may use.
pub fn default_threads() -> u32 {
    std::thread::available_parallelism()
        .map(|n| u32::try_from(n.get()).unwrap_or(1))
        .unwrap_or(1)
        .clamp(1, 32)
}

/// Bytes of memory available to new allocations, when the platform tells (Linux
/// `/proc/meminfo` `MemAvailable`).
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Most tokens of context chosen by default.
pub const MAX_DEFAULT_CONTEXT: u32 = 16_384;

/// The context size to use: the model's training context, at most [`MAX_DEFAULT_CONTEXT`], and
/// no more than a quarter of the available memory holds as KV cache (`kv_bytes_per_token`);
/// never below 2,048 (or the training context, if smaller). A multiple of 256.
pub fn default_context_size(trained: u32, kv_bytes_per_token: u64, available: Option<u64>) -> u32 {
    let mut size = trained.clamp(1, MAX_DEFAULT_CONTEXT);
    if let Some(available) = available
        && kv_bytes_per_token > 0
    {
        let fits = available / 4 / kv_bytes_per_token;
        size = size.min(u32::try_from(fits).unwrap_or(u32::MAX));
    }
    let floor = trained.clamp(1, 2048);
    if size < trained {
        size = size / 256 * 256;
    }
    size.max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_context_is_capped_by_training_memory_and_the_default_maximum() {
        assert_eq!(
            default_context_size(131_072, 12_288, Some(64 << 30)),
            16_384
        );
        assert_eq!(default_context_size(8_192, 12_288, Some(64 << 30)), 8_192);
        // 1 GiB free, 100 KiB per token: a quarter holds 2,621 tokens -> 2,560.
        assert_eq!(
            default_context_size(32_768, 100 * 1024, Some(1 << 30)),
            2_560
        );
        // Never below 2,048 however little memory is free.
        assert_eq!(
            default_context_size(32_768, 100 * 1024, Some(1 << 20)),
            2_048
        );
        assert_eq!(default_context_size(1_000, 1, None), 1_000);
    }

    #[test]
    fn threads_are_at_least_one() {
        assert!(default_threads() >= 1);
    }
}
