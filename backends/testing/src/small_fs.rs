//! Small file systems a test mounts to fill them up: a full disk, made on purpose.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `errno` for "no space left on device".
const ENOSPC: i32 = 28;

/// A small file system mounted on a fresh temporary directory, unmounted when dropped.
///
/// Mounting needs root (which CI is); elsewhere the constructors say why not and return `None`,
/// except when `CI` is set, where they fail the test.
pub struct SmallFs {
    _temp: tempfile::TempDir,
    mount_point: PathBuf,
}

impl SmallFs {
    /// A tmpfs of `size` bytes.
    pub fn tmpfs(size: u64) -> Option<SmallFs> {
        SmallFs::mount(|mount_point| {
            run(Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
                .arg(mount_point))
        })
    }

    /// An ext4 file system of `size` bytes in an image file, loop-mounted.
    pub fn ext4(size: u64) -> Option<SmallFs> {
        SmallFs::mount(|mount_point| {
            let image = mount_point.with_extension("img");
            std::fs::File::create(&image)
                .and_then(|file| file.set_len(size))
                .map_err(|e| e.to_string())?;
            run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image))?;
            run(Command::new("mount")
                .args(["-o", "loop"])
                .arg(&image)
                .arg(mount_point))
        })
    }

    fn mount(how: impl FnOnce(&Path) -> Result<(), String>) -> Option<SmallFs> {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let mount_point = temp.path().join("mnt");
        std::fs::create_dir(&mount_point).expect("the mount point is made");
        match how(&mount_point) {
            Ok(()) => Some(SmallFs {
                _temp: temp,
                mount_point,
            }),
            Err(why) => {
                let why = format!("cannot mount a small file system (run as root): {why}");
                assert!(std::env::var_os("CI").is_none(), "{why}; CI must");
                eprintln!("skipping: {why}");
                None
            }
        }
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.mount_point
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mount_point)
            .status();
    }
}

fn run(command: &mut Command) -> Result<(), String> {
    match command.stderr(Stdio::piped()).output() {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!(
            "{command:?}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(error) => Err(format!("{command:?}: {error}")),
    }
}

/// Bytes free on the file system holding `path`, counting ext4's blocks reserved for root
/// (the tests run as root, and fill those too).
pub fn free_bytes(path: &Path) -> u64 {
    let stat = rustix::fs::statvfs(path).expect("statvfs");
    stat.f_bfree * stat.f_frsize
}

/// Appends to `path` until the file system is full, and checks that it is.
pub fn fill(path: &Path) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("the filler opens");
    for chunk in [64 << 10, 1] {
        let bytes = vec![7u8; chunk];
        loop {
            match file.write_all(&bytes) {
                Ok(()) => {}
                Err(error) if error.raw_os_error() == Some(ENOSPC) => break,
                Err(error) => panic!("filling {}: {error}", path.display()),
            }
        }
    }
    let probe = path.with_extension("probe");
    let error = std::fs::write(&probe, b"x").expect_err("the disk is full");
    assert_eq!(error.raw_os_error(), Some(ENOSPC), "the disk is not full");
    let _ = std::fs::remove_file(probe);
}
