//! Whether the collector believes what a hand-over claims (issue 20 §5): pure verdicts, no SQL
//! and no HTTP, over the receipt lists the accepting services published.
//!
//! A hand-over arrives signed by the party that may send it (`crate::peer_auth`: the provider for
//! a cohort, right-masking service `i` for part `i`), so the signature says who sent it, not that
//! it is true. What a hand-over *claims* — that a cohort was masked
//! (with these rows), was empty, was withheld, or that a share part holds this service's uploads
//! — is believed only when it agrees with the receipt lists the accepting services published
//! when the cohort closed, and with the upload credentials the collector itself issued:
//!
//! | claim | believed when |
//! |---|---|
//! | basic, masked | the list is consistent (root of its hashes, no hash twice); the claim names its root and count; one row per upload; one issued, distinct credential nonce per row; at least the cohort floor of rows |
//! | basic, empty | the list is empty |
//! | basic, withheld | the claim counts the list's uploads, and they are fewer than the floor |
//! | share mode, empty | some right-masking service published an empty list (no participant's shares reached every service) |
//! | share mode, withheld | some service published fewer uploads than the floor (so fewer than the floor reached every service) |
//! | share part of service `i` | service `i`'s list is consistent, the part names its root and count, and has at most that many rows |
//!
//! A believed claim settles the cohort as it says (a masked batch still goes through the content
//! checks: unmasking, QA, the cohort's statistics and the padding's law). A claim that is not believed is **refused**: recorded with why (the survey team's status
//! lists it), answered 422, and the cohort keeps waiting for the genuine hand-over — a forged or
//! mistaken claim never settles a cohort and never blocks the genuine one. In share mode the
//! provider keeps only participants whose shares reached every service, which a list cannot
//! show: a provider that claims a cohort withheld while every service published at least the
//! floor is refused, and such a cohort waits until the survey team leaves it out by hand
//! (`POST /api/admin/surveys/{id}/cohorts/{k}/leave-out`), which the manifest then names.

use orthomask_survey::floors::withheld_reason;
use orthomask_survey::inclusion::PublishedList;

/// What a hand-over from the provider claims about a cohort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim<'a> {
    /// Masked and handed over with `rows` rows, for `uploads` uploads under `merkle_root`.
    Masked {
        /// Rows of the batch.
        rows: usize,
        /// Uploads the provider counts.
        uploads: usize,
        /// The root the provider names.
        merkle_root: &'a str,
    },
    /// Nothing to mask.
    Empty,
    /// Too few records to mask, `uploads` of them.
    Withheld {
        /// Uploads the provider counts.
        uploads: usize,
    },
}

/// What the collector's own records say of a basic hand-over's credential nonces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nonces {
    /// Nonces the hand-over names.
    pub named: usize,
    /// Of which distinct.
    pub distinct: usize,
    /// Of which the collector never issued for this cohort.
    pub unknown: usize,
}

/// Whether a published list is the one of this survey and cohort and is what it claims.
///
/// # Errors
/// Why it is not, in one line.
pub fn list_is_sound(
    list: &PublishedList,
    survey: &str,
    cohort: u32,
    name: &str,
) -> Result<(), String> {
    if list.survey != survey || list.cohort != cohort {
        return Err(format!(
            "{name} published the receipt list of survey {:?} cohort {} for cohort {cohort}",
            list.survey, list.cohort
        ));
    }
    if !list.consistent() {
        return Err(format!(
            "the receipt list {name} published for cohort {cohort} is inconsistent: its root or \
             count is not that of its {} upload hashes",
            list.upload_hashes.len()
        ));
    }
    Ok(())
}

/// The provider's claim in the basic protocol, against its published list (`name` names the
/// provider), the nonce check and the cohort `floor`.
///
/// # Errors
/// Why the claim is refused, in one line.
pub fn judge_basic(
    claim: Claim<'_>,
    list: &PublishedList,
    survey: &str,
    cohort: u32,
    name: &str,
    nonces: Nonces,
    floor: usize,
) -> Result<(), String> {
    list_is_sound(list, survey, cohort, name)?;
    match claim {
        Claim::Masked {
            rows,
            uploads,
            merkle_root,
        } => {
            if merkle_root != list.merkle_root {
                return Err(format!(
                    "the hand-over's Merkle root {merkle_root} is not the root {} of the {} \
                     receipts {name} published for cohort {cohort}",
                    list.merkle_root, list.count
                ));
            }
            if uploads != list.count {
                return Err(format!(
                    "the hand-over counts {uploads} uploads but {name} published {} receipts for \
                     cohort {cohort}",
                    list.count
                ));
            }
            if rows != list.count {
                return Err(format!(
                    "the hand-over has {rows} rows but {name} published {} receipts for cohort \
                     {cohort} (dropped or duplicated records)",
                    list.count
                ));
            }
            if nonces.named != rows {
                return Err(format!(
                    "the hand-over has {rows} records but names {} upload credentials",
                    nonces.named
                ));
            }
            if nonces.distinct != nonces.named {
                return Err(
                    "the hand-over names an upload credential twice (a duplicated record)".into(),
                );
            }
            if nonces.unknown > 0 {
                return Err(format!(
                    "{} of the hand-over's records carry no upload credential the collector \
                     issued for cohort {cohort} (records the provider made up)",
                    nonces.unknown
                ));
            }
            if withheld_reason(rows, floor).is_some() {
                return Err(format!(
                    "the batch has {rows} records, fewer than the {floor} a cohort must have to \
                     be masked; it should have been withheld"
                ));
            }
            Ok(())
        }
        Claim::Empty if list.count == 0 => Ok(()),
        Claim::Empty => Err(format!(
            "the hand-over says cohort {cohort} is empty but {name} published {} receipts for it",
            list.count
        )),
        Claim::Withheld { uploads }
            if uploads == list.count && withheld_reason(uploads, floor).is_some() =>
        {
            Ok(())
        }
        Claim::Withheld { uploads } => Err(format!(
            "the hand-over says cohort {cohort} was withheld with {uploads} uploads, but {name} \
             published {} receipts and a cohort is withheld only below {floor}",
            list.count
        )),
    }
}

/// The provider's share-mode claim that a cohort is empty or withheld, against every right-masking
/// service's published list (`lists`: name and list).
///
/// # Errors
/// Why the claim is refused, in one line.
pub fn judge_share_outcome(
    claim: Claim<'_>,
    lists: &[(String, PublishedList)],
    survey: &str,
    cohort: u32,
    floor: usize,
) -> Result<(), String> {
    for (name, list) in lists {
        list_is_sound(list, survey, cohort, name)?;
    }
    let smallest = lists.iter().map(|(_, l)| l.count).min().unwrap_or(0);
    match claim {
        Claim::Masked { .. } => Err(
            "a share-mode survey's cohorts arrive as parts from the right-masking services".into(),
        ),
        Claim::Empty if smallest == 0 => Ok(()),
        Claim::Withheld { uploads }
            if withheld_reason(smallest, floor).is_some() && uploads <= smallest =>
        {
            Ok(())
        }
        Claim::Empty | Claim::Withheld { .. } => Err(format!(
            "the hand-over says cohort {cohort} yields no release, but every right-masking \
             service published at least {smallest} receipts for it (the floor is {floor}); if \
             shares were lost, the survey team may leave the cohort out"
        )),
    }
}

/// A share part's claim that it holds service `name`'s uploads (`uploads` under `merkle_root`,
/// `rows` of them after the provider kept the complete participants).
///
/// # Errors
/// Why the part is refused, in one line.
pub fn judge_share_part(
    list: &PublishedList,
    survey: &str,
    cohort: u32,
    name: &str,
    merkle_root: &str,
    uploads: usize,
    rows: usize,
) -> Result<(), String> {
    list_is_sound(list, survey, cohort, name)?;
    if merkle_root != list.merkle_root {
        return Err(format!(
            "the part's Merkle root {merkle_root} is not the root {} of the {} receipts {name} \
             published for cohort {cohort}",
            list.merkle_root, list.count
        ));
    }
    if uploads != list.count {
        return Err(format!(
            "the part counts {uploads} uploads but {name} published {} receipts for cohort \
             {cohort}",
            list.count
        ));
    }
    if rows > list.count {
        return Err(format!(
            "the part has {rows} rows but {name} published {} receipts for cohort {cohort} \
             (records added)",
            list.count
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_survey::merkle::{merkle_root, sha256_hex};

    fn list(count: usize) -> PublishedList {
        let hashes: Vec<String> = (0..count)
            .map(|i| sha256_hex(format!("upload {i}").as_bytes()))
            .collect();
        let mut sorted = hashes.clone();
        sorted.sort();
        PublishedList {
            survey: "s".into(),
            cohort: 2,
            closed_at: None,
            count,
            merkle_root: merkle_root(&sorted),
            upload_hashes: sorted,
            builds: Vec::new(),
        }
    }

    const GOOD: Nonces = Nonces {
        named: 8,
        distinct: 8,
        unknown: 0,
    };

    fn masked(l: &PublishedList, rows: usize) -> Claim<'_> {
        Claim::Masked {
            rows,
            uploads: l.count,
            merkle_root: &l.merkle_root,
        }
    }

    #[test]
    fn a_genuine_masked_batch_is_believed() {
        let l = list(8);
        assert_eq!(judge_basic(masked(&l, 8), &l, "s", 2, "p", GOOD, 6), Ok(()));
    }

    /// The attacks of issue 20 §5: a full cohort called withheld or empty, a bogus batch naming
    /// an unknown nonce, a below-floor batch — each refused, never settled.
    #[test]
    fn claims_the_lists_contradict_are_refused() {
        let l = list(8);
        let j = |claim, nonces| judge_basic(claim, &l, "s", 2, "p", nonces, 6);
        assert!(j(Claim::Withheld { uploads: 8 }, GOOD).is_err());
        assert!(j(Claim::Withheld { uploads: 3 }, GOOD).is_err());
        assert!(j(Claim::Empty, GOOD).is_err());
        let unknown = Nonces { unknown: 1, ..GOOD };
        assert!(j(masked(&l, 8), unknown).unwrap_err().contains("made up"));
        let twice = Nonces {
            distinct: 7,
            ..GOOD
        };
        assert!(j(masked(&l, 8), twice).unwrap_err().contains("twice"));
        assert!(j(masked(&l, 7), GOOD).unwrap_err().contains("dropped"));
        let small = list(4);
        let few = Nonces {
            named: 4,
            distinct: 4,
            unknown: 0,
        };
        assert!(
            judge_basic(masked(&small, 4), &small, "s", 2, "p", few, 6)
                .unwrap_err()
                .contains("withheld")
        );
        // What the lists show is believed.
        assert_eq!(
            judge_basic(Claim::Withheld { uploads: 4 }, &small, "s", 2, "p", few, 6),
            Ok(())
        );
        let none = list(0);
        assert_eq!(
            judge_basic(Claim::Empty, &none, "s", 2, "p", few, 6),
            Ok(())
        );
        // A list of another cohort, or one not rooted in its hashes.
        let mut other = list(8);
        other.cohort = 3;
        assert!(judge_basic(masked(&l, 8), &other, "s", 2, "p", GOOD, 6).is_err());
        let mut forged = list(8);
        forged.merkle_root = "00".repeat(32);
        assert!(
            judge_basic(masked(&forged, 8), &forged, "s", 2, "p", GOOD, 6)
                .unwrap_err()
                .contains("inconsistent")
        );
    }

    #[test]
    fn share_mode_outcomes_need_a_short_list() {
        let lists =
            |a: usize, b: usize| vec![("r0".to_owned(), list(a)), ("r1".to_owned(), list(b))];
        assert_eq!(
            judge_share_outcome(Claim::Empty, &lists(0, 5), "s", 2, 6),
            Ok(())
        );
        assert!(judge_share_outcome(Claim::Empty, &lists(8, 8), "s", 2, 6).is_err());
        assert_eq!(
            judge_share_outcome(Claim::Withheld { uploads: 4 }, &lists(4, 9), "s", 2, 6),
            Ok(())
        );
        assert!(
            judge_share_outcome(Claim::Withheld { uploads: 4 }, &lists(8, 9), "s", 2, 6).is_err()
        );
        assert!(
            judge_share_outcome(Claim::Withheld { uploads: 5 }, &lists(4, 9), "s", 2, 6).is_err()
        );
    }

    #[test]
    fn share_parts_must_match_their_services_list() {
        let l = list(8);
        assert!(judge_share_part(&l, "s", 2, "r0", &l.merkle_root, 8, 7).is_ok());
        assert!(judge_share_part(&l, "s", 2, "r0", &l.merkle_root, 8, 9).is_err());
        assert!(judge_share_part(&l, "s", 2, "r0", &l.merkle_root, 7, 7).is_err());
        assert!(judge_share_part(&l, "s", 2, "r0", "ab", 8, 7).is_err());
    }
}
