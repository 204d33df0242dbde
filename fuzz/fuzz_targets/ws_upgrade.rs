#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wsp_fuzz::ws_upgrade_checks::check(data));
