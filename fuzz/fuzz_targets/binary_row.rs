#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    paimon_cleanup_fuzz::binary_row(data);
});
