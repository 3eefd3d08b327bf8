//! Model checks that are exact on a masked release (issue 22 §2): F tests of nested models, a
//! RESET-style test on declared power terms, a Chow test on declared group interactions, the
//! correlation of the residuals with every column, R², AIC/BIC under normal errors and variance
//! inflation factors.
//!
//! # Why these, and why they are exact on a release
//! A release is `A·X` with `A` orthogonal and `A·1ₙ = 1ₙ` (the collector's `A₁`, seed 003 §3.1),
//! so every inner product of two released columns equals that of the raw columns,
//! `(Au)ᵀ(Av) = uᵀv`, and every mean is kept, `1ₙᵀAu = (Aᵀ1ₙ)ᵀu = 1ₙᵀu` (`Aᵀ1ₙ = A⁻¹1ₙ = 1ₙ`).
//! Each statistic below is a function of those inner products and means alone:
//!
//! * a residual sum of squares is `yᵀy − yᵀZ(ZᵀZ)⁻¹Zᵀy`, a function of the cross-products of
//!   `[Z y]` (computed, as in [`crate::linear`], from the QR of `[Z y]`, never from `(ZᵀZ)⁻¹`);
//!   so are the F statistics of nested models, R², the normal log-likelihood, AIC, BIC, and the
//!   R² of one predictor on the others that a VIF is;
//! * the correlation of the residuals `e = y − Zβ̂` with any column `w` is
//!   `(eᵀw − n·ē·w̄) / (‖e − ē1ₙ‖·‖w − w̄1ₙ‖)` with `eᵀw = yᵀw − β̂ᵀZᵀw`, `eᵀe = RSS`,
//!   `ē = ȳ − β̂ᵀz̄` (`z̄` the column means), all functions of the cross-product matrix of
//!   `[1ₙ Z y w]` (seed 001 §3.2 proposes exactly these correlations when the residuals
//!   themselves may not be shared). On a release the residuals are `A·e` and the column `A·w`,
//!   whose inner products and means are the raw ones, so the Pearson correlation of the two
//!   released vectors, which is what is computed here, is the raw correlation.
//!
//! Per-row quantities (the residuals themselves, leverages, Cook's distances, quantiles) are not
//! functions of inner products and are *not* kept (see the web app's
//! `RELEASE_HAS_NO_ROW_DIAGNOSTICS`).
//!
//! # What is not computable on a release: RESET with powers of the fitted values
//! Ramsey's RESET regresses `y` on `Z` and `ŷ², ŷ³, …` (elementwise powers of `ŷ = Zβ̂`). On a
//! release the fitted values are `A·ŷ`, and `(Aŷ)∘(Aŷ) ≠ A(ŷ∘ŷ)`: elementwise powers do not
//! commute with a rotation. `ŷ∘ŷ = Σⱼₖ β̂ⱼβ̂ₖ·(zⱼ∘zₖ)` is a linear combination of released columns
//! only if every product `zⱼ∘zₖ` of regressors was itself released (declared as a derived term
//! and computed on the device). In general it is not, so the classical RESET is not computable
//! from a release. What is computable is the nested F test of the model without against with
//! the declared power terms ([`ResetTest`]); for a single predictor `x` with `x²` declared, the
//! two coincide for the power 2, since `ŷ² = (b₀ + b₁x)² ∈ span(1, x, x²)`.

use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use crate::dataset::{Dataset, DatasetError};
use crate::design::{INTERCEPT_NAME, Intercept};
use crate::linear::{LinearError, LinearRegression};
use crate::tolerance::PIVOTED_RANK_RELATIVE;

/// Errors of the model tests.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelTestError {
    /// One of the models could not be fitted.
    #[error(transparent)]
    Fit(#[from] LinearError),
    /// A column named in a test is not in the data.
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// The reduced model has a term the full model lacks.
    #[error(
        "the models are not nested: {term:?} is in the reduced model but not in the full one; list a subset of the full model's terms"
    )]
    NotNested {
        /// The term of the reduced model missing from the full one.
        term: String,
    },
    /// The full model adds no term to the reduced one.
    #[error("the full model adds no term to the reduced one, so there is nothing to test")]
    NothingAdded,
    /// A term to be tested (a power, a group column, an interaction) is not in the model.
    #[error("{term:?} is not among the model's predictors; add it to the model to test it")]
    TermNotInModel {
        /// The term.
        term: String,
    },
    /// A term is collinear with the others, so the models' degrees of freedom are not what their
    /// term lists say.
    #[error(
        "{term:?} is collinear with the other terms of the model; drop it and test again (R would report it as NA)"
    )]
    Aliased {
        /// The aliased term.
        term: String,
    },
    /// No residual degrees of freedom are left in the full model.
    #[error(
        "{n} observations leave no residual degrees of freedom for {terms} coefficients; an F test needs n > p"
    )]
    TooFewResidualDf {
        /// Records.
        n: usize,
        /// Coefficients of the full model, intercept included.
        terms: usize,
    },
    /// VIFs are defined about the means: they need a model with an intercept.
    #[error("variance inflation factors need a model with an intercept; refit with the intercept")]
    NoIntercept,
}

/// Fit `response ~ terms`, refusing aliased terms and a model without residual degrees of
/// freedom.
fn fit_unaliased(
    data: &Dataset,
    response: &str,
    terms: &[&str],
    intercept: Intercept,
) -> Result<LinearRegression, ModelTestError> {
    let coefficients = terms.len() + usize::from(intercept == Intercept::Included);
    if data.nrows() <= coefficients {
        return Err(ModelTestError::TooFewResidualDf {
            n: data.nrows(),
            terms: coefficients,
        });
    }
    let fit = LinearRegression::fit(data, response, terms, intercept)?;
    if let Some(term) = fit.aliased().first() {
        return Err(ModelTestError::Aliased {
            term: term.name().to_owned(),
        });
    }
    Ok(fit)
}

/// Upper tail of `F(df₁, df₂)` at `f`, as R's `pf(f, df₁, df₂, lower.tail = FALSE)`: 0 at
/// `f = +∞` (an exact fit of the full model), NaN at NaN.
fn f_upper_tail(f: f64, df1: usize, df2: usize) -> f64 {
    match FisherSnedecor::new(df1 as f64, df2 as f64) {
        Ok(dist) if f.is_finite() => dist.sf(f),
        _ if f.is_nan() => f64::NAN,
        _ if f == f64::INFINITY => 0.0,
        _ => f64::NAN,
    }
}

/// The F test of a reduced model against a full model that contains its terms and more — R's
/// `anova(lm(y ~ reduced), lm(y ~ full))`.
///
/// # Formula
/// With `RSSᵢ` the residual sums of squares on `dfᵢ = n − pᵢ` degrees of freedom (0: reduced,
/// 1: full, `p₀ < p₁`), `F = ((RSS₀ − RSS₁)/(df₀ − df₁)) / (RSS₁/df₁) ~ F(df₀ − df₁, df₁)` under
/// `H₀`: the added coefficients are zero (normal errors). Each RSS is `‖(Qᵀy)_{p+1…n}‖²` of the
/// QR of `[Z y]` ([`LinearRegression`]), a function of the cross-products of `[Z y]`: the same on
/// a release as on the raw data (module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct NestedFTest {
    reduced: Vec<String>,
    added: Vec<String>,
    rss_reduced: f64,
    rss_full: f64,
    df_reduced: usize,
    df_full: usize,
    f: f64,
    p_value: f64,
}

impl NestedFTest {
    /// Test `response ~ reduced` against `response ~ full` (both with or both without the
    /// intercept). The models are nested when every term of `reduced` is a term of `full`.
    ///
    /// # Errors
    /// [`ModelTestError::NotNested`], [`ModelTestError::NothingAdded`],
    /// [`ModelTestError::Aliased`] (a term collinear with the others in either model),
    /// [`ModelTestError::TooFewResidualDf`], and fit errors (unknown columns, …).
    pub fn new(
        data: &Dataset,
        response: &str,
        reduced: &[&str],
        full: &[&str],
        intercept: Intercept,
    ) -> Result<Self, ModelTestError> {
        if let Some(term) = reduced.iter().find(|t| !full.contains(t)) {
            return Err(ModelTestError::NotNested {
                term: (*term).to_owned(),
            });
        }
        let added: Vec<String> = full
            .iter()
            .filter(|t| !reduced.contains(t))
            .map(|t| (*t).to_owned())
            .collect();
        if added.is_empty() {
            return Err(ModelTestError::NothingAdded);
        }
        let full_fit = fit_unaliased(data, response, full, intercept)?;
        let reduced_fit = fit_unaliased(data, response, reduced, intercept)?;
        let (rss_reduced, rss_full) = (
            reduced_fit.anova().residual().sum_of_squares(),
            full_fit.anova().residual().sum_of_squares(),
        );
        let (df_reduced, df_full) = (reduced_fit.df_resid(), full_fit.df_resid());
        let df = df_reduced - df_full;
        let f = ((rss_reduced - rss_full) / df as f64) / (rss_full / df_full as f64);
        Ok(Self {
            reduced: reduced.iter().map(|t| (*t).to_owned()).collect(),
            added,
            rss_reduced,
            rss_full,
            df_reduced,
            df_full,
            f,
            p_value: f_upper_tail(f, df, df_full),
        })
    }

    /// The F test of dropping each predictor from `response ~ predictors` in turn, in the
    /// predictors' order — R's `drop1(lm(...), test = "F")`.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn drop_each(
        data: &Dataset,
        response: &str,
        predictors: &[&str],
        intercept: Intercept,
    ) -> Result<Vec<Self>, ModelTestError> {
        predictors
            .iter()
            .map(|dropped| {
                let reduced: Vec<&str> = predictors
                    .iter()
                    .copied()
                    .filter(|t| t != dropped)
                    .collect();
                Self::new(data, response, &reduced, predictors, intercept)
            })
            .collect()
    }

    /// Terms of the reduced model (without the intercept).
    pub fn reduced_terms(&self) -> &[String] {
        &self.reduced
    }

    /// Terms the full model adds, in the full model's order.
    pub fn added_terms(&self) -> &[String] {
        &self.added
    }

    /// `RSS₀` of the reduced model.
    pub fn rss_reduced(&self) -> f64 {
        self.rss_reduced
    }

    /// `RSS₁` of the full model.
    pub fn rss_full(&self) -> f64 {
        self.rss_full
    }

    /// Residual degrees of freedom of the reduced model, `df₀`.
    pub fn df_reduced(&self) -> usize {
        self.df_reduced
    }

    /// Residual degrees of freedom of the full model, `df₁` (the F test's denominator df).
    pub fn df_full(&self) -> usize {
        self.df_full
    }

    /// Numerator degrees of freedom `df₀ − df₁`.
    pub fn df(&self) -> usize {
        self.df_reduced - self.df_full
    }

    /// Extra sum of squares `RSS₀ − RSS₁`.
    pub fn sum_of_squares(&self) -> f64 {
        self.rss_reduced - self.rss_full
    }

    /// The F statistic.
    pub fn f_statistic(&self) -> f64 {
        self.f
    }

    /// Its upper-tail p-value.
    pub fn p_value(&self) -> f64 {
        self.p_value
    }
}

/// A RESET-style test of the functional form (Ramsey 1969), computable on a release: the nested F
/// test of the model without against with the declared power terms (`x²`, `x³`, … computed on
/// the device).
///
/// The classical RESET with powers of the fitted values is *not* computable on a release (module
/// documentation): `ŷ²` is not a linear combination of released columns. For a model with one
/// predictor `x` and the power `x²`, this test is the classical RESET with power 2.
#[derive(Debug, Clone, PartialEq)]
pub struct ResetTest {
    test: NestedFTest,
}

impl ResetTest {
    /// Test `response ~ predictors` against the same model without `powers` (each a column of
    /// `predictors`).
    ///
    /// # Errors
    /// [`ModelTestError::TermNotInModel`] for a power that is not a predictor, and as
    /// [`NestedFTest::new`].
    pub fn new(
        data: &Dataset,
        response: &str,
        predictors: &[&str],
        powers: &[&str],
        intercept: Intercept,
    ) -> Result<Self, ModelTestError> {
        let reduced = without(predictors, powers)?;
        Ok(Self {
            test: NestedFTest::new(data, response, &reduced, predictors, intercept)?,
        })
    }

    /// The power terms tested.
    pub fn powers(&self) -> &[String] {
        self.test.added_terms()
    }

    /// The nested F test it is.
    pub fn f_test(&self) -> &NestedFTest {
        &self.test
    }
}

/// The Chow test (Chow 1960) of whether a relation differs between two groups: the nested F test
/// of the pooled model against the model with the group's indicator and its interactions with
/// the predictors (`x·g`, computed on the device), which fits each group its own intercept and
/// slopes. With every predictor interacted, it is Chow's classical F test; on a release it is
/// exact, whereas fitting each group separately is impossible there (it needs the rows).
#[derive(Debug, Clone, PartialEq)]
pub struct ChowTest {
    group: String,
    test: NestedFTest,
}

impl ChowTest {
    /// Test `response ~ predictors` (which contain `group` and `interactions`) against the pooled
    /// model without them.
    ///
    /// # Errors
    /// [`ModelTestError::TermNotInModel`] when the group or an interaction is not a predictor,
    /// and as [`NestedFTest::new`].
    pub fn new(
        data: &Dataset,
        response: &str,
        predictors: &[&str],
        group: &str,
        interactions: &[&str],
        intercept: Intercept,
    ) -> Result<Self, ModelTestError> {
        let mut group_terms = vec![group];
        group_terms.extend_from_slice(interactions);
        let pooled = without(predictors, &group_terms)?;
        Ok(Self {
            group: group.to_owned(),
            test: NestedFTest::new(data, response, &pooled, predictors, intercept)?,
        })
    }

    /// The group indicator.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The nested F test it is (its added terms: the group and the interactions).
    pub fn f_test(&self) -> &NestedFTest {
        &self.test
    }
}

/// `terms` without `removed`, each of which must be among them.
fn without<'a>(terms: &[&'a str], removed: &[&str]) -> Result<Vec<&'a str>, ModelTestError> {
    if let Some(term) = removed.iter().find(|t| !terms.contains(t)) {
        return Err(ModelTestError::TermNotInModel {
            term: (*term).to_owned(),
        });
    }
    Ok(terms
        .iter()
        .copied()
        .filter(|t| !removed.contains(t))
        .collect())
}

/// R², adjusted R² and the information criteria of a fitted linear model under normal errors —
/// R's `summary(lm)$r.squared`, `$adj.r.squared`, `logLik(lm)`, `AIC(lm)`, `BIC(lm)`.
///
/// # Formula
/// The maximised normal log-likelihood, with `σ̂²_ML = RSS/n`, is
/// `ℓ = −n/2·(log(2π) + log(RSS/n) + 1)`; with `k = r + 1` parameters (`r` estimable
/// coefficients and σ), `AIC = −2ℓ + 2k` and `BIC = −2ℓ + log(n)·k`. Functions of `RSS`, `n`
/// and `r` only, so exact on a release.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InformationCriteria {
    r_squared: f64,
    adj_r_squared: f64,
    log_likelihood: f64,
    parameters: usize,
    aic: f64,
    bic: f64,
}

impl InformationCriteria {
    /// The criteria of `fit`.
    pub fn of(fit: &LinearRegression) -> Self {
        let n = fit.n() as f64;
        let rss = fit.anova().residual().sum_of_squares();
        let log_likelihood = -n / 2.0 * ((2.0 * std::f64::consts::PI).ln() + (rss / n).ln() + 1.0);
        let parameters = fit.coefficients().len() + 1;
        let k = parameters as f64;
        Self {
            r_squared: fit.r_squared(),
            adj_r_squared: fit.adj_r_squared(),
            log_likelihood,
            parameters,
            aic: -2.0 * log_likelihood + 2.0 * k,
            bic: -2.0 * log_likelihood + n.ln() * k,
        }
    }

    /// R² (uncentred without intercept).
    pub fn r_squared(&self) -> f64 {
        self.r_squared
    }

    /// Adjusted R².
    pub fn adj_r_squared(&self) -> f64 {
        self.adj_r_squared
    }

    /// Maximised normal log-likelihood `ℓ`.
    pub fn log_likelihood(&self) -> f64 {
        self.log_likelihood
    }

    /// Parameters counted, `k = r + 1` (R's `df` of `logLik`).
    pub fn parameters(&self) -> usize {
        self.parameters
    }

    /// Akaike's criterion `−2ℓ + 2k`.
    pub fn aic(&self) -> f64 {
        self.aic
    }

    /// Schwarz's criterion `−2ℓ + log(n)·k`.
    pub fn bic(&self) -> f64 {
        self.bic
    }
}

/// The variance inflation factor of one predictor.
///
/// # Formula
/// `VIFⱼ = 1/(1 − R²ⱼ)` with `R²ⱼ` that of regressing predictor `j` on the other predictors and
/// the intercept (the definition of R's `car::vif` for one-column terms of a model with an
/// intercept). Computed as `SS_total,ⱼ / RSSⱼ`, which equals it and keeps its digits when `R²ⱼ`
/// is near 1. A regression on released columns, so exact on a release.
#[derive(Debug, Clone, PartialEq)]
pub struct VarianceInflation {
    term: String,
    r_squared: f64,
    vif: f64,
}

impl VarianceInflation {
    /// The VIF of every predictor of a model with intercept, in the predictors' order.
    ///
    /// # Errors
    /// [`ModelTestError::NoIntercept`] without an intercept (car only warns; its values are then
    /// not the `1/(1 − R²ⱼ)` above), [`ModelTestError::Aliased`] when a predictor is collinear with
    /// the others (its VIF is infinite), and fit errors.
    pub fn for_predictors(
        data: &Dataset,
        predictors: &[&str],
        intercept: Intercept,
    ) -> Result<Vec<Self>, ModelTestError> {
        if intercept == Intercept::Excluded {
            return Err(ModelTestError::NoIntercept);
        }
        predictors
            .iter()
            .map(|term| {
                let others: Vec<&str> = predictors.iter().copied().filter(|t| t != term).collect();
                let fit = fit_unaliased(data, term, &others, Intercept::Included)?;
                let anova = fit.anova();
                let (total, residual) = (
                    anova.total().sum_of_squares(),
                    anova.residual().sum_of_squares(),
                );
                if residual <= PIVOTED_RANK_RELATIVE * PIVOTED_RANK_RELATIVE * total {
                    // The term lies in the span of the others (or is constant): the full model
                    // would alias it.
                    return Err(ModelTestError::Aliased {
                        term: (*term).to_owned(),
                    });
                }
                Ok(Self {
                    term: (*term).to_owned(),
                    r_squared: fit.r_squared(),
                    vif: total / residual,
                })
            })
            .collect()
    }

    /// The predictor.
    pub fn term(&self) -> &str {
        &self.term
    }

    /// `R²ⱼ` of the predictor on the others.
    pub fn r_squared(&self) -> f64 {
        self.r_squared
    }

    /// `1/(1 − R²ⱼ)`.
    pub fn vif(&self) -> f64 {
        self.vif
    }
}

/// The correlation of a model's residuals with one column (seed 001 §3.2): far from zero for a
/// column not in the model, the model may need it (or a function of it); for a regressor it is
/// zero by construction (`Zᵀe = 0`), up to rounding.
///
/// # Formula
/// The Pearson correlation `(eᵀw − n·ē·w̄) / (‖e − ē1ₙ‖·‖w − w̄1ₙ‖)`, a function of the
/// cross-products and means of `[1ₙ Z y w]` (module documentation), hence the same on a release.
#[derive(Debug, Clone, PartialEq)]
pub struct ResidualCorrelation {
    column: String,
    in_model: bool,
    correlation: Option<f64>,
}

impl ResidualCorrelation {
    /// The correlation of `fit`'s residuals with every column of `data` except the response, in
    /// the data's order. `data` must be the data `fit` was fitted on.
    pub fn of(data: &Dataset, fit: &LinearRegression) -> Vec<Self> {
        let e = fit.residuals();
        let n = e.len() as f64;
        let centred_norm = |v: &nalgebra::DVector<f64>| {
            let mean = v.sum() / n;
            let centred = v.map(|x| x - mean);
            (centred.norm(), v.norm())
        };
        let (e_spread, e_size) = centred_norm(e);
        let in_model = |name: &str| {
            fit.coefficients()
                .iter()
                .map(|c| c.name())
                .chain(fit.aliased().iter().map(|a| a.name()))
                .any(|t| t == name && t != INTERCEPT_NAME)
        };
        data.names()
            .iter()
            .enumerate()
            .filter(|(_, name)| *name != fit.response())
            .map(|(j, name)| {
                let w = data.values().column(j).into_owned();
                let (w_spread, w_size) = centred_norm(&w);
                // A column (or residual vector) whose spread is rounding noise of its size has no
                // correlation: on a release a constant column is constant only up to rounding, and
                // the fit's rank rule treats such a column as the intercept.
                // An exact fit's residuals are rounding noise, correlated with nothing.
                let defined = w_spread > PIVOTED_RANK_RELATIVE * w_size
                    && e_spread > PIVOTED_RANK_RELATIVE * e_size
                    && !fit.is_exact_fit();
                let correlation = defined.then(|| {
                    let (e_mean, w_mean) = (e.sum() / n, w.sum() / n);
                    (e.dot(&w) - n * e_mean * w_mean) / (e_spread * w_spread)
                });
                Self {
                    column: name.clone(),
                    in_model: in_model(name),
                    correlation,
                }
            })
            .collect()
    }

    /// The column.
    pub fn column(&self) -> &str {
        &self.column
    }

    /// Whether the column is a term of the model (its correlation is then zero up to rounding).
    pub fn in_model(&self) -> bool {
        self.in_model
    }

    /// The correlation; `None` when the column or the residuals are constant, or the fit exact.
    pub fn correlation(&self) -> Option<f64> {
        self.correlation
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{HAND_SOLVED_RELATIVE, relative_difference};

    fn close(a: f64, b: f64) -> bool {
        relative_difference(a, b) < HAND_SOLVED_RELATIVE
    }

    fn data(columns: &[(&str, &[f64])]) -> Dataset {
        Dataset::from_columns(
            columns
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.to_vec()))
                .collect(),
        )
        .unwrap()
    }

    /// By hand: x = (0, 1, 2, 3), y = (1, 3, 2, 4) (the example of `linear.rs`): RSS of y ~ x is
    /// 1.8 on 2 df, of y ~ 1 is Σ(y − 2.5)² = 5 on 3 df, so F = (3.2/1)/(1.8/2) = 32/9, the
    /// overall F of y ~ x. AIC with k = 3: −2ℓ = 4·(log 2π + log 0.45 + 1).
    #[test]
    fn hand_solved_nested_test_and_criteria() {
        let d = data(&[("x", &[0.0, 1.0, 2.0, 3.0]), ("y", &[1.0, 3.0, 2.0, 4.0])]);
        let t = NestedFTest::new(&d, "y", &[], &["x"], Intercept::Included).unwrap();
        assert!(close(t.rss_reduced(), 5.0) && close(t.rss_full(), 1.8));
        assert_eq!((t.df_reduced(), t.df_full(), t.df()), (3, 2, 1));
        assert!(close(t.f_statistic(), 32.0 / 9.0));
        assert!(close(t.sum_of_squares(), 3.2));
        assert_eq!(t.added_terms(), ["x"]);
        let fit = LinearRegression::fit(&d, "y", &["x"], Intercept::Included).unwrap();
        assert!(close(t.p_value(), fit.f_p_value().unwrap()));
        let c = InformationCriteria::of(&fit);
        let minus_two_l = 4.0 * ((2.0 * std::f64::consts::PI).ln() + 0.45f64.ln() + 1.0);
        assert!(close(c.aic(), minus_two_l + 6.0));
        assert!(close(c.bic(), minus_two_l + 4f64.ln() * 3.0));
        assert_eq!(c.parameters(), 3);
    }

    /// One line each for models that cannot be compared.
    #[test]
    fn models_that_cannot_be_compared_are_refused() {
        let d = data(&[
            ("x", &[0.0, 1.0, 2.0, 3.0]),
            ("twice", &[0.0, 2.0, 4.0, 6.0]),
            ("w", &[1.0, 0.0, 1.0, 5.0]),
            ("y", &[1.0, 3.0, 2.0, 4.0]),
        ]);
        let i = Intercept::Included;
        assert_eq!(
            NestedFTest::new(&d, "y", &["w"], &["x"], i).unwrap_err(),
            ModelTestError::NotNested { term: "w".into() }
        );
        assert_eq!(
            NestedFTest::new(&d, "y", &["x"], &["x"], i).unwrap_err(),
            ModelTestError::NothingAdded
        );
        assert_eq!(
            NestedFTest::new(&d, "y", &["x"], &["x", "twice"], i).unwrap_err(),
            ModelTestError::Aliased {
                term: "twice".into()
            }
        );
        assert_eq!(
            NestedFTest::new(&d, "y", &["x"], &["x", "twice", "w"], i).unwrap_err(),
            ModelTestError::TooFewResidualDf { n: 4, terms: 4 }
        );
        assert_eq!(
            ResetTest::new(&d, "y", &["x"], &["w"], i).unwrap_err(),
            ModelTestError::TermNotInModel { term: "w".into() }
        );
        assert_eq!(
            VarianceInflation::for_predictors(&d, &["x"], Intercept::Excluded).unwrap_err(),
            ModelTestError::NoIntercept
        );
        assert_eq!(
            VarianceInflation::for_predictors(&d, &["x", "twice"], i).unwrap_err(),
            ModelTestError::Aliased { term: "x".into() }
        );
        for e in [
            ModelTestError::NothingAdded,
            ModelTestError::NoIntercept,
            ModelTestError::TooFewResidualDf { n: 4, terms: 4 },
        ] {
            assert!(!e.to_string().contains('\n'));
        }
    }

    /// A residual vector is orthogonal to the regressors, and a constant column has no
    /// correlation: x = (0, 1, 2, 3), y = (1, 3, 2, 4), residuals (−0.3, 0.9, −0.9, 0.3);
    /// w = (1, 0, 0, 0) gives eᵀw = −0.3, ‖e‖² = 1.8, ‖w − ¼‖² = 0.75, so −0.3/√1.35.
    #[test]
    fn hand_solved_residual_correlations() {
        let d = data(&[
            ("x", &[0.0, 1.0, 2.0, 3.0]),
            ("y", &[1.0, 3.0, 2.0, 4.0]),
            ("w", &[1.0, 0.0, 0.0, 0.0]),
            ("qa", &[888.0; 4]),
        ]);
        let fit = LinearRegression::fit(&d, "y", &["x"], Intercept::Included).unwrap();
        let r = ResidualCorrelation::of(&d, &fit);
        let names: Vec<&str> = r.iter().map(ResidualCorrelation::column).collect();
        assert_eq!(names, ["x", "w", "qa"]);
        assert!(r[0].in_model() && !r[1].in_model());
        assert!(r[0].correlation().unwrap().abs() < HAND_SOLVED_RELATIVE);
        assert!(close(r[1].correlation().unwrap(), -0.3 / 1.35f64.sqrt()));
        assert_eq!(r[2].correlation(), None);
    }
}
