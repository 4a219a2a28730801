use std::os::unix::fs::symlink;

use pretty_assertions::assert_eq;

use super::*;

fn setup() -> (tempfile::TempDir, PathBuf, ConfinedDir) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(tmp.path().join("secret.key"), b"top secret").unwrap();
    let dir = ConfinedDir::open(&root, "/workspace").unwrap();
    (tmp, root, dir)
}

#[test]
fn reads_and_writes_inside() {
    let (_tmp, root, dir) = setup();
    dir.write(Path::new("a/b/c.txt"), b"hello").unwrap();
    assert_eq!(std::fs::read(root.join("a/b/c.txt")).unwrap(), b"hello");
    assert_eq!(dir.read(Path::new("a/b/c.txt"), 100).unwrap(), b"hello");
    dir.append(Path::new("a/b/c.txt"), b" world").unwrap();
    assert_eq!(
        dir.read(Path::new("a/b/c.txt"), 100).unwrap(),
        b"hello world"
    );
    dir.write_atomic(Path::new("a/d.txt"), b"atomic").unwrap();
    assert_eq!(std::fs::read(root.join("a/d.txt")).unwrap(), b"atomic");
    assert!(dir.metadata(Path::new("a")).unwrap().is_dir());
}

#[test]
fn parent_components_cannot_climb_out() {
    let (_tmp, _root, dir) = setup();
    let err = dir.read(Path::new("../secret.key"), 100).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
    assert!(err.to_string().contains("outside the workspace"), "{err}");
    assert!(!err.to_string().contains("ws"), "host path leaked: {err}");
    let err = dir.write(Path::new("x/../../evil"), b"x").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
}

#[test]
fn links_leading_outside_are_refused_for_every_operation() {
    let (tmp, root, dir) = setup();
    symlink("/", root.join("slash")).unwrap();
    symlink(tmp.path(), root.join("up")).unwrap();
    symlink("../secret.key", root.join("key")).unwrap();
    for rel in ["slash/etc/hostname", "up/secret.key", "key"] {
        let err = dir.read(Path::new(rel), 100).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{rel}: {err}");
        assert!(dir.metadata(Path::new(rel)).is_err(), "{rel}");
    }
    assert!(dir.write(Path::new("up/planted"), b"x").is_err());
    assert!(dir.append(Path::new("key"), b"x").is_err());
    assert!(dir.create_dir_all(Path::new("up/newdir")).is_err());
    assert!(!tmp.path().join("planted").exists());
    assert!(!tmp.path().join("newdir").exists());
    assert_eq!(
        std::fs::read(tmp.path().join("secret.key")).unwrap(),
        b"top secret"
    );
}

#[test]
fn an_atomic_write_replaces_a_link_instead_of_writing_through_it() {
    let (tmp, root, dir) = setup();
    symlink(tmp.path().join("secret.key"), root.join("out.txt")).unwrap();
    dir.write_atomic(Path::new("out.txt"), b"new").unwrap();
    assert_eq!(
        std::fs::read(tmp.path().join("secret.key")).unwrap(),
        b"top secret"
    );
    assert!(
        !std::fs::symlink_metadata(root.join("out.txt"))
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn links_that_stay_inside_are_followed() {
    let (_tmp, root, dir) = setup();
    std::fs::create_dir_all(root.join("real")).unwrap();
    std::fs::write(root.join("real/f.txt"), b"x").unwrap();
    symlink("real", root.join("alias")).unwrap();
    assert_eq!(dir.read(Path::new("alias/f.txt"), 10).unwrap(), b"x");
}

#[test]
fn special_files_and_oversized_files_are_refused() {
    let (_tmp, root, dir) = setup();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("fifo"),
        FileType::Fifo,
        Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let err = dir.read(Path::new("fifo"), 100).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
    assert!(dir.write(Path::new("fifo"), b"x").is_err());
    std::fs::write(root.join("big"), vec![b'x'; 101]).unwrap();
    let err = dir.read(Path::new("big"), 100).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::FileTooLarge, "{err}");
    let err = dir.read(Path::new(""), 100).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::IsADirectory, "{err}");
}

#[test]
fn remove_all_removes_links_not_their_targets() {
    let (tmp, root, dir) = setup();
    std::fs::create_dir_all(root.join("t/sub")).unwrap();
    std::fs::write(root.join("t/sub/f"), b"x").unwrap();
    symlink(tmp.path(), root.join("t/up")).unwrap();
    dir.remove_all(Path::new("t")).unwrap();
    assert!(!root.join("t").exists());
    assert!(tmp.path().join("secret.key").exists());
    dir.remove_all(Path::new("missing")).unwrap();
}

#[test]
fn list_reports_kinds_without_following_links() {
    let (_tmp, root, dir) = setup();
    std::fs::create_dir_all(root.join("d")).unwrap();
    std::fs::write(root.join("f"), b"x").unwrap();
    symlink("/", root.join("l")).unwrap();
    assert_eq!(
        dir.list(Path::new("")).unwrap(),
        [
            ("d".to_owned(), EntryKind::Dir),
            ("f".to_owned(), EntryKind::File),
            ("l".to_owned(), EntryKind::Symlink)
        ]
    );
    assert!(dir.list(Path::new("nope")).unwrap().is_empty());
}

#[test]
fn a_bounded_listing_reads_no_more_than_asked_and_says_so() {
    let (_tmp, root, dir) = setup();
    for n in 0..5 {
        std::fs::write(root.join(format!("f{n}")), b"x").unwrap();
    }
    let (some, more) = dir.list_at_most(Path::new(""), 3).unwrap();
    assert_eq!(some.len(), 3);
    assert!(more);
    let (all, more) = dir.list_at_most(Path::new(""), 5).unwrap();
    assert_eq!(all.len(), 5);
    assert!(!more);
}
