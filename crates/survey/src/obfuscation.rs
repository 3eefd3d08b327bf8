//! The manifest's strong-obfuscation statement for the masks actually run (issue 21 §3).
//!
//! Seed 000 (Definition 3.2, Theorem 3.9) proves that with left masks Haar on all of `O(n)` each
//! party's posterior on `X₁` is its prior restricted to the orbit `O(n)·X₁`, with probability at
//! least `1 − ε` over the padding noise. Our masks are not Haar on `O(n)`:
//!
//! * every left mask keeps `1ₙ` fixed (so the column sums survive), hence also the QA column
//!   `q·1ₙ`, and under partial masking the kept columns `X_keep`. With `F = [1ₙ, X_keep]`
//!   the alternatives a party cannot rule out are `P·X₁` with `P ∈ Stab(F) = {P ∈ O(n) : P·F =
//!   F}` (the orbit under the masks' own group; the release itself shows `F`);
//! * the provider's masks act cohort by cohort, so the collector, who sees each cohort's
//!   left-masked block, can rule out everything that mixes cohorts: `P` is block-diagonal by
//!   cohort (`diag(P₁, …, P_K)`, each `P_k` fixing its part of `F`). The public sees less
//!   (one mask over all rows), so the collector's set is the one to state.
//!
//! Appendix B's condition for that group is derived in `orthomask_core::protocol::design`
//! ("Masks that keep columns fixed"): the `F` terms cancel, so condition (3.5) is needed on the
//! masked answers only, and the Appendix C bound of the plan (computed with `p_m` masked
//! columns) is its failure probability. What the guarantee then leaves to a party is exactly
//! what `Stab(F)·X₁` shares: per cohort `1ₙᵀX₁` (the sums), `X_keep` row by row, `X_keepᵀX_m`
//! (with `X_keep` known, linear equations on the masked answers) and `X₁ᵀX₁`.

use crate::plan::Plan;
use orthomask_formats::manifest::{Method, Obfuscation};

/// The statement for a release made under `plan` with `kept` columns kept unmasked and `cohorts`
/// cohorts; `None` where seed 000's theorem does not apply (no padding: the first and second
/// methods of seed 003) or the plan carries no Appendix C bound.
pub fn guarantee(
    plan: &Plan,
    method: Method,
    kept: &[String],
    qa_column: Option<&str>,
    cohorts: usize,
) -> Option<Obfuscation> {
    if !matches!(method, Method::Modified | Method::Collusion) {
        return None;
    }
    let bound = plan.appendix_c.as_ref()?;
    let per_cohort = if cohorts > 1 { " of each cohort" } else { "" };
    let group = if cohorts > 1 {
        "P = diag(P₁, …, P_K) orthogonal block by cohort"
    } else {
        "P orthogonal"
    };
    let statement = format!(
        "Each party's posterior on the answers X₁ is its prior restricted to Stab(F)·X₁ = \
         {{P·X₁ : {group}, P·F = F}}, F the columns every mask keeps fixed (seed 000 \
         Definition 3.2 and Theorem 3.9 for masks that fix F; the QA and kept columns cancel \
         from condition (3.5), orthomask_core::protocol::design)"
    );
    let mut fixed = vec!["1ₙ (column sums)".to_owned()];
    fixed.extend(qa_column.map(|name| format!("{name} (the QA constant times 1ₙ)")));
    fixed.extend(kept.iter().cloned());
    let mut reveals = vec![format!("the column sums 1ₙᵀX₁{per_cohort}")];
    if !kept.is_empty() {
        let names = kept.join(", ");
        reveals.push(format!("the kept columns ({names}) row by row"));
        reveals.push(format!(
            "X_keepᵀX_m{per_cohort}: the kept columns' cross-products with the masked answers, \
             linear equations on them once X_keep is known"
        ));
    }
    reveals.push(format!(
        "X₁ᵀX₁{per_cohort} (the cross-products a regression needs)"
    ));
    Some(Obfuscation {
        statement,
        fixed,
        reveals,
        holds_with_probability: 1.0 - bound.failure_probability,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{CohortBounds, PlanRequest};

    fn plan(kept: usize, orthogonal: bool) -> Plan {
        Plan::new(&PlanRequest {
            kept_columns: kept,
            orthogonal_right_mask: orthogonal,
            ..PlanRequest::new(
                3,
                Some(888.0),
                CohortBounds {
                    smallest: 40,
                    largest: 40,
                },
                1.0,
            )
        })
        .unwrap()
    }

    /// With kept columns the statement names the stabiliser and everything it leaves visible:
    /// the sums, the kept column itself and its cross-products with the masked answers.
    #[test]
    fn kept_columns_are_named_with_what_they_reveal() {
        let kept = vec!["age".to_owned()];
        let g = guarantee(&plan(1, true), Method::Modified, &kept, Some("qa"), 1).unwrap();
        assert!(g.statement.contains("Stab(F)·X₁"), "{}", g.statement);
        assert_eq!(g.fixed.len(), 3);
        assert!(g.fixed[2] == "age" && g.fixed[1].starts_with("qa"));
        let all = g.reveals.join(" | ");
        for needle in ["column sums", "(age) row by row", "X_keepᵀX_m", "X₁ᵀX₁"] {
            assert!(all.contains(needle), "{needle} missing from {all}");
        }
        assert!(g.holds_with_probability > 0.999_99 && g.holds_with_probability < 1.0);
    }

    /// Without kept columns nothing about X_keep is claimed; with cohorts the sums and
    /// cross-products are per cohort and the group is block-diagonal.
    #[test]
    fn cohorts_make_the_revealed_sums_per_cohort() {
        let g = guarantee(&plan(0, true), Method::Modified, &[], Some("qa"), 3).unwrap();
        let all = g.reveals.join(" | ");
        assert!(!all.contains("X_keep"), "{all}");
        assert!(all.contains("1ₙᵀX₁ of each cohort"), "{all}");
        assert!(g.statement.contains("diag(P₁, …, P_K)"), "{}", g.statement);
    }

    /// The unpadded methods of seed 003 have no obfuscation theorem: no statement.
    #[test]
    fn the_first_and_second_methods_state_nothing() {
        let p = plan(0, true);
        for method in [Method::First, Method::Second] {
            assert!(guarantee(&p, method, &[], None, 1).is_none());
        }
    }
}
