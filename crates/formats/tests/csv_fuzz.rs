//! Hostile input for the CSV parser: random bytes, mutated valid files and large junk must give a
//! one-line error with a position — never a panic, never a silently accepted table with holes.

use orthomask_formats::csv::{CsvProblem, parse_table};

/// A tiny deterministic generator (SplitMix64) so the fuzz corpus is the same on every run.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const VALID: &[u8] = b"Response,Group,Delta\n0,1,0.08\n1,0,0.67\n1,1,-0.13\n";
const ALPHABET: &[u8] = b"0123456789,.-+eE\"\n\r aNnIf\xff\xc3";

fn assert_clean(bytes: &[u8]) {
    match parse_table(bytes, "fuzz.csv") {
        Ok(table) => {
            assert!(table.data().iter().all(|v| v.is_finite()));
            assert!(table.data().nrows() > 0 && table.data().ncols() == table.headers().len());
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("fuzz.csv:"), "{message}");
            assert!(!message.contains('\n'), "multi-line error: {message:?}");
            assert!(message.len() < 200, "overlong error: {message}");
            assert!(e.line >= 1);
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = SplitMix(1);
    for _ in 0..20_000 {
        let len = rng.below(64);
        let bytes: Vec<u8> = (0..len)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect();
        assert_clean(&bytes);
    }
}

#[test]
fn mutated_valid_files_never_panic() {
    let mut rng = SplitMix(2);
    for _ in 0..20_000 {
        let mut bytes = VALID.to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len());
            match rng.below(3) {
                0 => bytes[at] = ALPHABET[rng.below(ALPHABET.len())],
                1 => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
            }
            if bytes.is_empty() {
                break;
            }
        }
        assert_clean(&bytes);
    }
}

#[test]
fn fifty_megabytes_of_junk_gets_a_clean_error() {
    let mut rng = SplitMix(3);
    let junk: Vec<u8> = (0..50 * 1024 * 1024)
        .map(|_| (rng.next() & 0xff) as u8)
        .collect();
    let error = parse_table(&junk, "junk.bin").unwrap_err();
    assert!(error.to_string().starts_with("junk.bin:"));
    // Printable junk: one enormous header line and body.
    let text: Vec<u8> = (0..50 * 1024 * 1024)
        .map(|i| {
            if i % 1000 == 999 {
                b'\n'
            } else {
                b'a' + (i % 26) as u8
            }
        })
        .collect();
    let error = parse_table(&text, "junk.txt").unwrap_err();
    assert!(
        matches!(error.problem, CsvProblem::NotANumber(_)),
        "{error}"
    );
    assert!(error.to_string().len() < 200);
}
