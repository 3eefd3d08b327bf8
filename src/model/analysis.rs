//! The analyst view's model: everything computed from a released CSV (and, when available, the
//! original it was masked from). Regression, logistic regression and contingency tables are
//! `orthomask-stats`; this module chooses what to fit, samples points for the plots and writes
//! the exports.

use nalgebra::DMatrix;
use orthomask_formats::csv::{CsvError, Table, UnknownColumn, parse_table, printed_decimals};
use orthomask_formats::manifest::Manifest;
use orthomask_formats::model_terms::Term;
use orthomask_stats::contingency::{ContingencyError, ContingencyTable};
use orthomask_stats::dataset::{Dataset, DatasetError};
use orthomask_stats::design::Intercept;
use orthomask_stats::inference::Coefficient;
use orthomask_stats::linear::{LinearError, LinearRegression};
use orthomask_stats::logistic::LogisticRegression;
use orthomask_stats::model_tests::{
    ChowTest, InformationCriteria, NestedFTest, ResetTest, ResidualCorrelation, VarianceInflation,
};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

use super::audit::{AuditResult, NamedText, audit_table};
pub use super::contingency_summary::{FisherSummary, MAX_TABLES, TableSummary};
use super::labels::{LoadedPackage, labelled_tables, read_package};
use super::shown;

/// Why a part of the analysis cannot be computed.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The release (or the original) is not a numeric CSV table.
    #[error(transparent)]
    Table(#[from] CsvError),
    /// A column named in the request is not in the table.
    #[error(transparent)]
    Column(#[from] UnknownColumn),
    /// The table is not a valid data set (names, values).
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// A linear fit failed.
    #[error("{panel}{source}")]
    Linear {
        /// The panel's title and a colon, or nothing for the main model.
        panel: String,
        /// The fit's reason.
        source: LinearError,
    },
    /// A scatter panel's predictor is constant: the fit drops it, so there is no line.
    #[error("{panel}: {column} is constant, so no line can be fitted against it")]
    ConstantPredictor {
        /// The panel's title.
        panel: String,
        /// The constant column.
        column: String,
    },
    /// A contingency table cannot be formed.
    #[error(transparent)]
    Contingency(#[from] ContingencyError),
}

/// Largest number of points drawn in one scatter plot; larger data are thinned evenly.
pub const MAX_PLOT_POINTS: usize = 2000;

/// What to analyse.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysisRequest {
    /// The released table.
    pub data: NamedText,
    /// The original (raw) table, for the side-by-side plots of seed 003 Figure 2.
    pub original: Option<NamedText>,
    /// The release manifest, for the audit summary.
    pub manifest: Option<NamedText>,
    /// The release's data package (`datapackage.json`), whose labels name the contingency
    /// tables' rows and columns ([`super::labels`]).
    #[serde(default)]
    pub package: Option<NamedText>,
    /// Response column (`None`: the first non-constant column).
    pub y: Option<String>,
    /// Predictors (empty: the next non-constant column).
    pub x: Vec<String>,
}

/// One row of a coefficient table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoefficientRow {
    /// Term.
    pub name: String,
    /// Estimate.
    pub estimate: f64,
    /// Standard error.
    pub std_error: f64,
    /// t (linear) or z (logistic).
    pub t: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Lower end of the 95% interval.
    pub ci_low: f64,
    /// Upper end of the 95% interval.
    pub ci_high: f64,
}

impl From<&Coefficient> for CoefficientRow {
    fn from(c: &Coefficient) -> Self {
        Self {
            name: c.name().to_owned(),
            estimate: c.estimate(),
            std_error: c.std_error(),
            t: c.statistic(),
            p: c.p_value(),
            ci_low: c.ci_low(),
            ci_high: c.ci_high(),
        }
    }
}

/// A linear regression, ready to show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearSummary {
    /// Response.
    pub response: String,
    /// Predictors.
    pub predictors: Vec<String>,
    /// Coefficients, intercept first.
    pub coefficients: Vec<CoefficientRow>,
    /// R².
    pub r_squared: f64,
    /// Adjusted R².
    pub adj_r_squared: f64,
    /// Residual standard error σ̂.
    pub sigma: f64,
    /// Overall F statistic.
    pub f_statistic: Option<f64>,
    /// Its p-value.
    pub f_p_value: Option<f64>,
    /// Residual degrees of freedom.
    pub df_resid: usize,
    /// Records.
    pub n: usize,
}

/// A logistic regression, ready to show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogisticSummary {
    /// Response.
    pub response: String,
    /// Coefficients (z statistics), intercept first.
    pub coefficients: Vec<CoefficientRow>,
    /// Residual deviance.
    pub deviance: f64,
    /// Null deviance.
    pub null_deviance: f64,
    /// Newton iterations used.
    pub iterations: usize,
}

/// A scatter plot with its least-squares line (one panel of seed 003 Figure 2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScatterPanel {
    /// Panel title ("Original data", "Masked release").
    pub title: String,
    /// Horizontal variable.
    pub x_name: String,
    /// Vertical variable.
    pub y_name: String,
    /// Points drawn (thinned to at most [`MAX_PLOT_POINTS`]).
    pub points: Vec<(f64, f64)>,
    /// Points in the data.
    pub total_points: usize,
    /// Fitted intercept.
    pub intercept: f64,
    /// Fitted slope.
    pub slope: f64,
}

impl ScatterPanel {
    /// The fitted equation as printed under the panel.
    pub fn equation(&self) -> String {
        let sign = if self.slope < 0.0 { '−' } else { '+' };
        format!(
            "{} = {} {sign} {} × {}",
            self.y_name,
            super::format::sig(self.intercept, 6),
            super::format::sig(self.slope.abs(), 6),
            self.x_name
        )
    }
}

/// Why a release alone gets no per-row diagnostics (issue 22 §2). A release is `A₁A₂X₁` with
/// `A` a random orthogonal matrix keeping `1ₙ` fixed, so its residuals are `A·e`: a random
/// rotation of the raw residual vector. Its length — hence σ̂, R², F and every test built from
/// `XᵀX` — is exact, but its entries are spread over all rows: they look normal and unrelated to
/// the fitted values whatever the raw residuals were (seed 003: "residual plots and diagnostic
/// methods will no longer be valid"; seeds 000 and 002 claim otherwise, which their own
/// construction contradicts). So they are not shown as findings.
pub const RELEASE_HAS_NO_ROW_DIAGNOSTICS: &str = "Residual and Q–Q plots, leverage, Cook's \
    distance and quantiles are per-row diagnostics, which a masked release cannot give: its \
    residuals are a random rotation of the raw ones, so they look normal and unrelated to the \
    fitted values whatever the raw residuals were. Load the original data to see them.";

/// Residual diagnostics of the linear model, fitted on the original data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnostics {
    /// (fitted, residual) pairs.
    pub residual_vs_fitted: Vec<(f64, f64)>,
    /// (theoretical normal quantile, standardised residual) pairs, sorted.
    pub qq: Vec<(f64, f64)>,
    /// Residuals in the model.
    pub total_points: usize,
}

/// One predictor's variance inflation factor, `1/(1 − R²ⱼ)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VifRow {
    /// Predictor.
    pub name: String,
    /// Its VIF.
    pub vif: f64,
}

/// The correlation of the model's residuals with a column not in the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResidualCorrelationRow {
    /// Column.
    pub column: String,
    /// Correlation; `None` for a constant column.
    pub correlation: Option<f64>,
}

/// The F test of the analyst's model against the same model without one predictor (R's
/// `drop1(fit, test = "F")`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DropTestRow {
    /// The predictor dropped.
    pub name: String,
    /// F statistic on `df` and `df_resid` degrees of freedom (`None` when not finite: an exact
    /// fit).
    pub f: Option<f64>,
    /// Numerator degrees of freedom.
    pub df: usize,
    /// Residual degrees of freedom of the analyst's model.
    pub df_resid: usize,
    /// Upper-tail p-value (`None` when not finite).
    pub p: Option<f64>,
}

/// What a release gives exactly about the analyst's model (issue 22 §2), in place of the
/// per-row diagnostics it cannot give. Each is a function of the cross-products and means of the
/// columns, which the mask keeps (`orthomask_stats::model_tests` derives why), so the release
/// and the original data give the same numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExactTests {
    /// Normal log-likelihood (R's `logLik`); `None` when not finite (an exact fit).
    pub log_likelihood: Option<f64>,
    /// R's `AIC(fit)`; `None` when not finite.
    pub aic: Option<f64>,
    /// R's `BIC(fit)`; `None` when not finite.
    pub bic: Option<f64>,
    /// Variance inflation factor of each predictor, or why there are none (a collinear term).
    pub vif: Result<Vec<VifRow>, String>,
    /// The residuals' correlation with every column not in the model (seed 001 §3.2): far from
    /// zero, the column (or a function of it) may belong in the model.
    pub residual_correlations: Vec<ResidualCorrelationRow>,
    /// The F test of dropping each predictor, or why there are none.
    pub drop_tests: Result<Vec<DropTestRow>, String>,
    /// The tests the survey's declared model terms make possible (issue 22 §3): RESET-style on
    /// the declared powers in the model, Chow on each 0/1 group whose declared products are in
    /// it. Empty without a manifest declaring terms, or when the model has none of them.
    #[serde(default)]
    pub declared_tests: Vec<Result<DeclaredTestRow, String>>,
}

/// Which test of declared terms a row is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DeclaredTest {
    /// The model against the model without its declared powers.
    Reset,
    /// The model against the pooled one without the group's indicator and its products.
    Chow {
        /// The group's 0/1 column.
        group: String,
    },
}

/// One F test of declared terms: the model against the reduced one (R's `anova(reduced, fit)`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeclaredTestRow {
    /// Which test.
    pub test: DeclaredTest,
    /// The reduced model's predictors.
    pub reduced: Vec<String>,
    /// The terms the model adds to it.
    pub added: Vec<String>,
    /// F statistic (`None` when not finite: an exact fit).
    pub f: Option<f64>,
    /// Numerator degrees of freedom.
    pub df: usize,
    /// Residual degrees of freedom of the model.
    pub df_resid: usize,
    /// Upper-tail p-value (`None` when not finite).
    pub p: Option<f64>,
}

impl DeclaredTestRow {
    fn of(test: DeclaredTest, t: &NestedFTest) -> Self {
        Self {
            test,
            reduced: t.reduced_terms().to_vec(),
            added: t.added_terms().to_vec(),
            f: finite(t.f_statistic()),
            df: t.df(),
            df_resid: t.df_full(),
            p: finite(t.p_value()),
        }
    }
}

/// The tests of [`ExactTests::declared_tests`]. Which predictors are declared powers and
/// products is `orthomask_survey::formula`'s reading of the model (the one the CLI's `--terms`
/// makes); a group is a 0/1 column of the model that a declared product in it multiplies.
fn declared_tests(
    data: &Dataset,
    y: &str,
    x: &[String],
    terms: &[Term],
    binary: &[String],
) -> Vec<Result<DeclaredTestRow, String>> {
    if terms.is_empty() {
        return Vec::new();
    }
    let quoted: Vec<String> = x.iter().map(|c| format!("`{c}`")).collect();
    let Ok(model) = orthomask_survey::formula::resolve(
        &format!("`{y}` ~ {}", quoted.join(" + ")),
        data.names(),
        terms,
    ) else {
        return Vec::new();
    };
    let predictors: Vec<&str> = x.iter().map(String::as_str).collect();
    let mut rows = Vec::new();
    if !model.powers.is_empty() {
        let powers: Vec<&str> = model.powers.iter().map(String::as_str).collect();
        rows.push(shown(
            ResetTest::new(data, y, &predictors, &powers, Intercept::Included)
                .map(|t| DeclaredTestRow::of(DeclaredTest::Reset, t.f_test())),
        ));
    }
    for group in x.iter().filter(|c| binary.contains(c)) {
        let interactions = model.interactions_with(group);
        if interactions.is_empty() {
            continue;
        }
        let interactions: Vec<&str> = interactions.iter().map(String::as_str).collect();
        rows.push(shown(
            ChowTest::new(
                data,
                y,
                &predictors,
                group,
                &interactions,
                Intercept::Included,
            )
            .map(|t| {
                DeclaredTestRow::of(
                    DeclaredTest::Chow {
                        group: group.clone(),
                    },
                    t.f_test(),
                )
            }),
        ));
    }
    rows
}

/// The finite values only: the result crosses the worker boundary as JSON, which has no
/// `NaN` or `±∞`.
fn finite(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// [`ExactTests`] of `fit`, the model of `y` on `x` fitted on `data`, with the tests the
/// declared `terms` allow (`binary`: the 0/1 columns).
fn exact_tests(
    data: &Dataset,
    fit: &LinearRegression,
    y: &str,
    x: &[String],
    terms: &[Term],
    binary: &[String],
) -> ExactTests {
    let predictors: Vec<&str> = x.iter().map(String::as_str).collect();
    let criteria = InformationCriteria::of(fit);
    let vif = VarianceInflation::for_predictors(data, &predictors, Intercept::Included).map(|v| {
        v.iter()
            .map(|t| VifRow {
                name: t.term().to_owned(),
                vif: t.vif(),
            })
            .collect()
    });
    let drop_tests =
        NestedFTest::drop_each(data, y, &predictors, Intercept::Included).map(|tests| {
            tests
                .iter()
                .map(|t| DropTestRow {
                    name: t.added_terms().join(", "),
                    f: finite(t.f_statistic()),
                    df: t.df(),
                    df_resid: t.df_full(),
                    p: finite(t.p_value()),
                })
                .collect()
        });
    ExactTests {
        log_likelihood: finite(criteria.log_likelihood()),
        aic: finite(criteria.aic()),
        bic: finite(criteria.bic()),
        vif: shown(vif),
        residual_correlations: ResidualCorrelation::of(data, fit)
            .into_iter()
            .filter(|c| !c.in_model())
            .map(|c| ResidualCorrelationRow {
                column: c.column().to_owned(),
                correlation: c.correlation().and_then(finite),
            })
            .collect(),
        drop_tests: shown(drop_tests),
        declared_tests: declared_tests(data, y, x, terms, binary),
    }
}

/// Everything the analyst view shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysisResult {
    /// The release's name.
    pub name: String,
    /// Column names.
    pub headers: Vec<String>,
    /// Records.
    pub n: usize,
    /// Decimals the file was printed with (`None`: full precision).
    pub decimals: Option<u8>,
    /// Binary columns (declared in the manifest or detected by the audit).
    pub binary: Vec<String>,
    /// The response used.
    pub y: String,
    /// The predictors used.
    pub x: Vec<String>,
    /// The linear model, or why it could not be fitted.
    pub linear: Result<LinearSummary, String>,
    /// The logistic model (when the response is 0/1 in this file), or why not.
    pub logistic: Result<LogisticSummary, String>,
    /// Contingency tables of binary columns, or of the data package's labelled factors.
    pub tables: Vec<Result<TableSummary, String>>,
    /// The data package whose labelled factors the tables are of, when one was loaded with any.
    #[serde(default)]
    pub package: Option<LoadedPackage>,
    /// Residual plots of the same model on the original data, when it was loaded; on a release
    /// alone, why there are none ([`RELEASE_HAS_NO_ROW_DIAGNOSTICS`]); or why the original
    /// data could not be fitted.
    pub diagnostics: Result<Diagnostics, String>,
    /// What the release gives exactly instead (AIC/BIC, VIFs, residual correlations, F tests of
    /// dropping each predictor), or why the model could not be fitted.
    pub exact_tests: Result<ExactTests, String>,
    /// Original and masked scatter plots with their fitted lines.
    pub figure2: Vec<Result<ScatterPanel, String>>,
    /// The audit summary.
    pub audit: Result<AuditResult, String>,
}

/// Every `step`-th index so that at most `max` remain.
fn thin(total: usize, max: usize) -> impl Iterator<Item = usize> {
    let step = total.div_ceil(max.max(1)).max(1);
    (0..total).step_by(step)
}

fn dataset(table: &Table) -> Result<Dataset, AnalysisError> {
    Ok(Dataset::new(
        table.headers().to_vec(),
        table.data().clone(),
    )?)
}

fn is_constant(data: &DMatrix<f64>, j: usize) -> bool {
    let c = data.column(j);
    c.iter().all(|v| *v == c[0])
}

/// Response and predictors: as asked, or the first two non-constant columns.
fn choose_variables(table: &Table, y: Option<&str>, x: &[String]) -> (String, Vec<String>) {
    let varying: Vec<&String> = table
        .headers()
        .iter()
        .enumerate()
        .filter(|(j, _)| !is_constant(table.data(), *j))
        .map(|(_, h)| h)
        .collect();
    let y = y
        .map(str::to_owned)
        .or_else(|| varying.first().map(|s| (*s).clone()))
        .unwrap_or_default();
    let x = if x.is_empty() {
        varying
            .iter()
            .find(|h| ***h != y)
            .map(|h| vec![(*h).clone()])
            .unwrap_or_default()
    } else {
        x.to_vec()
    };
    (y, x)
}

/// The linear model of `y` on `x`; `panel` names the plot it is for in the error.
fn linear(
    data: &Dataset,
    y: &str,
    x: &[String],
    panel: Option<&str>,
) -> Result<LinearRegression, AnalysisError> {
    let predictors: Vec<&str> = x.iter().map(String::as_str).collect();
    LinearRegression::fit(data, y, &predictors, Intercept::Included).map_err(|source| {
        AnalysisError::Linear {
            panel: panel.map(|t| format!("{t}: ")).unwrap_or_default(),
            source,
        }
    })
}

fn summarize(fit: &LinearRegression, x: &[String]) -> LinearSummary {
    LinearSummary {
        response: fit.response().to_owned(),
        predictors: x.to_vec(),
        coefficients: fit
            .coefficients()
            .iter()
            .map(CoefficientRow::from)
            .collect(),
        r_squared: fit.r_squared(),
        adj_r_squared: fit.adj_r_squared(),
        sigma: fit.sigma(),
        f_statistic: fit.f_statistic(),
        f_p_value: fit.f_p_value(),
        df_resid: fit.df_resid(),
        n: fit.n(),
    }
}

/// A scatter panel of `y` against `x` with the simple least-squares line.
///
/// # Errors
/// [`AnalysisError`] when a column is missing or the line cannot be fitted (naming the panel).
pub fn scatter_panel(
    title: &str,
    table: &Table,
    y: &str,
    x: &str,
) -> Result<ScatterPanel, AnalysisError> {
    let data = dataset(table)?;
    let fit = linear(&data, y, &[x.to_owned()], Some(title))?;
    // A constant x is dropped as collinear with the intercept: no line to draw.
    let [intercept, slope] = fit.coefficients() else {
        return Err(AnalysisError::ConstantPredictor {
            panel: title.to_owned(),
            column: x.to_owned(),
        });
    };
    let xs = data.column(x)?;
    let ys = data.column(y)?;
    Ok(ScatterPanel {
        title: title.to_owned(),
        x_name: x.to_owned(),
        y_name: y.to_owned(),
        points: thin(xs.len(), MAX_PLOT_POINTS)
            .map(|i| (xs[i], ys[i]))
            .collect(),
        total_points: xs.len(),
        intercept: intercept.estimate(),
        slope: slope.estimate(),
    })
}

/// The normal Q–Q plot of `residuals` standardised by `sigma`: (normal quantile at
/// `(i + ½)/n`, i-th smallest standardised residual), thinned to at most `MAX_PLOT_POINTS`.
pub(crate) fn normal_qq(residuals: &nalgebra::DVector<f64>, sigma: f64) -> Vec<(f64, f64)> {
    let n = residuals.len();
    let mut standardized: Vec<f64> = residuals.iter().map(|r| r / sigma).collect();
    standardized.sort_by(f64::total_cmp);
    let normal = Normal::standard();
    thin(n, MAX_PLOT_POINTS)
        .map(|i| {
            let probability = (i as f64 + 0.5) / n as f64;
            (normal.inverse_cdf(probability), standardized[i])
        })
        .collect()
}

fn diagnostics(fit: &LinearRegression) -> Diagnostics {
    let fitted = fit.fitted();
    let residuals = fit.residuals();
    let n = residuals.len();
    Diagnostics {
        residual_vs_fitted: thin(n, MAX_PLOT_POINTS)
            .map(|i| (fitted[i], residuals[i]))
            .collect(),
        qq: normal_qq(residuals, fit.sigma()),
        total_points: n,
    }
}

fn tables(table: &Table, binary: &[String]) -> Vec<Result<TableSummary, String>> {
    let mut out = Vec::new();
    for (a, row) in binary.iter().enumerate() {
        for column in &binary[a + 1..] {
            if out.len() == MAX_TABLES {
                return out;
            }
            let column_of = |name: &str| -> Result<Vec<f64>, AnalysisError> {
                let j = table.column_index(name)?;
                Ok(table.data().column(j).iter().copied().collect())
            };
            let summary = column_of(row)
                .and_then(|z1| column_of(column).map(|z2| (z1, z2)))
                .and_then(|(z1, z2)| {
                    Ok(ContingencyTable::from_binary_columns(
                        row, &z1, column, &z2,
                    )?)
                })
                .map(|t| TableSummary::from_table(&t));
            out.push(shown(summary));
        }
    }
    out
}

/// The tables of the data package's labelled factors when one with factors was loaded, else of
/// the binary columns; a package that cannot be read is one line in place of the tables.
fn tables_of(
    table: &Table,
    binary: &[String],
    package: Option<&NamedText>,
) -> (Vec<Result<TableSummary, String>>, Option<LoadedPackage>) {
    match package.map(read_package) {
        Some(Ok(p)) if !p.factors.is_empty() => (labelled_tables(table, &p), Some(p)),
        Some(Err(e)) => (vec![Err(e)], None),
        _ => (tables(table, binary), None),
    }
}

/// Run the whole analysis. `progress` receives fractions in `[0, 1]` and a stage name.
///
/// # Errors
/// [`AnalysisError`] for a malformed release CSV (the other parts report their own errors in
/// place, as text for the page).
pub fn analyze(
    request: &AnalysisRequest,
    progress: &mut dyn FnMut(f64, &str),
) -> Result<AnalysisResult, AnalysisError> {
    progress(0.05, "reading the release");
    let bytes = request.data.text.as_bytes();
    let table = parse_table(bytes, &request.data.name)?;
    let decimals = printed_decimals(bytes);
    let data = dataset(&table)?;
    let (y, x) = choose_variables(&table, request.y.as_deref(), &request.x);
    progress(0.3, "auditing");
    let audit = audit_table(&table, decimals, request.manifest.as_ref());
    let binary = audit
        .as_ref()
        .map(AuditResult::binary_columns)
        .unwrap_or_default();
    progress(0.45, "linear regression");
    let fit = linear(&data, &y, &x, None);
    let original: Option<Result<Table, String>> = request
        .original
        .as_ref()
        .map(|o| shown(parse_table(o.text.as_bytes(), &o.name).map_err(AnalysisError::from)));
    let diagnostics = match &original {
        None => Err(RELEASE_HAS_NO_ROW_DIAGNOSTICS.to_owned()),
        Some(Err(e)) => Err(e.clone()),
        Some(Ok(table)) => shown(
            dataset(table)
                .and_then(|d| linear(&d, &y, &x, Some("Original data")))
                .map(|f| diagnostics(&f)),
        ),
    };
    progress(0.55, "exact tests");
    // The declared model terms come from the manifest; one that does not parse is the audit's
    // to report.
    let terms = request
        .manifest
        .as_ref()
        .and_then(|m| Manifest::parse(&m.text, &m.name).ok())
        .map(|m| m.model_terms)
        .unwrap_or_default();
    let exact_tests = match &fit {
        Ok(f) => Ok(exact_tests(&data, f, &y, &x, &terms, &binary)),
        Err(e) => Err(e.to_string()),
    };
    progress(0.6, "logistic regression");
    let predictors: Vec<&str> = x.iter().map(String::as_str).collect();
    let logistic = LogisticRegression::fit(&data, &y, &predictors, Intercept::Included).map(|f| {
        LogisticSummary {
            response: f.response().to_owned(),
            coefficients: f.coefficients().iter().map(CoefficientRow::from).collect(),
            deviance: f.deviance(),
            null_deviance: f.null_deviance(),
            iterations: f.iterations(),
        }
    });
    progress(0.75, "contingency tables");
    let (tables, package) = tables_of(&table, &binary, request.package.as_ref());
    progress(0.85, "plots");
    let mut figure2 = Vec::new();
    if let Some(first) = x.first() {
        match &original {
            Some(Ok(table)) => {
                figure2.push(shown(scatter_panel("Original data", table, &y, first)))
            }
            Some(Err(e)) => figure2.push(Err(e.clone())),
            None => {}
        }
        figure2.push(shown(scatter_panel("Masked release", &table, &y, first)));
    }
    progress(1.0, "done");
    Ok(AnalysisResult {
        name: request.data.name.clone(),
        headers: table.headers().to_vec(),
        n: table.data().nrows(),
        decimals,
        binary,
        y,
        x: x.clone(),
        linear: shown(fit.as_ref().map(|f| summarize(f, &x))),
        logistic: shown(logistic),
        tables,
        package,
        diagnostics,
        exact_tests,
        figure2,
        audit: shown(audit),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    // The exports of the results these tests compute (test code only).
    use crate::model::exports::{coefficients_csv, python_snippet, r_snippet, result_json};
    use crate::model::script_names::{py_name, r_name, r_string};
    use orthomask_stats::tolerance::{
        HAND_SOLVED_TABLE, MLE_REFERENCE_RELATIVE, R_UNIROOT_WORST, REFERENCE_RELATIVE,
    };

    const TABLE2: &str = include_str!("../../data/paper/leaps_table2.csv");
    const TABLE5: &str = include_str!("../../data/paper/leaps_table5_released.csv");

    fn request(y: &str, x: &[&str], original: bool) -> AnalysisRequest {
        AnalysisRequest {
            data: NamedText {
                name: "table5.csv".into(),
                text: TABLE5.into(),
            },
            original: original.then(|| NamedText {
                name: "table2.csv".into(),
                text: TABLE2.into(),
            }),
            manifest: None,
            package: None,
            y: Some(y.into()),
            x: x.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// Issue 22 §2, the case that made it: raw residuals with heavy right skew. On the masked
    /// release the same model's residuals are `A·e` and look normal — so a release alone gets
    /// no residual or Q–Q plot, only the line saying why — while with the original data loaded
    /// the plots are of the original fit and show the skew.
    #[test]
    fn skewed_raw_residuals_are_never_shown_as_normal_from_a_release() {
        use orthomask_core::key::{Key, StreamId};
        use orthomask_core::mask::{FixedSubspaceHaar, Mask};
        let n = 400;
        let normal = Normal::standard();
        // Log-normal errors (σ = 2), assigned to rows by a permutation so that they are unrelated
        // to x: skewness far above any normal sample's.
        let x: Vec<f64> = (0..n).map(|i| (i % 37) as f64).collect();
        let y: Vec<f64> = (0..n)
            .map(|i| {
                let q = normal.inverse_cdf(((i * 211) % n) as f64 / n as f64 + 0.5 / n as f64);
                1.0 + 0.5 * x[i] + (2.0 * q).exp()
            })
            .collect();
        let csv = |x: &[f64], y: &[f64]| -> String {
            let mut text = String::from("x,y\n");
            for (a, b) in x.iter().zip(y) {
                text.push_str(&format!("{a},{b}\n"));
            }
            text
        };
        // The release: A·[x y] with A Haar on the stabiliser of 1ₙ, as the collector's A₁.
        let mut released = DMatrix::from_fn(n, 2, |i, j| if j == 0 { x[i] } else { y[i] });
        FixedSubspaceHaar::keyed(
            &DMatrix::from_element(n, 1, 1.0),
            Key::teaching(22).stream(StreamId::CollectorLeftMask),
        )
        .unwrap()
        .left_apply(&mut released)
        .unwrap();
        let (rx, ry): (Vec<f64>, Vec<f64>) = released.row_iter().map(|r| (r[0], r[1])).unzip();
        let skewness = |table: &str| -> f64 {
            let t = parse_table(table.as_bytes(), "t").unwrap();
            let fit = linear(&dataset(&t).unwrap(), "y", &["x".to_owned()], None).unwrap();
            let e = fit.residuals();
            let m2 = e.iter().map(|v| v * v).sum::<f64>() / n as f64;
            let m3 = e.iter().map(|v| v * v * v).sum::<f64>() / n as f64;
            m3 / m2.powf(1.5)
        };
        let (original, release) = (csv(&x, &y), csv(&rx, &ry));
        // The phenomenon: skewed raw residuals, normal-looking released ones (the skewness of a
        // normal sample of 400 has standard deviation √(6/400) ≈ 0.12).
        assert!(skewness(&original) > 5.0, "{}", skewness(&original));
        assert!(skewness(&release).abs() < 0.5, "{}", skewness(&release));
        let request = |with_original: bool| AnalysisRequest {
            data: NamedText {
                name: "release.csv".into(),
                text: release.clone(),
            },
            original: with_original.then(|| NamedText {
                name: "original.csv".into(),
                text: original.clone(),
            }),
            manifest: None,
            package: None,
            y: Some("y".into()),
            x: vec!["x".into()],
        };
        let alone = analyze(&request(false), &mut |_, _| {}).unwrap();
        assert_eq!(
            alone.diagnostics.unwrap_err(),
            RELEASE_HAS_NO_ROW_DIAGNOSTICS
        );
        let both = analyze(&request(true), &mut |_, _| {}).unwrap();
        let qq = both.diagnostics.unwrap().qq;
        // The original's Q–Q plot: the largest residual lies far above its normal quantile.
        let &(quantile, largest) = qq.last().unwrap();
        assert!(
            quantile < 3.5 && largest > 2.0 * quantile,
            "{quantile}, {largest}"
        );
    }

    /// Issue 22 §2: the "exact tests on the release" section equals R on the raw data, from the
    /// release alone. The data are `crates/stats/tests/data/derived_terms.csv` (written by R, see
    /// `crates/stats/tests/exact_model_tests.rs`); after `d <- read.csv(…)` and
    /// `full <- lm(y ~ x + x2 + g + xg, data = d)`, R 4.2.2 printed `AIC(full)`, `BIC(full)`,
    /// `logLik(full)` (`options(digits = 17)`), the VIFs
    /// `1 / (1 - summary(lm(x ~ x2 + g + xg, data = d))$r.squared)` and likewise (car is not
    /// installed), `cor(resid(full), d$w)`, and `a <- drop1(full, test = "F")`,
    /// `sprintf("%.17g", a$F)`, `sprintf("%.17g", a[["Pr(>F)"]])` (numbers written in the
    /// shortest form that parses to the same double).
    #[test]
    fn exact_tests_on_a_release_alone_equal_r_on_the_raw_data() {
        use orthomask_core::key::{Key, StreamId};
        use orthomask_core::mask::{FixedSubspaceHaar, Mask};
        use orthomask_stats::tolerance::{
            RELEASE_REGRESSION_RELATIVE, relative_difference as relative,
        };
        const RAW: &str = include_str!("../../crates/stats/tests/data/derived_terms.csv");
        let raw = parse_table(RAW.as_bytes(), "raw.csv").unwrap();
        let mut masked = raw.data().clone();
        FixedSubspaceHaar::keyed(
            &DMatrix::from_element(masked.nrows(), 1, 1.0),
            Key::teaching(22).stream(StreamId::CollectorLeftMask),
        )
        .unwrap()
        .left_apply(&mut masked)
        .unwrap();
        let mut release = raw.headers().join(",") + "\n";
        for row in masked.row_iter() {
            let cells: Vec<String> = row.iter().map(|v| format!("{v}")).collect();
            release.push_str(&(cells.join(",") + "\n"));
        }
        let run = |text: &str| {
            let request = AnalysisRequest {
                data: NamedText {
                    name: "data.csv".into(),
                    text: text.into(),
                },
                original: None,
                manifest: None,
                package: None,
                y: Some("y".into()),
                x: ["x", "x2", "g", "xg"].map(String::from).to_vec(),
            };
            analyze(&request, &mut |_, _| {})
                .unwrap()
                .exact_tests
                .unwrap()
        };
        let (alone, original) = (run(&release), run(RAW));
        let agrees = |what: &str, release: Option<f64>, raw: Option<f64>, r: f64| {
            let (a, b) = (raw.unwrap(), release.unwrap());
            assert!(
                relative(a, r) < REFERENCE_RELATIVE,
                "{what}: ours {a}, R {r}"
            );
            assert!(
                relative(b, a) < RELEASE_REGRESSION_RELATIVE,
                "{what}: release {b}, raw {a}"
            );
        };
        agrees(
            "logLik",
            alone.log_likelihood,
            original.log_likelihood,
            -40.35324448129395,
        );
        agrees("AIC", alone.aic, original.aic, 92.7064889625879);
        agrees("BIC", alone.bic, original.bic, 101.11367325256083);
        let (vif, raw_vif) = (alone.vif.unwrap(), original.vif.unwrap());
        let r_vif = [
            21.91232586302606,
            23.78758422287765,
            5.4659586936255335,
            8.09504403627889,
        ];
        let (drops, raw_drops) = (alone.drop_tests.unwrap(), original.drop_tests.unwrap());
        let r_f = [
            2.647579669075412,
            4.840002072312266,
            2.106796513525199,
            5.615683504537341,
        ];
        let r_p = [
            0.116247591822543,
            0.03726917537791185,
            0.15908026827880892,
            0.025830380130443493,
        ];
        for (k, name) in ["x", "x2", "g", "xg"].iter().enumerate() {
            assert_eq!(
                (vif[k].name.as_str(), drops[k].name.as_str()),
                (*name, *name)
            );
            assert_eq!((drops[k].df, drops[k].df_resid), (1, 25));
            agrees(name, Some(vif[k].vif), Some(raw_vif[k].vif), r_vif[k]);
            agrees(name, drops[k].f, raw_drops[k].f, r_f[k]);
            agrees(name, drops[k].p, raw_drops[k].p, r_p[k]);
        }
        // Only the column not in the model is listed: w.
        let [w] = &alone.residual_correlations[..] else {
            panic!("{:?}", alone.residual_correlations)
        };
        assert_eq!(w.column, "w");
        agrees(
            "cor(e, w)",
            w.correlation,
            original.residual_correlations[0].correlation,
            0.615809665423218,
        );
    }

    /// Seed 003 Figure 2: the fitted line on the release equals the line on the original data
    /// (to the two printed decimals of Table 5), although the points differ.
    #[test]
    fn figure_2_lines_agree_on_original_and_release() {
        let r = analyze(&request("ADL", &["BBS"], true), &mut |_, _| {}).unwrap();
        let panels: Vec<&ScatterPanel> = r.figure2.iter().map(|p| p.as_ref().unwrap()).collect();
        assert_eq!(panels.len(), 2);
        let (o, m) = (panels[0], panels[1]);
        assert!(
            (o.slope - m.slope).abs() < 0.01 * o.slope.abs(),
            "{} {}",
            o.slope,
            m.slope
        );
        assert!((o.intercept - m.intercept).abs() < 0.01 * o.intercept.abs());
        assert_ne!(o.points, m.points);
        assert!(m.equation().starts_with("ADL = "));
    }

    /// Seed 003 Table 6: Group × MIF from the masked columns is 6, 6 / 3, 5.
    #[test]
    fn table_6_from_the_release() {
        let r = analyze(&request("ADL", &["BBS", "Age"], false), &mut |_, _| {}).unwrap();
        let t = r
            .tables
            .iter()
            .filter_map(|t| t.as_ref().ok())
            .find(|t| t.rows == "Group" && t.columns == "MIF")
            .expect("Group × MIF table");
        assert_eq!(t.counts, vec![vec![6.0, 6.0], vec![3.0, 5.0]]);
        assert_eq!(t.integer_counts, Some(vec![vec![6, 6], vec![3, 5]]));
        // Expected count 8 · 9 / 20 = 3.6 < 5: Fisher's exact test. R 4.2's
        // fisher.test(matrix(c(6, 3, 6, 5), 2)) gives p = 0.66992140985949, a sum of exact
        // hypergeometric terms (agreement 1e-9). Its odds ratio 1.62446 and interval
        // 0.196931 … 15.6493 are `uniroot` roots, off by up to ~2e-4 relative; the exact roots
        // (E_ψ[X] = 6, P_ψ(X ≥ 6) = 0.025, P_ψ(X ≤ 6) = 0.025 over x = 1…9 with weights
        // C(12, x)·C(8, 9 − x)·ψˣ, solved by 300 bisections in double precision) are
        // 1.6244939520382213, 0.19693210097124803 and 15.651369843930054.
        assert!((t.smallest_expected.unwrap() - 3.6).abs() < HAND_SOLVED_TABLE);
        let f = t
            .fisher
            .as_ref()
            .expect("Fisher's test of a 2×2 table of counts");
        let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * b.abs();
        assert!(
            close(f.p_value, 0.669_921_409_859_49, REFERENCE_RELATIVE),
            "{}",
            f.p_value
        );
        let (odds_ratio, ci_high) = (f.odds_ratio.unwrap(), f.ci_high.unwrap());
        assert!(
            close(odds_ratio, 1.624_493_952_038_221_3, REFERENCE_RELATIVE),
            "{odds_ratio}"
        );
        assert!(
            close(f.ci_low, 0.196_932_100_971_248_03, REFERENCE_RELATIVE),
            "{}",
            f.ci_low
        );
        assert!(
            close(ci_high, 15.651_369_843_930_054, REFERENCE_RELATIVE),
            "{ci_high}"
        );
        // And within R's own precision of R's printed estimates.
        assert!(close(odds_ratio, 1.624_460_235_901_17, R_UNIROOT_WORST));
        // Every table of the analysis goes through the worker as JSON and back unchanged
        // (an infinite estimate would not: JSON has no infinity).
        let text = serde_json::to_string(&r.tables).unwrap();
        let back: Vec<Result<TableSummary, String>> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r.tables);
        let s = r.linear.as_ref().unwrap();
        assert_eq!(s.coefficients.len(), 3);
        assert_eq!(
            r.diagnostics.as_ref().unwrap_err(),
            RELEASE_HAS_NO_ROW_DIAGNOSTICS
        );
        // Masked response: not 0/1, so the logistic model explains why it cannot be fitted.
        let logit = analyze(&request("Response", &["Group"], false), &mut |_, _| {}).unwrap();
        assert!(logit.logistic.is_err());
    }

    /// A raw 0/1 response (MIF in Table 2) gets the logistic model, equal to statsmodels'
    /// `smf.logit('MIF ~ Group + Age + BBS + ADL', data=leaps_table2)` (reference values from
    /// `crates/stats/tests/leaps_logistic.rs`), and the exports carry the logistic call.
    #[test]
    fn a_binary_response_gets_the_logistic_model() {
        let request = AnalysisRequest {
            data: NamedText {
                name: "table2.csv".into(),
                text: TABLE2.into(),
            },
            original: None,
            manifest: None,
            package: None,
            y: Some("MIF".into()),
            x: ["Group", "Age", "BBS", "ADL"].map(str::to_owned).to_vec(),
        };
        let r = analyze(&request, &mut |_, _| {}).unwrap();
        let logit = r.logistic.as_ref().unwrap();
        let statsmodels = [
            ("(Intercept)", 4.393435640188172, 3.7439754846718336),
            ("Group", 1.2396947119635333, 1.274473132408441),
            ("Age", -0.09236381611370507, 0.05337435214375408),
            ("BBS", 0.07341474485686875, 0.06001419706652485),
            ("ADL", -0.03481576927384494, 0.037878667346643136),
        ];
        assert_eq!(logit.coefficients.len(), statsmodels.len());
        for (row, (name, estimate, se)) in logit.coefficients.iter().zip(statsmodels) {
            assert_eq!(row.name, name);
            // statsmodels stops Newton at 1e-8 parameter change: 1e-7 relative.
            assert!(
                (row.estimate - estimate).abs() < MLE_REFERENCE_RELATIVE * estimate.abs(),
                "{name}"
            );
            assert!(
                (row.std_error - se).abs() < MLE_REFERENCE_RELATIVE * se,
                "{name} s.e."
            );
        }
        assert!(r_snippet(&r).contains("glm(MIF ~ Group + Age + BBS + ADL, family = binomial"));
        assert!(python_snippet(&r).contains("smf.logit(\"MIF ~ Group + Age + BBS + ADL\""));
        let json: serde_json::Value = serde_json::from_str(&result_json(&r)).unwrap();
        assert_eq!(json["logistic"]["coefficients"][1]["name"], "Group");
    }

    /// Issue 22 §3: with the declared terms of a manifest, the view runs the RESET-style test
    /// on the model's declared power and the Chow test on its 0/1 group, equal to R 4.2.2's
    /// `anova(lm(y ~ x + g + xg), full)` and `anova(lm(y ~ x + x2), full)` on the data the CLI's
    /// exact_model_tests use (`full <- lm(y ~ x + x2 + g + xg)`, derived_terms.csv: x2 = x²,
    /// xg = x·g); and the R and Python exports compute each of them by name.
    #[test]
    fn declared_terms_give_reset_and_chow_equal_to_r() {
        let csv = include_str!("../../crates/stats/tests/data/derived_terms.csv");
        let table = parse_table(csv.as_bytes(), "derived_terms.csv").unwrap();
        let data = dataset(&table).unwrap();
        let terms: Vec<Term> = serde_json::from_str(
            r#"[{"id":"x2","kind":"power","of":"x","exponent":2},
                {"id":"xg","kind":"product","of":["x","g"]}]"#,
        )
        .unwrap();
        let x: Vec<String> = ["x", "x2", "g", "xg"].map(String::from).to_vec();
        let rows = declared_tests(&data, "y", &x, &terms, &["g".to_owned()]);
        let rows: Vec<&DeclaredTestRow> = rows.iter().map(|r| r.as_ref().unwrap()).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].test, DeclaredTest::Reset);
        assert_eq!(rows[0].added, ["x2"]);
        assert_eq!(rows[1].test, DeclaredTest::Chow { group: "g".into() });
        assert_eq!(rows[1].reduced, ["x", "x2"]);
        for (row, f, p) in [
            (rows[0], 4.8400020723122585, 0.03726917537791197),
            (rows[1], 3.966433061100444, 0.031906634690129304),
        ] {
            let (ours_f, ours_p) = (row.f.unwrap(), row.p.unwrap());
            assert!(
                (ours_f - f).abs() <= REFERENCE_RELATIVE * f,
                "{ours_f} vs R {f}"
            );
            assert!(
                (ours_p - p).abs() <= REFERENCE_RELATIVE * p,
                "{ours_p} vs R {p}"
            );
        }
        // Without declared terms, or when the model holds none, there is nothing to test.
        assert!(declared_tests(&data, "y", &x, &[], &["g".to_owned()]).is_empty());
        let plain: Vec<String> = vec!["x".into(), "g".into()];
        assert!(declared_tests(&data, "y", &plain, &terms, &["g".to_owned()]).is_empty());
        // The exports name both tests and fit the reduced models by their formulas.
        let r = AnalysisResult {
            exact_tests: Ok(ExactTests {
                declared_tests: rows.iter().map(|r| Ok((*r).clone())).collect(),
                ..exact_tests(
                    &data,
                    &LinearRegression::fit(
                        &data,
                        "y",
                        &["x", "x2", "g", "xg"],
                        Intercept::Included,
                    )
                    .unwrap(),
                    "y",
                    &x,
                    &[],
                    &[],
                )
            }),
            ..analyze(
                &AnalysisRequest {
                    data: NamedText {
                        name: "derived_terms.csv".into(),
                        text: csv.into(),
                    },
                    original: None,
                    manifest: None,
                    package: None,
                    y: Some("y".into()),
                    x: x.clone(),
                },
                &mut |_, _| {},
            )
            .unwrap()
        };
        let script = r_snippet(&r);
        assert!(
            script.contains("test <- anova(lm(y ~ x + g + xg, data = d), fit)"),
            "{script}"
        );
        assert!(
            script.contains("exact_tests[[\"chow:g\"]] <- c(F = test$F[2]"),
            "{script}"
        );
        let py = python_snippet(&r);
        assert!(
            py.contains("test = anova_lm(smf.ols(\"y ~ x + x2\", data=d).fit(), fit)"),
            "{py}"
        );
        assert!(py.contains("\"aic\": -2 * fit.llf + 2 * k"), "{py}");
    }

    #[test]
    fn exports_name_every_term() {
        let r = analyze(&request("ADL", &["BBS", "Age"], false), &mut |_, _| {}).unwrap();
        let csv = coefficients_csv(r.linear.as_ref().unwrap());
        assert_eq!(csv.lines().count(), 4);
        assert!(csv.starts_with("term,estimate"));
        let json: serde_json::Value = serde_json::from_str(&result_json(&r)).unwrap();
        assert_eq!(json["linear"]["coefficients"][1]["name"], "BBS");
        let rs = r_snippet(&r);
        assert!(rs.contains("lm(ADL ~ BBS + Age, data = d)"), "{rs}");
        let py = python_snippet(&r);
        assert!(py.contains("smf.ols(\"ADL ~ BBS + Age\", data=d)"), "{py}");
        assert_eq!(r_name("q=b"), "`q=b`");
        assert_eq!(py_name("q=b"), "Q(\"q=b\")");
        // R string literals: a quote or backslash in a file name cannot end the string early.
        assert_eq!(r_string(r#"my "data"\x.csv"#), r#""my \"data\"\\x.csv""#);
        assert!(
            rs.starts_with("# Reproduce") && rs.contains("d <- read.csv(\""),
            "{rs}"
        );
    }

    #[test]
    fn bad_input_is_one_line_never_a_panic() {
        let mut req = request("ADL", &["BBS"], false);
        req.data.text = "a,b\n1,2\n3\n".into();
        let e = analyze(&req, &mut |_, _| {}).unwrap_err();
        assert!(matches!(e, AnalysisError::Table(_)));
        assert_eq!(
            e.to_string(),
            "table5.csv:3: row has 1 cells but the header has 2"
        );
        let mut req = request("nope", &["BBS"], false);
        req.y = Some("nope".into());
        let r = analyze(&req, &mut |_, _| {}).unwrap();
        assert!(r.linear.unwrap_err().contains("nope"));
        let mut req = request("ADL", &["BBS"], false);
        req.data.text = "a,b\nNaN,2\n".into();
        assert!(
            analyze(&req, &mut |_, _| {})
                .unwrap_err()
                .to_string()
                .contains("not a finite number")
        );
    }
}
