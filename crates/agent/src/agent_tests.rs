//! Tests of the agent builder.

#![allow(clippy::unwrap_used)]

use super::*;
use oxiscope_test_support::ScriptedModel;

fn model() -> Arc<dyn DynChatModel> {
    Arc::new(ScriptedModel::new([]))
}

#[test]
fn agents_built_from_one_prompt_and_the_defaults_share_them() {
    let prompt: Arc<str> = Arc::from("You are Friday.");
    let build = || {
        Agent::builder("Friday", model())
            .system_prompt(Arc::clone(&prompt))
            .build()
            .unwrap()
    };
    let (a, b) = (build(), build());
    assert!(Arc::ptr_eq(&a.inner.system_prompt, &b.inner.system_prompt));
    assert!(Arc::ptr_eq(&a.inner.toolkit, &b.inner.toolkit));
    assert!(Arc::ptr_eq(&a.inner.backend, &b.inner.backend));
    assert!(Arc::ptr_eq(&a.inner.react, &b.inner.react));
    assert!(Arc::ptr_eq(&a.inner.context, &b.inner.context));
    assert!(Arc::ptr_eq(&a.inner.injection, &b.inner.injection));
    assert_eq!(&*a.inner.system_prompt, "You are Friday.");
}

#[test]
fn given_parts_are_used_instead_of_the_shared_defaults() {
    let react = ReActConfig {
        max_iters: 3,
        ..ReActConfig::default()
    };
    let a = Agent::builder("Friday", model())
        .system_prompt(String::from("Owned."))
        .react_config(react.clone())
        .workdir("/tmp")
        .build()
        .unwrap();
    assert_eq!(&*a.inner.react, &react);
    assert_eq!(&*a.inner.system_prompt, "Owned.");
    assert_eq!(a.inner.workdir, PathBuf::from("/tmp"));
    let plain = Agent::builder("Friday", model()).build().unwrap();
    assert_eq!(&*plain.inner.system_prompt, "");
    assert_eq!(
        plain.inner.react.max_iters,
        ReActConfig::default().max_iters
    );
}
