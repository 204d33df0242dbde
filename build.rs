//! Links the `wsp` binary as a position-dependent executable on Linux with glibc.
//!
//! A position-independent executable is relocated by the dynamic loader at every start: it reads
//! about 1 MB of relocations and writes every page of its relocated data, and with it the
//! kernel maps the file's pages around each one it touches. That was a quarter of an idle
//! `wsp serve`'s memory (BENCHMARKS.md, "Idle RSS"). A position-dependent one needs none of it.
//! The price is that the executable's own code and data sit at fixed addresses (its libraries,
//! heap, stack and mappings stay randomized). A build that must be position-independent (a
//! distribution's policy, say) sets `WSP_BUILD_PIE=1`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=WSP_BUILD_PIE");
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    let linux_gnu =
        target("CARGO_CFG_TARGET_OS") == "linux" && target("CARGO_CFG_TARGET_ENV") == "gnu";
    if linux_gnu && std::env::var_os("WSP_BUILD_PIE").is_none_or(|pie| pie != "1") {
        println!("cargo:rustc-link-arg-bin=wsp=-no-pie");
    }
}
