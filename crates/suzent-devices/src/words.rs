//! The confirmation words: 256 short, distinct English words, so one byte of a digest picks one
//! word and four words carry 32 bits that two people can compare aloud.

/// The word list; index = byte value.
pub(crate) const WORDS: [&str; 256] = [
    "acorn", "adobe", "agent", "alarm", "album", "alpine", "amber", "anchor", "angle", "apple",
    "apron", "arrow", "aspen", "atlas", "autumn", "avocado", "badge", "bagel", "bamboo", "banjo",
    "barley", "basil", "beacon", "beaver", "berry", "bicycle", "birch", "bison", "blanket",
    "blossom", "bonfire", "border", "bottle", "branch", "breeze", "brick", "bridge", "bronze",
    "bucket", "buffalo", "butter", "button", "cabin", "cactus", "camel", "candle", "canoe",
    "canyon", "carbon", "carpet", "carrot", "castle", "cedar", "cellar", "cement", "cherry",
    "chess", "chimney", "cinnamon", "circus", "citrus", "clover", "cobalt", "coconut", "comet",
    "compass", "copper", "coral", "cotton", "cougar", "crayon", "cricket", "crystal", "cuckoo",
    "cupcake", "curtain", "cypress", "daisy", "desert", "diamond", "dolphin", "domino", "donkey",
    "dragon", "drum", "eagle", "echo", "eclipse", "elbow", "ember", "emerald", "engine", "falcon",
    "feather", "fennel", "ferry", "fiddle", "fig", "flannel", "flint", "forest", "fossil",
    "fountain", "fox", "galaxy", "garden", "garlic", "gazelle", "geyser", "ginger", "glacier",
    "goblet", "gopher", "granite", "grape", "gravel", "guitar", "hammock", "harbor", "harvest",
    "hazel", "hedgehog", "helmet", "heron", "hickory", "honey", "horizon", "husky", "iceberg",
    "igloo", "indigo", "iris", "island", "ivory", "jackal", "jaguar", "jasmine", "jelly", "jigsaw",
    "juniper", "kayak", "kernel", "kettle", "kiwi", "koala", "ladder", "lagoon", "lantern", "lava",
    "lemon", "lentil", "lilac", "lily", "lizard", "lobster", "locket", "lotus", "lynx", "magnet",
    "mango", "maple", "marble", "meadow", "melon", "meteor", "mitten", "monsoon", "mosaic",
    "muffin", "mustard", "nectar", "needle", "nickel", "nutmeg", "oasis", "oatmeal", "ocean",
    "olive", "onion", "opal", "orbit", "orchid", "otter", "oyster", "paddle", "panda", "papaya",
    "parrot", "peach", "pebble", "pelican", "pepper", "piano", "pillow", "pine", "planet", "plum",
    "pony", "poppy", "prairie", "pretzel", "pumpkin", "puzzle", "quartz", "quill", "rabbit",
    "radar", "radish", "raven", "reef", "ribbon", "river", "robin", "rocket", "saddle", "saffron",
    "salmon", "sapphire", "satin", "scarf", "shadow", "sierra", "silver", "sketch", "sparrow",
    "spruce", "squid", "stable", "summit", "sunset", "tango", "teapot", "thistle", "thunder",
    "tiger", "timber", "tomato", "topaz", "tractor", "tulip", "tundra", "turtle", "umbrella",
    "valley", "velvet", "violet", "volcano", "waffle", "walnut", "walrus", "willow", "window",
    "yogurt", "zebra", "zephyr", "zinc",
];

#[cfg(test)]
mod tests {
    use super::WORDS;
    use std::collections::HashSet;

    #[test]
    fn every_word_is_distinct_lower_case_and_short() {
        let set: HashSet<&str> = WORDS.iter().copied().collect();
        assert_eq!(set.len(), 256);
        assert!(
            WORDS
                .iter()
                .all(|w| w.len() <= 9 && w.chars().all(|c| c.is_ascii_lowercase()))
        );
    }
}
