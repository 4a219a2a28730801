//! Chat models kept between runs: a run of a session reuses the model (its
//! HTTP connections, its formatted-request cache) that the previous run of
//! the same credential, model config and media policy built.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use oxiscope_model::DynChatModel;
use oxiscope_providers::{Endpoints, MediaPolicy, RemoteMedia};
use oxiscope_storage::CredentialRecord;

use crate::api::ChatModelConfig;

/// How many models are kept; the least recently used goes first. Each holds
/// its own capped request cache, so this also bounds that memory.
const CAPACITY: usize = 16;

/// A small most-recently-used list of built models.
#[derive(Debug, Default)]
pub struct ModelCache {
    slots: Mutex<VecDeque<(u64, Arc<dyn DynChatModel>)>>,
}

/// The media policy of a tenant's model: `file://` media only from the
/// session's workspace directory (on the host), `http(s)` media as
/// `remote` says, model endpoints as `endpoints` says.
pub fn media_policy(
    workspace_dir: PathBuf,
    remote: RemoteMedia,
    endpoints: Endpoints,
) -> MediaPolicy {
    MediaPolicy {
        file_roots: Some(vec![workspace_dir]),
        remote,
        endpoints,
        ..MediaPolicy::default()
    }
}

/// The key of a model: the credential as stored (a rotated secret seals
/// differently, so it builds a new model), the whole model config and the
/// media policy (a model reads files of one workspace only, and calls the
/// endpoints it allows: a model built while private endpoints were allowed
/// is not reused once they are not).
pub fn key(record: &CredentialRecord, config: &ChatModelConfig, media: &MediaPolicy) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    record.user_id.hash(&mut h);
    record.id.hash(&mut h);
    record.sealed.hash(&mut h);
    serde_json::to_string(config)
        .unwrap_or_default()
        .hash(&mut h);
    media.hash(&mut h);
    h.finish()
}

impl ModelCache {
    /// The model for `key`, built with `make` when none is kept.
    ///
    /// # Errors
    /// What `make` returns (nothing is kept then).
    pub fn get_or_build<E>(
        &self,
        key: u64,
        make: impl FnOnce() -> Result<Arc<dyn DynChatModel>, E>,
    ) -> Result<Arc<dyn DynChatModel>, E> {
        let lock = || self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        {
            let mut slots = lock();
            if let Some(at) = slots.iter().position(|(k, _)| *k == key) {
                let hit = slots.remove(at);
                if let Some((k, model)) = hit {
                    slots.push_front((k, Arc::clone(&model)));
                    return Ok(model);
                }
            }
        }
        // Built outside the lock; two runs racing build twice, harmlessly.
        let model = make()?;
        let mut slots = lock();
        if !slots.iter().any(|(k, _)| *k == key) {
            slots.push_front((key, Arc::clone(&model)));
            slots.truncate(CAPACITY);
        }
        Ok(model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxiscope_model::ModelError;
    use oxiscope_test_support::ScriptedModel;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn build(count: &AtomicUsize) -> Result<Arc<dyn DynChatModel>, ModelError> {
        count.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(ScriptedModel::new([])))
    }

    #[test]
    fn a_model_is_built_once_per_key_and_the_oldest_goes_first() {
        let cache = ModelCache::default();
        let built = AtomicUsize::new(0);
        let a = cache.get_or_build(1, || build(&built)).unwrap();
        let again = cache.get_or_build(1, || build(&built)).unwrap();
        assert!(Arc::ptr_eq(&a, &again));
        assert_eq!(built.load(Ordering::SeqCst), 1);
        for k in 2..=(CAPACITY as u64 + 1) {
            cache.get_or_build(k, || build(&built)).unwrap();
        }
        // Key 1 was the least recently used: rebuilt.
        let rebuilt = cache.get_or_build(1, || build(&built)).unwrap();
        assert!(!Arc::ptr_eq(&a, &rebuilt));
        let failed = cache.get_or_build(999, || {
            Err(ModelError::InvalidRequest {
                message: "no".into(),
            })
        });
        assert!(failed.is_err());
        assert!(cache.get_or_build(999, || build(&built)).is_ok());
    }

    #[test]
    fn a_rotated_secret_another_config_workspace_or_endpoint_rule_is_another_key() {
        let record = CredentialRecord {
            id: "c".into(),
            user_id: "u".into(),
            created_at: String::new(),
            updated_at: String::new(),
            sealed: "sealed-1".into(),
        };
        let config: ChatModelConfig = serde_json::from_value(serde_json::json!({
            "type": "openai_credential", "credential_id": "c", "model": "gpt-4o"
        }))
        .unwrap();
        let mut rotated = record.clone();
        rotated.sealed = "sealed-2".into();
        let mut other = config.clone();
        other.model = "gpt-4.1".into();
        let policy = |ws: &str, remote, endpoints| media_policy(ws.into(), remote, endpoints);
        let media = policy(
            "/data/ws/u/w1",
            RemoteMedia::PublicOnly,
            Endpoints::PublicOnly,
        );
        let other_ws = policy(
            "/data/ws/u/w2",
            RemoteMedia::PublicOnly,
            Endpoints::PublicOnly,
        );
        let no_remote = policy("/data/ws/u/w1", RemoteMedia::Deny, Endpoints::PublicOnly);
        let private = policy("/data/ws/u/w1", RemoteMedia::PublicOnly, Endpoints::Any);
        assert_eq!(
            key(&record, &config, &media),
            key(&record, &config.clone(), &media.clone())
        );
        assert_ne!(
            key(&record, &config, &media),
            key(&rotated, &config, &media)
        );
        assert_ne!(key(&record, &config, &media), key(&record, &other, &media));
        assert_ne!(
            key(&record, &config, &media),
            key(&record, &config, &other_ws)
        );
        assert_ne!(
            key(&record, &config, &media),
            key(&record, &config, &no_remote)
        );
        assert_ne!(
            key(&record, &config, &media),
            key(&record, &config, &private)
        );
    }
}
