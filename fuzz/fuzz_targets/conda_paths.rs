#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| wsp_fuzz::conda_checks::check_paths_json_input(data));
