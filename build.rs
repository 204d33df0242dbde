//! Links the `wsp` binary: position-dependent on Linux with glibc, and in release builds with
//! the functions a server runs laid out together.
//!
//! A position-independent executable is relocated by the dynamic loader at every start: it reads
//! about 1 MB of relocations and writes every page of its relocated data, and with it the
//! kernel maps the file's pages around each one it touches. That was a quarter of an idle
//! `wsp serve`'s memory (BENCHMARKS.md, "Idle RSS"). A position-dependent one needs none of it.
//! The price is that the executable's own code and data sit at fixed addresses (its libraries,
//! heap, stack and mappings stay randomized). A build that must be position-independent (a
//! distribution's policy, say) sets `WSP_BUILD_PIE=1`.
//!
//! The kernel maps 64 KiB of a file's cached pages around each page a process touches, so the
//! few hundred functions a server runs, spread over 28 MB of code, kept 6 MiB of it resident.
//! `src/symbol-order.txt` names them (`bench/symbol_order.py` writes it from a profile), and a
//! release build hands it to the linker, which places them first and together. That needs
//! LLD, the linker rustc uses on x86_64 Linux since 1.90: the file is used there unless a
//! linker is configured (`WSP_BUILD_SYMBOL_ORDER=0` turns it off). A name the file has and the
//! build lacks (a dependency or the compiler changed) only leaves that function in place.

use std::process::Command;

const SYMBOL_ORDER: &str = "src/symbol-order.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={SYMBOL_ORDER}");
    println!("cargo:rerun-if-env-changed=WSP_BUILD_PIE");
    println!("cargo:rerun-if-env-changed=WSP_BUILD_SYMBOL_ORDER");
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if linux_gnu && var("WSP_BUILD_PIE") != "1" {
        println!("cargo:rustc-link-arg-bin=wsp=-no-pie");
    }
    let order = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join(SYMBOL_ORDER);
    let ordered = var("PROFILE") == "release" && var("WSP_BUILD_SYMBOL_ORDER") != "0";
    if ordered && order.is_file() && links_with_lld() {
        println!(
            "cargo:rustc-link-arg-bin=wsp=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bin=wsp=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the binary is linked by rustc's own LLD: the target is x86_64 Linux with glibc, the
/// compiler is 1.90 or later, and neither a linker nor linker features are configured.
fn links_with_lld() -> bool {
    if var("TARGET") != "x86_64-unknown-linux-gnu" || std::env::var_os("RUSTC_LINKER").is_some() {
        return false;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if flags.contains("linker") || flags.contains("link-self-contained") {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let Ok(output) = Command::new(rustc).arg("--version").output() else {
        return false;
    };
    let version = String::from_utf8_lossy(&output.stdout);
    let mut numbers = version
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .split('.')
        .map(|part| part.parse::<u32>().unwrap_or(0));
    let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    (major, minor) >= (1, 90)
}

/// The build environment's `key`, empty when unset.
fn var(key: &str) -> String {
    std::env::var(key).unwrap_or_default()
}
