//! The parallel tree walk behind `grep_search` and `glob_search`: `ignore`'s parallel walker
//! (the one ripgrep uses: `.gitignore`, hidden files, the path policy's filter), results
//! gathered per thread, and a search of a sorted file list in parallel that stops at a cap and
//! still returns what a sequential search in that order would.

use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use std::cmp::Ordering;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Mutex, PoisonError};

/// Walks `root` on all cores (hidden and ignored files left out, `filter` deciding what else is
/// left out and not descended into) and returns what `visit` made of each entry, in no
/// particular order (sort the result). Unreadable entries are skipped.
pub(crate) fn parallel_walk<T, F>(
    root: &Path,
    filter: impl Fn(&DirEntry) -> bool + Send + Sync + 'static,
    visit: F,
) -> Vec<T>
where
    T: Send,
    F: Fn(&DirEntry) -> Option<T> + Sync,
{
    let found = Mutex::new(Vec::new());
    WalkBuilder::new(root)
        .require_git(false)
        .filter_entry(filter)
        .build_parallel()
        .visit(&mut Gather {
            visit: &visit,
            found: &found,
        });
    found.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// Makes one [`Collector`] per walker thread.
struct Gather<'a, T, F> {
    visit: &'a F,
    found: &'a Mutex<Vec<T>>,
}

impl<'s, T, F> ParallelVisitorBuilder<'s> for Gather<'s, T, F>
where
    T: Send,
    F: Fn(&DirEntry) -> Option<T> + Sync,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Collector {
            visit: self.visit,
            found: self.found,
            local: Vec::new(),
        })
    }
}

/// One thread's results, handed over when the thread is done.
struct Collector<'a, T: Send, F> {
    visit: &'a F,
    found: &'a Mutex<Vec<T>>,
    local: Vec<T>,
}

impl<T, F> ParallelVisitor for Collector<'_, T, F>
where
    T: Send,
    F: Fn(&DirEntry) -> Option<T> + Sync,
{
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if let Ok(entry) = entry
            && let Some(item) = (self.visit)(&entry)
        {
            self.local.push(item);
        }
        WalkState::Continue
    }
}

impl<T: Send, F> Drop for Collector<'_, T, F> {
    fn drop(&mut self) {
        let mut found = self.found.lock().unwrap_or_else(PoisonError::into_inner);
        found.append(&mut self.local);
    }
}

/// Orders paths as their components would (`a/b` before `a-c` and `a.rs`), comparing bytes.
pub(crate) fn path_order(a: &Path, b: &Path) -> Ordering {
    let key = |c: &u8| if *c == b'/' || *c == b'\\' { 0 } else { *c };
    let (a, b) = (
        a.as_os_str().as_encoded_bytes(),
        b.as_os_str().as_encoded_bytes(),
    );
    a.iter().map(key).cmp(b.iter().map(key))
}

/// Runs `search` over `items` on `threads` threads (each with its own state made by `init`: a
/// searcher and its buffers) and returns the results in the order of
/// `items`, stopping once the results of a prefix of `items` weigh `cap` or more (by `weight`):
/// the results returned are exactly those a sequential search in that order would have made
/// before stopping, whatever the threads' timing. Items past that prefix may have been searched
/// but their results are dropped.
pub(crate) fn search_in_order<I, S, R>(
    items: &[I],
    threads: usize,
    cap: usize,
    init: impl Fn() -> S + Sync,
    search: impl Fn(&mut S, &I) -> R + Sync,
    weight: impl Fn(&R) -> usize + Sync,
) -> Vec<R>
where
    I: Sync,
    R: Send,
{
    struct Prefix<R> {
        results: Vec<Option<R>>,
        /// Items `0..done` have results.
        done: usize,
        /// The weight of those.
        weight: usize,
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let prefix = Mutex::new(Prefix {
        results: std::iter::repeat_with(|| None).take(items.len()).collect(),
        done: 0,
        weight: 0,
    });
    let work = || {
        let mut state = init();
        while !stop.load(AtomicOrdering::Relaxed) {
            let i = next.fetch_add(1, AtomicOrdering::Relaxed);
            let Some(item) = items.get(i) else { break };
            let result = search(&mut state, item);
            let mut p = prefix.lock().unwrap_or_else(PoisonError::into_inner);
            p.results[i] = Some(result);
            while p.done < items.len() && p.weight < cap {
                let Some(w) = p.results[p.done].as_ref().map(&weight) else {
                    break;
                };
                p.weight += w;
                p.done += 1;
            }
            if p.weight >= cap {
                stop.store(true, AtomicOrdering::Relaxed);
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads.max(1) {
            s.spawn(work);
        }
        work();
    });
    let p = prefix.into_inner().unwrap_or_else(PoisonError::into_inner);
    p.results.into_iter().take(p.done).flatten().collect()
}

/// How many threads a search uses: one per core (at most 12, as ripgrep).
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(12))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn paths_sort_as_their_components_would() {
        let mut paths: Vec<&Path> = ["src.rs", "src/b.rs", "src-old/a.rs", "src/a/z.rs"]
            .into_iter()
            .map(Path::new)
            .collect();
        paths.sort_by(|a, b| path_order(a, b));
        let shown: Vec<&str> = paths.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(shown, ["src/a/z.rs", "src/b.rs", "src-old/a.rs", "src.rs"]);
    }

    #[test]
    fn a_capped_search_returns_the_sequential_prefix_whatever_the_timing() {
        // Item i yields i % 3 lines; early items are slow so later ones finish first.
        let items: Vec<usize> = (0..200).collect();
        for _ in 0..5 {
            let got = search_in_order(
                &items,
                4,
                50,
                || (),
                |_, &i| {
                    if i < 4 {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    (i, i % 3)
                },
                |r| r.1,
            );
            let mut want = Vec::new();
            let mut total = 0;
            for &i in &items {
                if total >= 50 {
                    break;
                }
                total += i % 3;
                want.push((i, i % 3));
            }
            assert_eq!(got, want);
        }
    }

    #[test]
    fn an_uncapped_search_returns_every_result_in_order() {
        let items: Vec<usize> = (0..100).collect();
        let got = search_in_order(&items, 3, usize::MAX, || (), |_, &i| i * 2, |_| 1);
        assert_eq!(got, (0..100).map(|i| i * 2).collect::<Vec<_>>());
    }
}
