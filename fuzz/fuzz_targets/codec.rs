#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wsp_fuzz::codec_checks::check(data));
