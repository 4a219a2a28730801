//! Knowledge bases and their documents: owner scoping, status updates,
//! cascading deletes, the unfinished documents a restart resumes.

use oxiscope_storage::{Error, KnowledgeBaseRecord, KnowledgeDocumentRecord, new_id, now};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::backends::{Site, storage_tests};

storage_tests!(
    knowledge_bases_are_scoped_to_their_owner,
    document_statuses_change_and_unfinished_ones_survive_a_reopen,
    deleting_a_knowledge_base_takes_its_documents,
);

fn kb(user: &str, name: &str) -> KnowledgeBaseRecord {
    KnowledgeBaseRecord {
        id: new_id(),
        user_id: user.into(),
        name: name.into(),
        data: json!({"embedding_model_config": {"type": "local", "credential_id": "local", "model": "m", "dimensions": 8}}),
        created_at: now(),
        updated_at: now(),
    }
}

fn doc(kb: &KnowledgeBaseRecord, filename: &str) -> KnowledgeDocumentRecord {
    KnowledgeDocumentRecord {
        id: new_id(),
        knowledge_base_id: kb.id.clone(),
        user_id: kb.user_id.clone(),
        filename: filename.into(),
        content_type: Some("text/plain".into()),
        size: 42,
        status: "pending".into(),
        error: None,
        chunk_count: 0,
        created_at: now(),
        updated_at: now(),
    }
}

async fn knowledge_bases_are_scoped_to_their_owner(site: &Site) {
    let store = site.open().await;
    let a = kb("alice", "Cats ☀");
    let b = kb("bob", "Dogs");
    store.create_knowledge_base(&a).await.unwrap();
    store.create_knowledge_base(&b).await.unwrap();
    assert_eq!(
        store.list_knowledge_bases("alice").await.unwrap(),
        vec![a.clone()]
    );
    assert_eq!(store.get_knowledge_base("bob", &a.id).await.unwrap(), None);
    assert_eq!(
        store.get_knowledge_base("alice", &a.id).await.unwrap(),
        Some(a.clone())
    );

    let mut renamed = a.clone();
    renamed.name = "Felines".into();
    store.update_knowledge_base(&renamed).await.unwrap();
    assert_eq!(
        store
            .get_knowledge_base("alice", &a.id)
            .await
            .unwrap()
            .unwrap()
            .name,
        "Felines"
    );
    // Another user cannot rename it.
    let mut stolen = renamed.clone();
    stolen.user_id = "bob".into();
    assert!(matches!(
        store.update_knowledge_base(&stolen).await,
        Err(Error::NotFound { .. })
    ));
    assert!(!store.delete_knowledge_base("bob", &a.id).await.unwrap());
    assert!(store.delete_knowledge_base("alice", &a.id).await.unwrap());
    assert!(
        store
            .list_knowledge_bases("alice")
            .await
            .unwrap()
            .is_empty()
    );
}

async fn document_statuses_change_and_unfinished_ones_survive_a_reopen(site: &Site) {
    let store = site.open().await;
    let base = kb("alice", "Docs");
    store.create_knowledge_base(&base).await.unwrap();
    let (one, two, three) = (
        doc(&base, "a.txt"),
        doc(&base, "b.pdf"),
        doc(&base, "c.docx"),
    );
    for d in [&one, &two, &three] {
        store.create_knowledge_document(d).await.unwrap();
    }
    assert!(
        store
            .set_knowledge_document_status(&one.id, "ready", None, 7)
            .await
            .unwrap()
    );
    assert!(
        store
            .set_knowledge_document_status(&two.id, "error", Some("not a PDF"), 0)
            .await
            .unwrap()
    );
    assert!(
        store
            .set_knowledge_document_status(&three.id, "indexing", None, 0)
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_knowledge_document_status("missing", "ready", None, 1)
            .await
            .unwrap()
    );

    let store = site.open().await;
    let got = store
        .get_knowledge_document("alice", &base.id, &one.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((got.status.as_str(), got.chunk_count), ("ready", 7));
    let failed = store
        .get_knowledge_document("alice", &base.id, &two.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.error.as_deref(), Some("not a PDF"));
    assert_eq!(
        store
            .get_knowledge_document("bob", &base.id, &one.id)
            .await
            .unwrap(),
        None
    );
    let unfinished: Vec<String> = store
        .unfinished_knowledge_documents()
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(unfinished, vec![three.id.clone()]);
    let listed: Vec<String> = store
        .list_knowledge_documents("alice", &base.id)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.filename)
        .collect();
    assert_eq!(listed, vec!["a.txt", "b.pdf", "c.docx"]);
    assert!(
        !store
            .delete_knowledge_document("bob", &base.id, &one.id)
            .await
            .unwrap()
    );
    assert!(
        store
            .delete_knowledge_document("alice", &base.id, &one.id)
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .list_knowledge_documents("alice", &base.id)
            .await
            .unwrap()
            .len(),
        2
    );
}

async fn deleting_a_knowledge_base_takes_its_documents(site: &Site) {
    let store = site.open().await;
    let (keep, gone) = (kb("alice", "Keep"), kb("alice", "Gone"));
    store.create_knowledge_base(&keep).await.unwrap();
    store.create_knowledge_base(&gone).await.unwrap();
    let kept = doc(&keep, "k.txt");
    store.create_knowledge_document(&kept).await.unwrap();
    store
        .create_knowledge_document(&doc(&gone, "g.txt"))
        .await
        .unwrap();
    assert!(
        store
            .delete_knowledge_base("alice", &gone.id)
            .await
            .unwrap()
    );
    assert!(
        store
            .list_knowledge_documents("alice", &gone.id)
            .await
            .unwrap()
            .is_empty()
    );
    let unfinished = store.unfinished_knowledge_documents().await.unwrap();
    assert_eq!(unfinished, vec![kept]);
}
