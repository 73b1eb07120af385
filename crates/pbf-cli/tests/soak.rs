//! The shortened soak CI runs: `pbf soak` over a few thousand steps of the default
//! small scene, every check passing; and a failing check exits non-zero with the step
//! and the reason.

use std::process::Command;

#[test]
fn shortened_soak_passes_every_check() {
    let mut out = Vec::new();
    let outcome = pbf_cli::run_with_output(
        ["pbf", "soak", "--steps", "5000", "--check-every", "1000"],
        &mut out,
    )
    .unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&out)));
    let pbf_cli::Outcome::Soaked(report) = outcome else {
        panic!("not a soak: {outcome:?}");
    };
    let steps: Vec<u64> = report.checks.iter().map(|c| c.step).collect();
    assert_eq!(steps, [1000, 2000, 3000, 4000, 5000]);
    for c in &report.checks {
        assert!(
            c.energy_ratio <= 1.1 && c.average_density_error <= 0.05,
            "{c:?}"
        );
    }
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("5 checks passed"), "{text}");
}

#[test]
fn failed_check_exits_non_zero_with_the_step_and_the_reason() {
    let output = Command::new(env!("CARGO_BIN_EXE_pbf"))
        .args(["soak", "--steps", "40", "--check-every", "20"])
        .args(["--max-density-error", "0", "--threads", "1"])
        .output()
        .expect("run pbf");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("soak check failed at step 20: the largest density error"),
        "{stderr}"
    );
}
