//! The binary itself: on Linux with glibc, build.rs links it position-dependent, so the loader
//! relocates nothing at start (an idle server's memory, BENCHMARKS.md "Idle RSS").

/// `e_type` of an ELF file: 2 for an executable at fixed addresses, 3 for a position-independent
/// one (or a shared object).
fn elf_type(path: &str) -> u16 {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF", "{path} is not an ELF file");
    u16::from_le_bytes([bytes[16], bytes[17]])
}

#[test]
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn wsp_is_linked_position_dependent_unless_asked_otherwise() {
    let wanted = match option_env!("WSP_BUILD_PIE") {
        Some("1") => 3,
        _ => 2,
    };
    assert_eq!(elf_type(env!("CARGO_BIN_EXE_wsp")), wanted);
}
