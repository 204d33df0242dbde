//! The program, its arguments and its environment, as the `execve` the child makes needs them.

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

/// A command line with its whole environment: the server's own, with changes on top.
#[derive(Debug)]
pub(crate) struct CommandLine {
    program: CString,
    argv: Vec<CString>,
    env: BTreeMap<OsString, OsString>,
}

impl CommandLine {
    /// `program` run with `args` (after `argv[0]`, which is `program` itself), in this
    /// process's environment.
    pub(crate) fn new(program: &Path, args: &[String]) -> io::Result<Self> {
        let program = c_string(program.as_os_str().as_bytes(), "the program's path")?;
        let argv = std::iter::once(Ok(program.clone()))
            .chain(
                args.iter()
                    .map(|arg| c_string(arg.as_bytes(), "an argument")),
            )
            .collect::<io::Result<_>>()?;
        Ok(CommandLine {
            program,
            argv,
            env: std::env::vars_os().collect(),
        })
    }

    /// Sets a variable, replacing its value from the server's environment.
    pub(crate) fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) {
        self.env
            .insert(key.as_ref().to_owned(), value.as_ref().to_owned());
    }

    /// Leaves a variable of the server's environment out.
    pub(crate) fn env_remove(&mut self, key: impl AsRef<OsStr>) {
        self.env.remove(key.as_ref());
    }

    /// The `NAME=value` strings of the environment; a name that is empty or holds `=`, or a
    /// NUL anywhere, is refused.
    pub(crate) fn environment(&self) -> io::Result<Vec<CString>> {
        self.env
            .iter()
            .map(|(key, value)| {
                if key.is_empty() || key.as_bytes().contains(&b'=') {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "the environment variable name {:?} is empty or holds `=`",
                            key
                        ),
                    ));
                }
                let mut pair = key.clone().into_vec();
                pair.push(b'=');
                pair.extend_from_slice(value.as_bytes());
                c_string(&pair, "an environment variable")
            })
            .collect()
    }

    /// The pointers `execve` takes, into this command line and `environment`, which must both
    /// outlive them.
    pub(super) fn exec_pointers(&self, environment: &[CString]) -> ExecPointers {
        let terminated = |strings: &[CString]| {
            strings
                .iter()
                .map(|string| string.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect()
        };
        ExecPointers {
            program: self.program.as_ptr(),
            argv: terminated(&self.argv),
            envp: terminated(environment),
        }
    }
}

fn c_string(bytes: &[u8], what: &str) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} holds a NUL byte"),
        )
    })
}

/// What the child passes to `execve`, prepared before the fork.
pub(super) struct ExecPointers {
    program: *const libc::c_char,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
}

impl ExecPointers {
    /// Replaces the process with the program; returns only on failure. A file the kernel does
    /// not recognise as an executable is run by `/bin/sh`, as `execvp` does.
    ///
    /// # Safety
    /// The strings pointed to must still be alive; call only in a freshly forked child.
    pub(super) unsafe fn exec(&self) -> io::Error {
        libc::execvpe(self.program, self.argv.as_ptr(), self.envp.as_ptr());
        io::Error::last_os_error()
    }
}
