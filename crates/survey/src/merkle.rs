//! The Merkle tree over a closed cohort's upload hashes, so a participant can check that their
//! receipt is in the published list (and a published root pins the list).
//!
//! # Formula
//! RFC 6962 §2.1 (Certificate Transparency), with SHA-256 and the leaves in ascending order of
//! their hash: `MTH({}) = SHA-256()`, `MTH({d}) = SHA-256(0x00 ‖ d)`, and for `n > 1` with `k`
//! the largest power of two below `n`,
//! `MTH(D[0:n]) = SHA-256(0x01 ‖ MTH(D[0:k]) ‖ MTH(D[k:n]))`.
//! An inclusion proof is RFC 6962's audit path `PATH(m, D[0:n])`.

use orthomask_core::hex;
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

/// SHA-256 of `bytes` in hexadecimal.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes))
}

/// The sorted leaves (upload hashes as bytes). Hashes that are not hex are kept as their text.
fn sorted_leaves(hashes: &[String]) -> (Vec<String>, Vec<Vec<u8>>) {
    let mut sorted = hashes.to_vec();
    sorted.sort();
    sorted.dedup();
    let leaves = sorted
        .iter()
        .map(|h| hex::decode(h).unwrap_or_else(|_| h.as_bytes().to_vec()))
        .collect();
    (sorted, leaves)
}

/// The root (hex) of the tree over `hashes` (order does not matter: they are sorted first).
pub fn merkle_root(hashes: &[String]) -> String {
    hex::encode(&root_of(&sorted_leaves(hashes).1))
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
        path: path_of(m, &leaves).iter().map(|h| hex::encode(h)).collect(),
        root: hex::encode(&root_of(&leaves)),
    })
}

/// Check a proof the way a participant would (RFC 9162 §2.1.3.2).
pub fn verify_inclusion(hash: &str, proof: &InclusionProof) -> bool {
    let Ok(data) = hex::decode(hash) else {
        return false;
    };
    if proof.leaf_index >= proof.tree_size {
        return false;
    }
    let mut fnode = proof.leaf_index;
    let mut snode = proof.tree_size - 1;
    let mut r = leaf(&data);
    for step in &proof.path {
        let Some(p) = hex::decode(step)
            .ok()
            .and_then(|v| <Hash>::try_from(v).ok())
        else {
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
    snode == 0 && hex::encode(&r) == proof.root
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(i: u8) -> String {
        hex::encode(&Sha256::digest([i]))
    }

    /// The published RFC 6962 test data (certificate-transparency-go's `merkle` tests, also in
    /// Trillian): eight leaves of increasing length, the tree head of every prefix, and two audit
    /// paths. Checked against the tree functions in leaf order (the public functions sort the
    /// hashes first, which these leaves are not). Also re-derived with Python's hashlib when
    /// they were written down.
    #[test]
    fn rfc_6962_published_vectors() {
        let leaves: Vec<Vec<u8>> = [
            "",
            "00",
            "10",
            "2021",
            "3031",
            "40414243",
            "5051525354555657",
            "606162636465666768696a6b6c6d6e6f",
        ]
        .iter()
        .map(|x| hex::decode(x).unwrap())
        .collect();
        let roots = [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
            "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
            "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
            "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
            "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
        ];
        for (size, root) in (1..=8).zip(roots) {
            assert_eq!(hex::encode(&root_of(&leaves[..size])), root, "size {size}");
        }
        let paths: [(usize, usize, &[&str]); 3] = [
            (
                0,
                8,
                &[
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ],
            ),
            (
                5,
                8,
                &[
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ],
            ),
            (
                2,
                3,
                &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"],
            ),
        ];
        for (m, size, path) in paths {
            let got: Vec<String> = path_of(m, &leaves[..size])
                .iter()
                .map(|h| hex::encode(h))
                .collect();
            assert_eq!(got, path, "leaf {m} of {size}");
        }
    }

    /// By hand from the definition: one leaf is SHA-256(0x00 ‖ d); two leaves combine under 0x01.
    #[test]
    fn small_trees_by_hand() {
        assert_eq!(
            merkle_root(&[]),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let (a, b) = (h(1), h(2));
        let la = leaf(&hex::decode(&a).unwrap());
        let lb = leaf(&hex::decode(&b).unwrap());
        assert_eq!(merkle_root(std::slice::from_ref(&a)), hex::encode(&la));
        let (first, second) = if a < b { (la, lb) } else { (lb, la) };
        assert_eq!(
            merkle_root(&[b.clone(), a.clone()]),
            hex::encode(&node(&first, &second))
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
