//! Reading `model.safetensors` into named tensors, with or without the
//! `bert.` key prefix, checking every shape against the config.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor};

use crate::error::{Error, Result};

/// The tensors of a safetensors file, looked up by their name without the
/// `bert.` prefix.
pub(crate) struct Weights {
    tensors: HashMap<String, Tensor>,
    path: PathBuf,
}

impl Weights {
    /// Reads the whole file into memory (no memory map: the crate has no
    /// unsafe code) and parses it.
    pub(crate) fn read(path: &Path) -> Result<Self> {
        let bytes = crate::files::read(path)?;
        let tensors = candle_core::safetensors::load_buffer(&bytes, &Device::Cpu)
            .map_err(|e| Error::corrupt(path, e))?;
        Ok(Self {
            tensors,
            path: path.to_owned(),
        })
    }

    /// The tensor `name` (or `bert.<name>`) as `f32`, which must have
    /// `shape`.
    pub(crate) fn get(&self, name: &str, shape: &[usize]) -> Result<Tensor> {
        let tensor = self
            .tensors
            .get(name)
            .or_else(|| self.tensors.get(&format!("bert.{name}")))
            .ok_or_else(|| Error::corrupt(&self.path, format!("the tensor {name} is missing")))?;
        if tensor.dims() != shape {
            return Err(Error::corrupt(
                &self.path,
                format!(
                    "the tensor {name} has shape {:?}, expected {shape:?}",
                    tensor.dims()
                ),
            ));
        }
        tensor
            .to_dtype(candle_core::DType::F32)
            .map_err(|e| Error::corrupt(&self.path, e))
    }
}
