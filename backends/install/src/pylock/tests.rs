//! Tests of `pylock`.

use super::*;
use crate::sources::Recorded;
use wsp_protocol::Package;

#[test]
fn what_is_written_reads_back() {
    let installed = [
        Package {
            name: "Demo".into(),
            version: "1.0".into(),
        },
        Package {
            name: "other".into(),
            version: "2.0".into(),
        },
        Package {
            name: "pip".into(),
            version: "24.0".into(),
        },
    ];
    let mut sources = Sources::new();
    let origin = Origin::File {
        location: "/w/demo-1.0-py3-none-any.whl".into(),
        sha256: Some("ab".repeat(32)),
    };
    let version = "1.0".to_owned();
    sources.insert("demo".into(), Recorded { version, origin });
    let url = "https://example.org/simple".to_owned();
    let origin = Origin::Index { url: url.clone() };
    let version = "2.0".to_owned();
    sources.insert("other".into(), Recorded { version, origin });
    let text = write(&installed, &sources, &KnownIndexFiles::new());
    assert!(text.contains("lock-version = \"1.0\""), "{text}");
    let locked = read(&text, None).expect("reads back");
    assert_eq!(
        locked.iter().map(|l| l.from.clone()).collect::<Vec<_>>(),
        [
            LockedSource::File {
                location: "/w/demo-1.0-py3-none-any.whl".into(),
                sha256: Some("ab".repeat(32))
            },
            LockedSource::Index {
                url,
                sha256: vec![]
            },
            LockedSource::Anywhere,
        ]
    );
    assert!(read("lock-version = \"2.0\"", None).is_err());
    assert!(read("not toml [", None).is_err());
}

const UV_LOCK: &str = r#"
lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.12"

[[packages]]
name = "Other"
version = "2.0"
sdist = { url = "https://files.example.org/other-2.0.tar.gz", hashes = { sha256 = "CC" } }
wheels = [
{ url = "https://files.example.org/other-2.0-py3-none-any.whl", hashes = { sha256 = "DD" } },
{ url = "https://files.example.org/other-2.0-cp312-none-any.whl", hashes = { md5 = "00" } },
]
"#;

#[test]
fn an_index_sourced_entry_lists_the_index_files_and_reads_back_as_their_hashes() {
    let uv_lock = UV_LOCK
        .replace("CC", &"c".repeat(64))
        .replace("DD", &"D".repeat(64));
    let known = index_files_in(&uv_lock).expect("uv's lock reads");
    assert_eq!(known.len(), 1);
    let files = &known[&("other".to_owned(), "2.0".to_owned())];
    assert_eq!(
        files.wheels.len(),
        1,
        "the file without a sha256 is left out"
    );
    let installed = [Package {
        name: "other".into(),
        version: "2.0".into(),
    }];
    let mut sources = Sources::new();
    let url = "https://example.org/simple".to_owned();
    let origin = Origin::Index { url: url.clone() };
    let version = "2.0".to_owned();
    sources.insert("other".into(), Recorded { version, origin });
    let text = write(&installed, &sources, &known);
    assert!(text.contains("other-2.0-py3-none-any.whl"), "{text}");
    let locked = read(&text, None).expect("reads back");
    assert_eq!(
        locked[0].from,
        LockedSource::Index {
            url,
            sha256: vec!["d".repeat(64), "c".repeat(64)]
        }
    );
    let other_version = [Package {
        name: "other".into(),
        version: "2.1".into(),
    }];
    let text = write(&other_version, &sources, &known);
    assert!(!text.contains("files.example.org"), "{text}");
}

#[test]
fn names_versions_and_hashes_that_are_not_are_refused() {
    let entry = |name: &str, version: &str, hash: &str| {
        format!(
            "lock-version = \"1.0\"\n[[packages]]\nname = {name:?}\nversion = {version:?}\n\
             index = \"https://example.org/simple\"\n\
             wheels = [{{ url = \"https://example.org/a.whl\", hashes = {{ sha256 = {hash:?} }} }}]\n"
        )
    };
    let good = "e".repeat(64);
    assert!(read(&entry("ok.name_1", "1!2.0+local.3", &good), None).is_ok());
    for (name, version, hash) in [
        ("x\n--index-url", "1.0", good.as_str()),
        ("-x", "1.0", &good),
        ("x", "1.0 ; python_version > '3'", &good),
        ("x", "1.0\n-r /etc/passwd", &good),
        ("x", "", &good),
        ("x", "1.0", "abc"),
        ("x", "1.0", &format!("{}\n", &good[1..])),
    ] {
        let refused = read(&entry(name, version, hash), None);
        assert!(
            refused.is_err(),
            "{name:?} {version:?} {hash:?}: {refused:?}"
        );
    }
}
