//! The BERT encoder on candle tensor ops: embeddings, `n` post-norm
//! transformer layers (multi-head self-attention, GELU feed-forward), then
//! mean pooling over the attention mask and L2 normalisation, as
//! sentence-transformers runs all-MiniLM-L6-v2.

use candle_core::{D, DType, Device, Tensor};

use crate::config::BertConfig;
use crate::error::Result;
use crate::weights::Weights;

type CResult<T> = candle_core::Result<T>;

/// A dense layer; the weight is kept transposed (`[in, out]`) so a call is
/// one matrix product.
struct Linear {
    weight_t: Tensor,
    bias: Tensor,
}

impl Linear {
    fn load(w: &Weights, name: &str, input: usize, output: usize) -> Result<Self> {
        let weight = w.get(&format!("{name}.weight"), &[output, input])?;
        let weight_t = weight
            .t()
            .and_then(|t| t.contiguous())
            .map_err(|e| crate::Error::inference(&e))?;
        Ok(Self {
            weight_t,
            bias: w.get(&format!("{name}.bias"), &[output])?,
        })
    }

    /// `x`: `[batch, seq, in]` -> `[batch, seq, out]`.
    fn forward(&self, x: &Tensor) -> CResult<Tensor> {
        let (b, s, i) = x.dims3()?;
        let flat = x.reshape((b * s, i))?;
        let out = flat.matmul(&self.weight_t)?.broadcast_add(&self.bias)?;
        let o = out.dim(1)?;
        out.reshape((b, s, o))
    }
}

struct LayerNorm {
    weight: Tensor,
    bias: Tensor,
    eps: f64,
}

impl LayerNorm {
    fn load(w: &Weights, name: &str, size: usize, eps: f64) -> Result<Self> {
        Ok(Self {
            weight: w.get(&format!("{name}.weight"), &[size])?,
            bias: w.get(&format!("{name}.bias"), &[size])?,
            eps,
        })
    }

    fn forward(&self, x: &Tensor) -> CResult<Tensor> {
        let mean = x.mean_keepdim(D::Minus1)?;
        let centred = x.broadcast_sub(&mean)?;
        let var = centred.sqr()?.mean_keepdim(D::Minus1)?;
        let normed = centred.broadcast_div(&(var + self.eps)?.sqrt()?)?;
        normed
            .broadcast_mul(&self.weight)?
            .broadcast_add(&self.bias)
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

impl Layer {
    fn load(w: &Weights, i: usize, c: &BertConfig) -> Result<Self> {
        let p = format!("encoder.layer.{i}");
        let h = c.hidden_size;
        let eps = c.layer_norm_eps;
        Ok(Self {
            query: Linear::load(w, &format!("{p}.attention.self.query"), h, h)?,
            key: Linear::load(w, &format!("{p}.attention.self.key"), h, h)?,
            value: Linear::load(w, &format!("{p}.attention.self.value"), h, h)?,
            attention_out: Linear::load(w, &format!("{p}.attention.output.dense"), h, h)?,
            attention_norm: LayerNorm::load(w, &format!("{p}.attention.output.LayerNorm"), h, eps)?,
            intermediate: Linear::load(
                w,
                &format!("{p}.intermediate.dense"),
                h,
                c.intermediate_size,
            )?,
            output: Linear::load(w, &format!("{p}.output.dense"), c.intermediate_size, h)?,
            output_norm: LayerNorm::load(w, &format!("{p}.output.LayerNorm"), h, eps)?,
        })
    }

    /// `x`: `[batch, seq, hidden]`; `bias`: `[batch, 1, 1, seq]`, 0 for a
    /// real token and a large negative number for padding.
    fn forward(&self, x: &Tensor, bias: &Tensor, heads: usize) -> CResult<Tensor> {
        let (b, s, h) = x.dims3()?;
        let d = h / heads;
        let split = |t: Tensor| -> CResult<Tensor> {
            t.reshape((b, s, heads, d))?.transpose(1, 2)?.contiguous()
        };
        let q = split(self.query.forward(x)?)?;
        let k = split(self.key.forward(x)?)?;
        let v = split(self.value.forward(x)?)?;
        #[allow(clippy::cast_precision_loss)]
        let scale = 1.0 / (d as f64).sqrt();
        let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(bias)?;
        let probs = softmax_last(&scores)?;
        let context = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((b, s, h))?;
        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + x)?)?;
        let inner = self.intermediate.forward(&attended)?.gelu_erf()?;
        self.output_norm
            .forward(&(self.output.forward(&inner)? + attended)?)
    }
}

fn softmax_last(x: &Tensor) -> CResult<Tensor> {
    let max = x.max_keepdim(D::Minus1)?;
    let exp = x.broadcast_sub(&max)?.exp()?;
    let sum = exp.sum_keepdim(D::Minus1)?;
    exp.broadcast_div(&sum)
}

/// The whole encoder with its pooling head.
pub(crate) struct Bert {
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
}

/// A batch ready for the encoder: token ids and the attention mask, both
/// `batch x seq` (padded with id 0, mask 0).
pub(crate) struct Batch {
    pub(crate) ids: Vec<u32>,
    pub(crate) mask: Vec<u32>,
    pub(crate) batch: usize,
    pub(crate) seq: usize,
}

impl Bert {
    pub(crate) fn load(w: &Weights, c: &BertConfig) -> Result<Self> {
        let h = c.hidden_size;
        let word = w.get("embeddings.word_embeddings.weight", &[c.vocab_size, h])?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| Layer::load(w, i, c))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            word,
            position: w.get(
                "embeddings.position_embeddings.weight",
                &[c.max_position_embeddings, h],
            )?,
            token_type: w.get(
                "embeddings.token_type_embeddings.weight",
                &[c.type_vocab_size, h],
            )?,
            embedding_norm: LayerNorm::load(w, "embeddings.LayerNorm", h, c.layer_norm_eps)?,
            layers,
            heads: c.num_attention_heads,
        })
    }

    /// One L2-normalised mean-pooled vector per row of `batch`:
    /// `[batch, hidden]`.
    pub(crate) fn embed(&self, batch: &Batch) -> CResult<Tensor> {
        let (b, s) = (batch.batch, batch.seq);
        let dev = Device::Cpu;
        let ids = Tensor::from_slice(&batch.ids, (b * s,), &dev)?;
        let mask = Tensor::from_slice(&batch.mask, (b, s), &dev)?.to_dtype(DType::F32)?;
        let positions = Tensor::arange(0u32, u32::try_from(s).unwrap_or(u32::MAX), &dev)?;
        let hidden = self.word.dim(1)?;
        let words = self.word.index_select(&ids, 0)?.reshape((b, s, hidden))?;
        let pos = self.position.index_select(&positions, 0)?;
        let kind = self.token_type.get(0)?;
        let x = words.broadcast_add(&pos)?.broadcast_add(&kind)?;
        let mut x = self.embedding_norm.forward(&x)?;
        // 0 where the mask is 1, the most negative f32 where it is 0 (as
        // Hugging Face builds its extended attention mask).
        let bias = ((1.0 - &mask)? * f64::from(f32::MIN))?.reshape((b, 1, 1, s))?;
        for layer in &self.layers {
            x = layer.forward(&x, &bias, self.heads)?;
        }
        let weights = mask.unsqueeze(2)?;
        let summed = x.broadcast_mul(&weights)?.sum(1)?;
        let counts = weights.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norm)
    }
}
