//! The Merkle tree over a closed cohort's upload hashes, so a participant can check that their
//! receipt is in the published list (and a published root pins the list).
//!
//! # Formula
//! RFC 6962 §2.1 (Certificate Transparency), with SHA-256 and the leaves in ascending order of
//! their hash: `MTH({}) = SHA-256()`, `MTH({d}) = SHA-256(0x00 ‖ d)`, and for `n > 1` with `k`
//! the largest power of two below `n`,
//! `MTH(D[0:n]) = SHA-256(0x01 ‖ MTH(D[0:k]) ‖ MTH(D[k:n]))`.
//! An inclusion proof is RFC 6962's audit path `PATH(m, D[0:n])`.

use sha2::{Digest, Sha256};

type Hash = [u8; 32];

fn leaf(d: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(d);
    h.finalize().into()
}

fn node(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

fn split(n: usize) -> usize {
    let mut k = 1;
    while k * 2 < n {
        k *= 2;
    }
    k
}

fn root_of(leaves: &[Vec<u8>]) -> Hash {
    match leaves.len() {
        0 => Sha256::digest([]).into(),
        1 => leaf(&leaves[0]),
        n => {
            let k = split(n);
            node(&root_of(&leaves[..k]), &root_of(&leaves[k..]))
        }
    }
}

fn path_of(m: usize, leaves: &[Vec<u8>]) -> Vec<Hash> {
    let n = leaves.len();
    if n <= 1 {
        return Vec::new();
    }
    let k = split(n);
    if m < k {
        let mut p = path_of(m, &leaves[..k]);
        p.push(root_of(&leaves[k..]));
        p
    } else {
        let mut p = path_of(m - k, &leaves[k..]);
        p.push(root_of(&leaves[..k]));
        p
    }
}

/// Lower-case hexadecimal, the form every hash takes on the wire and in the stores.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of `bytes` in hexadecimal.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// The sorted leaves (upload hashes as bytes). Hashes that are not hex are kept as their text.
fn sorted_leaves(hashes: &[String]) -> (Vec<String>, Vec<Vec<u8>>) {
    let mut sorted = hashes.to_vec();
    sorted.sort();
    sorted.dedup();
    let leaves = sorted
        .iter()
        .map(|h| unhex(h).unwrap_or_else(|| h.as_bytes().to_vec()))
        .collect();
    (sorted, leaves)
}

/// The root (hex) of the tree over `hashes` (order does not matter: they are sorted first).
pub fn merkle_root(hashes: &[String]) -> String {
    hex(&root_of(&sorted_leaves(hashes).1))
}

/// An inclusion proof.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InclusionProof {
    /// Position of the leaf among the sorted hashes.
    pub leaf_index: usize,
    /// Number of leaves.
    pub tree_size: usize,
    /// The audit path, leaf to root (hex).
    pub path: Vec<String>,
    /// The root it leads to (hex).
    pub root: String,
}

/// The proof that `hash` is among `hashes`, or `None`.
pub fn inclusion_proof(hashes: &[String], hash: &str) -> Option<InclusionProof> {
    let (sorted, leaves) = sorted_leaves(hashes);
    let m = sorted.binary_search_by(|h| h.as_str().cmp(hash)).ok()?;
    Some(InclusionProof {
        leaf_index: m,
        tree_size: leaves.len(),
        path: path_of(m, &leaves).iter().map(|h| hex(h)).collect(),
        root: hex(&root_of(&leaves)),
    })
}

/// Check a proof the way a participant would (RFC 9162 §2.1.3.2).
pub fn verify_inclusion(hash: &str, proof: &InclusionProof) -> bool {
    let Some(data) = unhex(hash) else {
        return false;
    };
    if proof.leaf_index >= proof.tree_size {
        return false;
    }
    let mut fnode = proof.leaf_index;
    let mut snode = proof.tree_size - 1;
    let mut r = leaf(&data);
    for step in &proof.path {
        let Some(p) = unhex(step).and_then(|v| <Hash>::try_from(v).ok()) else {
            return false;
        };
        if snode == 0 {
            return false;
        }
        if fnode % 2 == 1 || fnode == snode {
            r = node(&p, &r);
            if fnode.is_multiple_of(2) {
                while fnode.is_multiple_of(2) && fnode != 0 {
                    fnode >>= 1;
                    snode >>= 1;
                }
            }
        } else {
            r = node(&r, &p);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    snode == 0 && hex(&r) == proof.root
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(i: u8) -> String {
        hex(&Sha256::digest([i]))
    }

    /// By hand from the definition: one leaf is SHA-256(0x00 ‖ d); two leaves combine under 0x01.
    #[test]
    fn small_trees_by_hand() {
        assert_eq!(
            merkle_root(&[]),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let (a, b) = (h(1), h(2));
        let la = leaf(&unhex(&a).unwrap());
        let lb = leaf(&unhex(&b).unwrap());
        assert_eq!(merkle_root(std::slice::from_ref(&a)), hex(&la));
        let (first, second) = if a < b { (la, lb) } else { (lb, la) };
        assert_eq!(
            merkle_root(&[b.clone(), a.clone()]),
            hex(&node(&first, &second))
        );
    }

    #[test]
    fn every_leaf_has_a_valid_proof_and_tampering_fails() {
        for n in 1..=17u8 {
            let hashes: Vec<String> = (0..n).map(h).collect();
            let root = merkle_root(&hashes);
            for x in &hashes {
                let proof = inclusion_proof(&hashes, x).unwrap();
                assert_eq!(proof.root, root);
                assert!(verify_inclusion(x, &proof), "n = {n}");
                assert!(!verify_inclusion(&h(200), &proof));
                let mut wrong = proof.clone();
                wrong.root = h(201);
                assert!(!verify_inclusion(x, &wrong));
                if let Some(first) = wrong.path.first_mut() {
                    *first = h(202);
                    wrong.root = root.clone();
                    assert!(!verify_inclusion(x, &wrong));
                }
            }
            assert!(inclusion_proof(&hashes, &h(250)).is_none());
        }
    }
}
