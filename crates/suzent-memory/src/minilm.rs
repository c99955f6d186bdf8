//! all-MiniLM-L6-v2 in process: candle's BERT, mean pooling over the attention mask, L2 norm.

use crate::{Embedder, MODEL_FILES, MemoryError};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::path::Path;
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

/// Longest input in tokens (the model was trained on 256-token sequences).
const MAX_TOKENS: usize = 256;

/// A sentence-transformers BERT model (all-MiniLM-L6-v2) loaded from a folder.
pub struct MiniLmEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    dims: usize,
    name: String,
}

impl std::fmt::Debug for MiniLmEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLmEmbedder")
            .field("name", &self.name)
            .field("dims", &self.dims)
            .finish()
    }
}

fn model_err(path: &Path, e: impl std::fmt::Display) -> MemoryError {
    MemoryError::Model {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn embed_err(e: impl std::fmt::Display) -> MemoryError {
    MemoryError::Embed(e.to_string())
}

impl MiniLmEmbedder {
    /// Loads `model.safetensors`, `tokenizer.json` and `config.json` from `dir` (on the CPU).
    pub fn load(dir: &Path) -> Result<Self, MemoryError> {
        for file in MODEL_FILES {
            if !dir.join(file).is_file() {
                return Err(model_err(dir, format!("{file} is missing")));
            }
        }
        let config_path = dir.join("config.json");
        let config_text =
            std::fs::read_to_string(&config_path).map_err(|e| model_err(&config_path, e))?;
        let config: Config =
            serde_json::from_str(&config_text).map_err(|e| model_err(&config_path, e))?;
        let dims = serde_json::from_str::<serde_json::Value>(&config_text)
            .ok()
            .and_then(|v| v["hidden_size"].as_u64())
            .and_then(|d| usize::try_from(d).ok())
            .ok_or_else(|| model_err(&config_path, "no hidden_size"))?;
        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| model_err(&tokenizer_path, e))?;
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| model_err(&tokenizer_path, e))?;
        let weights_path = dir.join("model.safetensors");
        let weights = std::fs::read(&weights_path).map_err(|e| model_err(&weights_path, e))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| model_err(&weights_path, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| model_err(&weights_path, e))?;
        Ok(Self {
            model,
            tokenizer,
            dims,
            name: format!(
                "{} (local)",
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "sentence model".into())
            ),
        })
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(embed_err)?;
        let device = Device::Cpu;
        let ids: Vec<Tensor> = encodings
            .iter()
            .map(|e| Tensor::new(e.get_ids(), &device))
            .collect::<Result<_, _>>()
            .map_err(embed_err)?;
        let masks: Vec<Tensor> = encodings
            .iter()
            .map(|e| Tensor::new(e.get_attention_mask(), &device))
            .collect::<Result<_, _>>()
            .map_err(embed_err)?;
        let ids = Tensor::stack(&ids, 0).map_err(embed_err)?;
        let mask = Tensor::stack(&masks, 0).map_err(embed_err)?;
        let type_ids = ids.zeros_like().map_err(embed_err)?;
        let hidden = self
            .model
            .forward(&ids, &type_ids, Some(&mask))
            .map_err(embed_err)?;
        let mask = mask
            .to_dtype(DType::F32)
            .and_then(|m| m.unsqueeze(2))
            .map_err(embed_err)?;
        let summed = hidden
            .broadcast_mul(&mask)
            .and_then(|t| t.sum(1))
            .map_err(embed_err)?;
        let counts = mask.sum(1).map_err(embed_err)?;
        let mean = summed.broadcast_div(&counts).map_err(embed_err)?;
        let norm = mean
            .sqr()
            .and_then(|t| t.sum_keepdim(1))
            .and_then(|t| t.sqrt())
            .map_err(embed_err)?;
        mean.broadcast_div(&norm)
            .and_then(|t| t.to_vec2::<f32>())
            .map_err(embed_err)
    }
}

impl Embedder for MiniLmEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, MemoryError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(32) {
            out.extend(self.embed_batch(chunk)?);
        }
        Ok(out)
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn name(&self) -> &str {
        &self.name
    }
}
