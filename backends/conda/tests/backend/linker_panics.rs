//! A panic on rayon's global pool, where rattler links files, fails a task instead of aborting
//! the process, once a [`CondaBackend`] has been asked anything. Without the pool's panic handler rayon aborts
//! the process (and this test binary with it) as soon as the panicking task unwinds.

use std::sync::mpsc;

use wsp_backend::{Backend, DescribeRequest};
use wsp_backend_conda::{CondaBackend, CondaConfig};

/// Sends on drop, so that its owner's unwinding is seen.
struct Unwound(mpsc::Sender<()>);

impl Drop for Unwound {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

#[tokio::test]
async fn a_panic_in_a_rayon_task_does_not_abort_the_process() {
    let cache = tempfile::tempdir().unwrap();
    let backend = CondaBackend::new(CondaConfig::new(cache.path()));
    // Any request will do, whatever it answers: here, about a prefix that is not there.
    let missing = cache.path().join("no-prefix");
    let _ = backend.describe(DescribeRequest { root: missing }).await;
    let (unwound, seen) = mpsc::channel();
    rayon::spawn_fifo(move || {
        let _guard = Unwound(unwound);
        panic!("a linker bug");
    });
    seen.recv().expect("the task ran and unwound");
    // Every worker runs this once it is free, the one that panicked included: with no handler,
    // the process is gone before it gets there.
    let workers = rayon::broadcast(|context| context.index());
    assert_eq!(workers.len(), rayon::current_num_threads());
}
