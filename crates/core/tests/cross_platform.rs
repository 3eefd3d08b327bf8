//! "Same key, same matrices" natively and in wasm32.
//!
//! The same test runs as a native `#[test]` and, under `cargo test --target
//! wasm32-unknown-unknown`, as a `wasm_bindgen_test` in Node.js. Both compare the bit patterns of
//! masks drawn from fixed keys against one golden fingerprint, so a platform difference (a
//! transcendental function, a fused multiply-add, a `usize`) or an accidental change of the key
//! streams — which would make old key files produce different masks — fails on either side.

use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{DenseInvertible, FixedSubspaceHaar, HaarOrthogonal, Mask};
use orthomask_core::random::{MatlabTwister, fill_standard_normal};

/// FNV-1a over the IEEE bit patterns: any single-bit difference changes the result.
fn fnv1a(values: impl IntoIterator<Item = u64>) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for v in values {
        for byte in v.to_le_bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

fn fingerprint() -> u64 {
    let key = Key::teaching(535);
    let haar = HaarOrthogonal::keyed(17, key.stream(StreamId::RightMask { cohort: 0 }))
        .unwrap()
        .to_dense();
    let ones =
        FixedSubspaceHaar::ones_fixed(11, key.stream(StreamId::ProviderLeftMask { cohort: 3 }))
            .unwrap()
            .to_dense();
    let uniform = DenseInvertible::uniform_entries(5, &mut key.stream(StreamId::RowMixer).rng())
        .unwrap()
        .to_dense();
    let matlab = DenseInvertible::uniform_entries(9, &mut MatlabTwister::new(535))
        .unwrap()
        .to_dense();
    let mut normals = vec![0.0; 4096];
    fill_standard_normal(
        &mut key
            .stream(StreamId::ParticipantNoise { participant: 7 })
            .rng(),
        &mut normals,
    );
    let mut row = vec![0.0; 17];
    fill_standard_normal(&mut key.stream(StreamId::Scratch(1)).rng(), &mut row);
    let masked = HaarOrthogonal::keyed(17, key.stream(StreamId::RightMask { cohort: 0 }))
        .unwrap()
        .mask_row(&row)
        .unwrap();
    // Raw keyed-stream words across buffer boundaries, sub-streams and byte fills: the wasm build
    // computes them with its own SIMD ChaCha12, which must equal rand_chacha's.
    let stream = key.stream(StreamId::Scratch(99));
    let mut raw = Vec::new();
    for sub in [0u64, 1, 7, 1 << 20] {
        let mut rng = stream.substream(sub);
        for i in 0..100u32 {
            let word = if i % 3 == 0 {
                u64::from(rand_core::Rng::next_u32(&mut rng))
            } else {
                rand_core::Rng::next_u64(&mut rng)
            };
            raw.push(word);
        }
        let mut bytes = [0u8; 13];
        rand_core::Rng::fill_bytes(&mut rng, &mut bytes);
        raw.extend(bytes.iter().map(|&b| u64::from(b)));
    }
    let derived = key.derive(StreamId::RightMaskKey { cohort: 3 }).to_hex();
    raw.extend(derived.bytes().map(u64::from));
    fnv1a(
        haar.iter()
            .chain(ones.iter())
            .chain(uniform.iter())
            .chain(matlab.iter())
            .chain(normals.iter())
            .chain(masked.iter())
            .map(|v| v.to_bits())
            .chain(raw.iter().copied()),
    )
}

/// Recorded from the native build when the key streams were fixed; see the module documentation.
const GOLDEN: u64 = 0xe8ce_fc49_652e_8370;

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn masks_are_bit_identical_across_platforms() {
    assert_eq!(fingerprint(), GOLDEN, "fingerprint {:#018x}", fingerprint());
}
