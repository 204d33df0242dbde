//! A seccomp filter that keeps a sandboxed command from making a file that gains privilege
//! when run outside the sandbox: a setuid or setgid file, or one with file capabilities.
//!
//! The writable trees are `nosuid` only inside the sandbox's own mount namespace. Outside it,
//! any local user who runs a setuid file the command made there runs it as the server's user
//! (root, under a root server); and a root server's sandbox, whose namespace root is the host's
//! root, could give a file capabilities that hold on the host. So the filter refuses, with
//! `EPERM`:
//! - `chmod`, `fchmod`, `fchmodat` and `fchmodat2` of a mode with `S_ISUID` or `S_ISGID`;
//! - `open`, `openat` and `creat` that may create a file (`O_CREAT`, `O_TMPFILE`), and
//!   `mkdir`, `mkdirat`, `mknod` and `mknodat`, with either bit in the mode;
//! - every `setxattr` call (the extended attribute's name cannot be read by a filter, and
//!   `security.capability` is one);
//!
//! and answers `ENOSYS` to `openat2` (whose mode lies in a structure a filter cannot read; C
//! libraries fall back to `openat`) and to `io_uring_setup` (its operations reach the same
//! calls without passing through the filter). A system call of another architecture's ABI
//! (i386 or x32 on x86-64) kills the process, since its numbers differ.

use std::io;

/// `AUDIT_ARCH_*` of the architecture this was built for.
#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xc000_00b7;

/// System calls of the x32 ABI carry this bit in their number on x86-64.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// `setxattrat(2)` (Linux 6.13), the same number on every architecture.
const SYS_SETXATTRAT: i64 = 463;

const PRIVILEGED_MODE_BITS: u32 = libc::S_ISUID | libc::S_ISGID;
/// `O_CREAT` and the bit of `O_TMPFILE` that is not `O_DIRECTORY`.
const CREATING_FLAGS: u32 = (libc::O_CREAT | (libc::O_TMPFILE & !libc::O_DIRECTORY)) as u32;

// Classic BPF opcodes.
const LOAD_WORD: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JUMP_EQUAL: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
#[cfg(target_arch = "x86_64")]
const JUMP_AT_LEAST: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const JUMP_ANY_BIT: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const RETURN: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

// Offsets in `struct seccomp_data`.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;

/// The offset of the low 32 bits of argument `index` (little-endian).
const fn argument(index: u32) -> u32 {
    16 + 8 * index
}

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;
const DENY: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const UNSUPPORTED: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

/// What one system call's rule checks.
#[derive(Clone, Copy)]
enum Check {
    /// Refused when the mode (argument `mode`) has a privileged bit.
    Mode { mode: u32 },
    /// Refused when the flags (argument `flags`) may create and the mode has a privileged bit.
    CreatingMode { flags: u32, mode: u32 },
    /// Always answered with this return value.
    Always(u32),
}

fn rules() -> Vec<(i64, Check)> {
    use Check::{Always, CreatingMode, Mode};
    let mut rules = vec![
        (libc::SYS_fchmod, Mode { mode: 1 }),
        (libc::SYS_fchmodat, Mode { mode: 2 }),
        (libc::SYS_fchmodat2, Mode { mode: 2 }),
        (libc::SYS_mkdirat, Mode { mode: 2 }),
        (libc::SYS_mknodat, Mode { mode: 2 }),
        (libc::SYS_openat, CreatingMode { flags: 2, mode: 3 }),
        (libc::SYS_setxattr, Always(DENY)),
        (libc::SYS_lsetxattr, Always(DENY)),
        (libc::SYS_fsetxattr, Always(DENY)),
        (SYS_SETXATTRAT, Always(DENY)),
        (libc::SYS_openat2, Always(UNSUPPORTED)),
        (libc::SYS_io_uring_setup, Always(UNSUPPORTED)),
    ];
    #[cfg(target_arch = "x86_64")]
    rules.extend([
        (libc::SYS_chmod, Mode { mode: 1 }),
        (libc::SYS_mkdir, Mode { mode: 1 }),
        (libc::SYS_mknod, Mode { mode: 1 }),
        (libc::SYS_creat, Mode { mode: 1 }),
        (libc::SYS_open, CreatingMode { flags: 1, mode: 2 }),
    ]);
    rules
}

fn instruction(code: u16, jump_true: u8, jump_false: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: jump_true,
        jf: jump_false,
        k,
    }
}

fn check_block(check: Check) -> Vec<libc::sock_filter> {
    let mode_test = |mode: u32| {
        [
            instruction(LOAD_WORD, 0, 0, argument(mode)),
            instruction(JUMP_ANY_BIT, 0, 1, PRIVILEGED_MODE_BITS),
            instruction(RETURN, 0, 0, DENY),
            instruction(RETURN, 0, 0, ALLOW),
        ]
    };
    match check {
        Check::Mode { mode } => mode_test(mode).to_vec(),
        Check::CreatingMode { flags, mode } => {
            let mut block = vec![
                instruction(LOAD_WORD, 0, 0, argument(flags)),
                // Not creating: straight to the block's final `ALLOW`.
                instruction(JUMP_ANY_BIT, 0, 3, CREATING_FLAGS),
            ];
            block.extend(mode_test(mode));
            block
        }
        Check::Always(value) => vec![instruction(RETURN, 0, 0, value)],
    }
}

/// The filter's program, built before the fork.
pub(super) struct Filter(Vec<libc::sock_filter>);

impl std::fmt::Debug for Filter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "Filter({} instructions)", self.0.len())
    }
}

impl Filter {
    /// The filter.
    pub(super) fn new() -> Self {
        Filter(program())
    }

    /// Installs the filter on the calling thread. Needs `no_new_privs` (set by Landlock
    /// before).
    ///
    /// # Safety
    /// Call only in a freshly forked, single-threaded child, before exec.
    pub(super) unsafe fn install(&self) -> io::Result<()> {
        let prog = libc::sock_fprog {
            len: self.0.len() as libc::c_ushort,
            filter: self.0.as_ptr().cast_mut(),
        };
        let installed = libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            0,
            &prog as *const libc::sock_fprog,
        );
        if installed == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

fn program() -> Vec<libc::sock_filter> {
    let mut program = vec![
        instruction(LOAD_WORD, 0, 0, ARCH_OFFSET),
        instruction(JUMP_EQUAL, 1, 0, ARCH),
        instruction(RETURN, 0, 0, KILL),
        instruction(LOAD_WORD, 0, 0, NR_OFFSET),
    ];
    #[cfg(target_arch = "x86_64")]
    program.extend([
        instruction(JUMP_AT_LEAST, 0, 1, X32_SYSCALL_BIT),
        instruction(RETURN, 0, 0, KILL),
    ]);
    for (number, check) in rules() {
        let block = check_block(check);
        // Every block ends in a return, so the number is still loaded for the next rule.
        program.push(instruction(JUMP_EQUAL, 0, block.len() as u8, number as u32));
        program.extend(block);
    }
    program.push(instruction(RETURN, 0, 0, ALLOW));
    program
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program() {
        let program = program();
        assert!(program.len() < usize::from(u16::MAX));
        for (at, step) in program.iter().enumerate() {
            if u32::from(step.code) & 0x07 == libc::BPF_JMP {
                for offset in [step.jt, step.jf] {
                    assert!(at + 1 + usize::from(offset) < program.len(), "at {at}");
                }
            }
        }
        assert_eq!(program.last().map(|step| step.k), Some(ALLOW));
    }
}
