//! Where the sandbox cannot be enforced (simulated with the test-only switch, set before the
//! probe runs), a sandboxed run fails with `sandbox-unavailable` and nothing runs; an
//! unsandboxed one still runs.

use crate::execute_sandbox_support::Fixture;
use wsp_exec::{containment_mode, sandbox_availability, RunOptions, TEST_UNAVAILABLE_VAR};

#[tokio::test]
async fn nothing_runs_and_the_reason_is_the_probes() {
    // The only test in this binary: the switch is set before anything probes.
    std::env::set_var(TEST_UNAVAILABLE_VAR, "1");
    let reason = sandbox_availability().unwrap_err();
    assert!(reason.contains(TEST_UNAVAILABLE_VAR), "{reason}");

    let fixture = Fixture::new();
    let detail = fixture.sandbox_refusal(containment_mode()).await;
    assert_eq!(detail, reason);

    let ran = fixture
        .run(
            &["sh", "-c", &fixture.marking_script()],
            RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(ran.exit_code, 0);
    assert!(fixture.marker().exists());
}
