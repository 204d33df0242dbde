#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wsp_fuzz::message_checks::check(data));
