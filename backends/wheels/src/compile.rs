//! Compiling the installed `.py` files to bytecode as pip does by default: runs of the
//! environment's interpreter calling `compileall.compile_file(path, force=True, quiet=True)`
//! for each file, with pip's paths (site-packages joined with the RECORD path), so the same
//! `.pyc` files appear, at the interpreter's default optimization and invalidation mode. pip
//! compiles one file after another; a large install is split among one run per core, as
//! each file's bytecode depends on that file alone.

use crate::layout::{Layout, Planned};
use crate::python::run_python;
use crate::Step;

/// Reads NUL-separated paths on stdin; prints the index of each one compiled.
const COMPILE: &str = r#"
import compileall, os, sys, warnings
out = sys.stdout
sys.stdout = sys.stderr
warnings.filterwarnings("ignore")
for i, path in enumerate(sys.stdin.buffer.read().split(b"\0")):
    if path and compileall.compile_file(os.fsdecode(path), force=True, quiet=True):
        out.write("%d\n" % i)
out.flush()
"#;

/// Files per run of the interpreter at the least, when there are enough for several runs (a
/// run starts in ~20 ms here; a file compiles in about 1 ms).
const MIN_FILES_PER_RUN: usize = 100;

/// Runs at once at the most.
const MAX_RUNS: usize = 8;

/// One `.py` file to compile: its wheel's index, its path relative to the root.
struct Source {
    wheel: usize,
    dest: String,
}

/// Compiles the `.py` files of `planned` installed under `root`; returns, for each wheel, the
/// `.pyc` files written (relative to the root).
pub(crate) async fn compile(
    step: &Step<'_>,
    root: &str,
    layout: &Layout,
    cache_tag: &str,
    planned: &[Planned],
) -> Result<Vec<Vec<String>>, String> {
    let mut sources = Vec::new();
    for (wheel, plan) in planned.iter().enumerate() {
        let mut dests: Vec<&String> = plan
            .placements
            .iter()
            .map(|p| &p.dest)
            .filter(|dest| dest.ends_with(".py"))
            .collect();
        dests.sort_by_key(|dest| layout.record_path(dest));
        sources.extend(dests.into_iter().map(|dest| Source {
            wheel,
            dest: dest.clone(),
        }));
    }
    let mut compiled = vec![Vec::new(); planned.len()];
    if sources.is_empty() {
        return Ok(compiled);
    }
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let runs = cores
        .min(MAX_RUNS)
        .min(sources.len().div_ceil(MIN_FILES_PER_RUN))
        .max(1);
    let argv = ["-I", "-S", "-c", COMPILE].map(String::from);
    let parts = sources.chunks(sources.len().div_ceil(runs));
    let outputs =
        futures::future::try_join_all(
            parts.map(|part| {
                let stdin: Vec<String> = part
                    .iter()
                    .map(|source| {
                        let record = layout.record_path(&source.dest);
                        format!("{root}/{}/{record}", layout.site_packages)
                    })
                    .collect();
                let argv = &argv;
                async move {
                    Ok::<_, String>((part, run_python(step, argv, Some(stdin.join("\0"))).await?))
                }
            }),
        )
        .await?;
    for (part, output) in outputs {
        for line in output.lines() {
            let source = line
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|index| part.get(index))
                .ok_or_else(|| format!("unexpected output from the bytecode compiler: {line:?}"))?;
            compiled[source.wheel].push(pyc_path(&source.dest, cache_tag));
        }
    }
    Ok(compiled)
}

/// `importlib.util.cache_from_source` at optimization level 0.
fn pyc_path(dest: &str, cache_tag: &str) -> String {
    let (dir, file) = dest.rsplit_once('/').unwrap_or(("", dest));
    let stem = file.strip_suffix(".py").unwrap_or(file);
    if dir.is_empty() {
        format!("__pycache__/{stem}.{cache_tag}.pyc")
    } else {
        format!("{dir}/__pycache__/{stem}.{cache_tag}.pyc")
    }
}
