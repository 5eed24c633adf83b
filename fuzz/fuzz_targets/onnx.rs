//! Fuzz the ONNX reader, importer and derivative writers: bytes → `ModelProto` → IR →
//! forward and reverse models. Malformed, truncated or adversarial protobuf must give an
//! error, never a panic or an unbounded allocation.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(model) = mad::onnx::decode(data) else {
        return;
    };
    if mad::onnx::import(&model).is_ok() {
        let _ = mad::onnx::reverse(&model, &Default::default());
        let _ = mad::onnx::forward(&model, &Default::default());
    }
});
