//! Provisioning: solving and installing python, and the errors for versions and channels.

use std::time::Instant;

use wsp_backend::BackendError;

use crate::common::{backend, provision, Fixture};

#[tokio::test]
async fn provisions_the_newest_patch_of_a_minor() {
    let fixture = Fixture::new();
    let root = fixture.new_root("py312");

    let started = Instant::now();
    let provisioned = provision(&fixture.backend, &root, "3.12").await.unwrap();
    eprintln!("provisioned python 3.12 in {:?}", started.elapsed());

    assert_eq!(provisioned.python_full_version.to_string(), "3.12.1");
    assert_eq!(provisioned.interpreter_path, root.join("bin/python"));
    assert!(provisioned.interpreter_path.is_absolute());
    assert!(root.join("conda-meta/python-3.12.1-0.json").is_file());
    let channels = provisioned.extra["channels"].as_array().unwrap();
    assert_eq!(channels, &vec![serde_json::json!(fixture.channel.as_str())]);

    let output = std::process::Command::new(&provisioned.interpreter_path)
        .args(["-c", "import sys; print(sys.version_info[:3])"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "(3, 12, 1)");
}

#[tokio::test]
async fn provisions_an_exact_version() {
    let fixture = Fixture::new();
    let root = fixture.new_root("py311");

    let provisioned = provision(&fixture.backend, &root, "3.11.7").await.unwrap();

    assert_eq!(provisioned.python_full_version.to_string(), "3.11.7");
    assert!(root.join("conda-meta/python-3.11.7-0.json").is_file());
    assert!(!root.join("conda-meta/python-3.12.1-0.json").exists());
    assert!(root.join("bin/python3.11").exists());
}

#[tokio::test]
async fn a_version_the_channel_lacks_lists_the_available_ones() {
    let fixture = Fixture::new();
    for requested in ["3.99", "3.12.2", "3.10"] {
        let root = fixture.new_root(requested);
        let error = provision(&fixture.backend, &root, requested)
            .await
            .unwrap_err();
        match error {
            BackendError::VersionUnavailable {
                requested: echoed,
                available,
            } => {
                assert_eq!(echoed, requested);
                assert_eq!(available, ["3.11.7", "3.12.1"]);
            }
            other => panic!("{requested}: expected VersionUnavailable, got {other:?}"),
        }
        assert!(!root.join("conda-meta").exists(), "{requested}");
    }
}

#[tokio::test]
async fn a_channel_directory_that_does_not_exist_is_unavailable() {
    let fixture = Fixture::new();
    let missing = fixture.dir.path().join("no-such-channel");
    let url = url::Url::from_directory_path(&missing).unwrap();
    let backend = backend(&[url.to_string()], &fixture.dir.path().join("cache"));
    let root = fixture.new_root("unreachable");

    let error = provision(&backend, &root, "3.12").await.unwrap_err();

    match error {
        BackendError::Failed { reason, detail, .. } => {
            assert_eq!(reason, "channel-unavailable", "{detail}");
            assert!(detail.contains("no-such-channel"), "{detail}");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
}

#[tokio::test]
async fn a_malformed_channel_or_platform_fails_without_solving() {
    let fixture = Fixture::new();
    let root = fixture.new_root("malformed");
    let cache = fixture.dir.path().join("cache");

    let error = provision(&backend(&["not a channel[".into()], &cache), &root, "3.12")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, BackendError::Failed { reason, .. } if reason == "channel-unavailable"),
        "{error:?}"
    );

    let config = wsp_backend_conda::CondaConfig {
        channels: vec![fixture.channel.to_string()],
        cache_dir: cache,
        platform: Some("linux-potato".into()),
    };
    let error = provision(&wsp_backend_conda::CondaBackend::new(config), &root, "3.12")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, BackendError::Failed { reason, .. } if reason == "provision-failed"),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_platform_the_channel_does_not_serve_has_no_python() {
    let fixture = Fixture::new();
    let root = fixture.new_root("other-platform");
    let config = wsp_backend_conda::CondaConfig {
        channels: vec![fixture.channel.to_string()],
        cache_dir: fixture.dir.path().join("cache"),
        platform: Some("osx-arm64".into()),
    };

    let error = provision(&wsp_backend_conda::CondaBackend::new(config), &root, "3.12")
        .await
        .unwrap_err();

    match error {
        BackendError::VersionUnavailable { available, .. } => assert!(available.is_empty()),
        other => panic!("expected VersionUnavailable, got {other:?}"),
    }
}

#[tokio::test]
async fn an_https_channel_that_cannot_be_reached_is_unavailable() {
    let fixture = Fixture::new();
    let root = fixture.new_root("https");
    // Port 1 on the loopback interface refuses connections: no network is needed.
    let backend = backend(
        &["https://127.0.0.1:1/conda-forge".into()],
        &fixture.dir.path().join("cache"),
    );

    let error = provision(&backend, &root, "3.12").await.unwrap_err();

    match error {
        BackendError::Failed { reason, detail, .. } => {
            assert_eq!(reason, "channel-unavailable", "{detail}");
            assert!(detail.contains("127.0.0.1"), "{detail}");
            let without_tls = detail.contains("no TLS support");
            assert_eq!(without_tls, !cfg!(feature = "https"), "{detail}");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
}
