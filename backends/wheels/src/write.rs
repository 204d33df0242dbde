//! The blocking part of an install: extracting the planned wheels, then (after the bytecode
//! is compiled) generating scripts, `INSTALLER`, `REQUESTED` and `RECORD`, each file hashed as
//! it is written. A cancellation flag is checked between files; every file goes through the
//! [`Journal`], so a failure or a cancellation leaves nothing behind.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine;
use sha2::{Digest, Sha256};

use crate::layout::{Layout, Planned};
use crate::metadata::ScriptEntry;
use crate::tree::{add_mode_bits, Journal};

/// One line of a RECORD: path (relative to site-packages), `sha256=…` or empty, size or empty.
pub(crate) type Row = (String, String, String);

/// Why the blocking work stopped.
#[derive(Debug)]
pub(crate) enum Halt {
    /// The install was cancelled.
    Cancelled,
    /// Something failed; the message says what.
    Failed(String),
}

fn check(cancel: &AtomicBool) -> Result<(), Halt> {
    if cancel.load(Ordering::Relaxed) {
        Err(Halt::Cancelled)
    } else {
        Ok(())
    }
}

/// Extracts every planned wheel; returns each wheel's RECORD rows so far.
pub(crate) fn extract(
    planned: &mut [Planned],
    layout: &Layout,
    journal: &mut Journal,
    python: &str,
    cancel: &AtomicBool,
) -> Result<Vec<Vec<Row>>, Halt> {
    let mut records = Vec::new();
    for plan in planned.iter_mut() {
        let mut rows = Vec::new();
        let wheel = &mut plan.picked.wheel;
        for placement in &plan.placements {
            check(cancel)?;
            let entry = &wheel.files[placement.file];
            let failed = |e: &dyn std::fmt::Display| {
                Halt::Failed(format!(
                    "installing {} from {}: {e}",
                    entry.name,
                    wheel.path.display()
                ))
            };
            let shebang = placement.script.then(|| format!("#!{python}\n"));
            let mut source = wheel
                .archive
                .by_index(entry.index)
                .map_err(|e| failed(&e))?;
            let mut out = journal
                .create_file(&placement.dest, entry.executable)
                .map_err(|e| failed(&e))?;
            let (digest, size, read) =
                copy_entry(&mut source, entry.size, shebang.as_deref(), &mut out)
                    .map_err(|e| failed(&e))?;
            if read != entry.size {
                return Err(failed(&"the entry is not the size the archive declares"));
            }
            if entry.executable {
                add_mode_bits(&out, 0o111).map_err(|e| failed(&e))?;
            }
            rows.push((
                layout.record_path(&placement.dest),
                digest,
                size.to_string(),
            ));
        }
        records.push(rows);
    }
    Ok(records)
}

/// Copies at most `declared + 1` bytes of `source` to `out` (a `#!python` first line replaced
/// by `shebang`, if given); returns the written bytes' `sha256=` digest and size, and the bytes
/// read.
fn copy_entry(
    source: &mut dyn Read,
    declared: u64,
    shebang: Option<&str>,
    out: &mut File,
) -> io::Result<(String, u64, u64)> {
    let mut reader = BufReader::new(Counting {
        inner: source.take(declared.saturating_add(1)),
        count: 0,
    });
    let mut writer = Hashing::new(out);
    if let Some(shebang) = shebang {
        let mut prefix = Vec::new();
        (&mut reader).take(8).read_to_end(&mut prefix)?;
        if prefix == b"#!python" {
            reader.skip_until(b'\n')?;
            writer.write_all(shebang.as_bytes())?;
        } else {
            writer.write_all(&prefix)?;
        }
    }
    io::copy(&mut reader, &mut writer)?;
    writer.flush()?;
    let read = reader.get_ref().count;
    let (digest, size) = writer.finish();
    Ok((digest, size, read))
}

/// Writes `bytes` as the new file `dest` (executable as distlib makes scripts when
/// `script`) and returns its RECORD row.
fn write_new(
    journal: &mut Journal,
    layout: &Layout,
    dest: &str,
    bytes: &[u8],
    script: bool,
) -> Result<Row, Halt> {
    let failed = |e: io::Error| Halt::Failed(format!("writing {dest}: {e}"));
    let mut file = journal.create_file(dest, false).map_err(failed)?;
    let mut writer = Hashing::new(&mut file);
    writer.write_all(bytes).map_err(failed)?;
    let (digest, size) = writer.finish();
    if script {
        add_mode_bits(&file, 0o555).map_err(failed)?;
    }
    Ok((layout.record_path(dest), digest, size.to_string()))
}

/// Generates each wheel's scripts, `INSTALLER`, `REQUESTED` (for a requested project) and
/// `RECORD` (with `compiled`, the `.pyc` files written for it), then commits the journal.
pub(crate) fn finish(
    planned: &[Planned],
    layout: &Layout,
    mut journal: Journal,
    mut records: Vec<Vec<Row>>,
    compiled: Vec<Vec<String>>,
    python: &str,
    cancel: &AtomicBool,
) -> Result<(), Halt> {
    let shebang = format!("#!{python}\n");
    for ((plan, rows), compiled) in planned.iter().zip(&mut records).zip(compiled) {
        for pyc in compiled {
            journal.note_file(&pyc);
            rows.push((layout.record_path(&pyc), String::new(), String::new()));
        }
        for entry in &plan.scripts {
            check(cancel)?;
            let text = script_text(&shebang, entry);
            let dest = format!("bin/{}", entry.name);
            rows.push(write_new(
                &mut journal,
                layout,
                &dest,
                text.as_bytes(),
                true,
            )?);
        }
        let installer = format!("{}/INSTALLER", plan.dist_info);
        rows.push(write_new(
            &mut journal,
            layout,
            &installer,
            b"wsp\n",
            false,
        )?);
        if plan.picked.requested {
            let requested = format!("{}/REQUESTED", plan.dist_info);
            rows.push(write_new(&mut journal, layout, &requested, b"", false)?);
        }
        let record = format!("{}/RECORD", plan.dist_info);
        rows.push((layout.record_path(&record), String::new(), String::new()));
        rows.sort();
        check(cancel)?;
        write_new(
            &mut journal,
            layout,
            &record,
            record_text(rows).as_bytes(),
            false,
        )?;
    }
    check(cancel)?;
    journal.commit();
    Ok(())
}

/// The script pip (distlib's `ScriptMaker`, pip 22 to 25) generates for an entry point.
fn script_text(shebang: &str, entry: &ScriptEntry) -> String {
    let import_name = entry
        .attribute
        .split('.')
        .next()
        .unwrap_or(&entry.attribute);
    format!(
        "{shebang}# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom {module} import \
         {import_name}\nif __name__ == '__main__':\n    sys.argv[0] = \
         re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n    sys.exit({func}())\n",
        module = entry.module,
        func = entry.attribute,
    )
}

/// RECORD as Python's `csv.writer` writes it: `\r\n` line ends, fields quoted when needed.
fn record_text(rows: &[Row]) -> String {
    let field = |text: &str| {
        if text.contains([',', '"', '\r', '\n']) {
            format!("\"{}\"", text.replace('"', "\"\""))
        } else {
            text.to_owned()
        }
    };
    rows.iter()
        .map(|(path, hash, size)| format!("{},{},{}\r\n", field(path), field(hash), field(size)))
        .collect()
}

struct Counting<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

struct Hashing<W> {
    inner: W,
    hasher: Sha256,
    size: u64,
}

impl<W: Write> Hashing<W> {
    fn new(inner: W) -> Self {
        Hashing {
            inner,
            hasher: Sha256::new(),
            size: 0,
        }
    }

    fn finish(self) -> (String, u64) {
        let digest =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.hasher.finalize());
        (format!("sha256={digest}"), self.size)
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
