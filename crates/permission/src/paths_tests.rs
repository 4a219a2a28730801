use super::*;

fn env() -> PathEnv {
    PathEnv::new("/proj/app", Some(PathBuf::from("/home/me"))).with_symlinks_followed(false)
}

#[test]
fn resolves_relative_tilde_and_dot_dot() {
    let env = env();
    assert_eq!(env.resolve("src/x"), Some(PathBuf::from("/proj/app/src/x")));
    assert_eq!(env.resolve("../b"), Some(PathBuf::from("/proj/b")));
    assert_eq!(env.resolve("~"), Some(PathBuf::from("/home/me")));
    assert_eq!(
        env.resolve("~/.ssh/x"),
        Some(PathBuf::from("/home/me/.ssh/x"))
    );
    assert_eq!(env.resolve("~bob/x"), None);
    assert_eq!(env.resolve("/../../etc"), Some(PathBuf::from("/etc")));
}

#[test]
fn within_is_component_wise() {
    let roots = vec![PathBuf::from("/proj/app")];
    assert!(is_within(Path::new("/proj/app/x"), &roots));
    assert!(is_within(Path::new("/proj/app"), &roots));
    assert!(!is_within(Path::new("/proj/application"), &roots));
}

#[test]
fn dangerous_paths_match_files_and_directories_case_insensitively() {
    let list = DangerousPaths::default();
    for hit in [
        "/p/.env",
        "/p/.ENV",
        "/p/.env.production",
        "/h/.ssh",
        "/p/.git/index",
        "/h/.bashrc",
    ] {
        assert!(list.matches(Path::new(hit)), "{hit}");
    }
    for miss in [
        "/p/.gitignore",
        "/p/src/env.rs",
        "/p/.github/x",
        "/p/backup.env",
    ] {
        assert!(!list.matches(Path::new(miss)), "{miss}");
    }
    let extended = DangerousPaths::default()
        .with_file(".secrets")
        .with_directory(".creds/");
    assert!(extended.matches(Path::new("/p/.secrets")));
    assert!(extended.matches(Path::new("/p/.creds/x")));
}

#[test]
fn symlinks_of_existing_prefixes_are_followed() {
    let dir = std::env::temp_dir().join(format!("oxiscope-perm-{}", std::process::id()));
    let _ = std::fs::create_dir_all(dir.join("real"));
    let link = dir.join("link");
    let _ = std::fs::remove_file(&link);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc", &link).unwrap();
        let env = PathEnv::new(&dir, None);
        let resolved = env.resolve("link/new-file").unwrap();
        assert!(resolved.starts_with("/etc"), "{resolved:?}");
        let _ = std::fs::remove_file(&link);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
