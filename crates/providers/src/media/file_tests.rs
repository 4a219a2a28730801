use std::os::unix::fs::symlink;
use std::sync::mpsc;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;

/// A workspace with `img.png` (4 bytes) and a secret next to it, outside.
struct Dirs {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let outside = tmp.path().join("data");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("img.png"), b"\x89PNG").unwrap();
    std::fs::write(outside.join("secret.key"), b"hunter2").unwrap();
    Dirs {
        _tmp: tmp,
        root,
        outside,
    }
}

fn confined(root: &Path) -> MediaPolicy {
    MediaPolicy::default().with_file_roots(vec![root.to_path_buf()])
}

fn url(path: &Path) -> Url {
    Url::from_file_path(path).unwrap()
}

fn read_str(url: &str, policy: &MediaPolicy) -> Result<Vec<u8>, String> {
    read(&Url::parse(url).unwrap(), policy)
}

#[test]
fn a_file_inside_a_root_is_read() {
    let d = dirs();
    let got = read(&url(&d.root.join("img.png")), &confined(&d.root));
    assert_eq!(got, Ok(b"\x89PNG".to_vec()));
}

#[test]
fn a_file_outside_the_roots_is_refused_like_a_missing_one() {
    let d = dirs();
    let policy = confined(&d.root);
    let outside = read(&url(&d.outside.join("secret.key")), &policy);
    let missing = read(&url(&d.root.join("nope.png")), &policy);
    assert_eq!(outside, Err(NOT_IN_ROOTS.to_owned()));
    assert_eq!(missing, outside);
}

#[test]
fn dot_dot_cannot_climb_out_of_a_root() {
    let d = dirs();
    let policy = confined(&d.root);
    let root = d.root.display();
    for escape in [
        format!("file://{root}/../data/secret.key"),
        format!("file://{root}/sub/../../data/secret.key"),
        format!("file://{root}/%2e%2e/data/secret.key"),
    ] {
        assert_eq!(
            read_str(&escape, &policy),
            Err(NOT_IN_ROOTS.to_owned()),
            "{escape}"
        );
    }
}

#[test]
fn a_link_inside_a_root_pointing_out_is_refused() {
    let d = dirs();
    symlink(d.outside.join("secret.key"), d.root.join("innocent.png")).unwrap();
    symlink(&d.outside, d.root.join("sub/linked-dir")).unwrap();
    let policy = confined(&d.root);
    assert_eq!(
        read(&url(&d.root.join("innocent.png")), &policy),
        Err(NOT_IN_ROOTS.to_owned())
    );
    assert_eq!(
        read(&url(&d.root.join("sub/linked-dir/secret.key")), &policy),
        Err(NOT_IN_ROOTS.to_owned())
    );
}

#[test]
fn links_inside_a_root_and_a_linked_root_are_followed() {
    let d = dirs();
    symlink(d.root.join("img.png"), d.root.join("sub/alias.png")).unwrap();
    let linked_root = d.outside.join("ws-link");
    symlink(&d.root, &linked_root).unwrap();
    assert_eq!(
        read(&url(&d.root.join("sub/alias.png")), &confined(&d.root)),
        Ok(b"\x89PNG".to_vec())
    );
    assert_eq!(
        read(&url(&linked_root.join("img.png")), &confined(&linked_root)),
        Ok(b"\x89PNG".to_vec())
    );
}

#[test]
fn no_roots_refuse_every_file_and_none_allow_any() {
    let d = dirs();
    let none = MediaPolicy::default().with_file_roots(Vec::new());
    let err = read(&url(&d.root.join("img.png")), &none).unwrap_err();
    assert!(err.contains("not read here"), "{err}");
    assert_eq!(
        read(&url(&d.outside.join("secret.key")), &MediaPolicy::default()),
        Ok(b"hunter2".to_vec())
    );
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let d = dirs();
    let fifo = d.root.join("pipe.png");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (tx, rx) = mpsc::channel();
    let target = url(&fifo);
    let root = d.root;
    std::thread::spawn(move || {
        let confined = read(&target, &confined(&root));
        let open = read(&target, &MediaPolicy::default());
        let _ = tx.send((confined, open));
    });
    let (confined, open) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("reading a FIFO hung");
    assert_eq!(confined, Err("not a regular file (a FIFO)".to_owned()));
    assert_eq!(open, confined);
}

#[test]
fn devices_and_directories_are_refused() {
    let d = dirs();
    assert_eq!(
        read_str("file:///dev/zero", &MediaPolicy::default()),
        Err("not a regular file (a character device)".to_owned())
    );
    assert_eq!(
        read(&url(&d.root.join("sub")), &confined(&d.root)),
        Err("not a regular file (a directory)".to_owned())
    );
}

#[test]
fn a_file_over_the_cap_is_refused_and_one_at_the_cap_read() {
    let d = dirs();
    let at_cap = confined(&d.root).with_limits(4, Duration::from_secs(1));
    let below = confined(&d.root).with_limits(3, Duration::from_secs(1));
    let img = url(&d.root.join("img.png"));
    assert_eq!(read(&img, &at_cap), Ok(b"\x89PNG".to_vec()));
    assert_eq!(read(&img, &below), Err("larger than 3 bytes".to_owned()));
}

#[test]
fn a_remote_file_host_is_not_a_local_path() {
    let err = read_str("file://fileserver/share/a.png", &MediaPolicy::default());
    assert_eq!(err, Err("not a local file path".to_owned()));
}

#[cfg(target_os = "linux")]
#[test]
fn an_open_file_is_judged_by_where_it_really_is() {
    let d = dirs();
    let roots = canonical_roots(std::slice::from_ref(&d.root));
    let inside_file = File::open(d.root.join("img.png")).unwrap();
    let outside_file = File::open(d.outside.join("secret.key")).unwrap();
    assert!(opened_inside(&inside_file, &roots));
    assert!(!opened_inside(&outside_file, &roots));
}
