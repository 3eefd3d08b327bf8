//! The analyst view with a release's data package (issue 29 §2): contingency tables whose rows
//! and columns are the questions' labels ("Never/Sometimes/Often", not 0/1/2), and the same
//! tables in the exported R and Python scripts.
//!
//! A masked column holds real numbers, not codes, so nothing here (nor in the exported scripts)
//! turns a released column into a factor: each level of a labelled factor is the affine
//! combination of released columns the package lists (`orthomask_survey::datapackage`, which
//! says why its cross-products are the raw counts), and a table is the cross-products of the
//! two factors' level indicators (`orthomask_stats::contingency`, complete factors).

use nalgebra::DMatrix;
use orthomask_formats::csv::Table;
use orthomask_stats::contingency::{ContingencyTable, CountRounding, Factor};
use orthomask_survey::datapackage::{self, DataPackage};
use serde::{Deserialize, Serialize};

use super::audit::NamedText;
use super::contingency_summary::{MAX_TABLES, TableSummary};

/// The package loaded with a release: where it came from and its labelled factors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadedPackage {
    /// File name or URL (what the exported scripts read).
    pub name: String,
    /// The factors whose tables the release gives exactly.
    pub factors: Vec<datapackage::Factor>,
}

/// Read a data package.
///
/// # Errors
/// One line naming the file, when it is not a data package.
pub fn read_package(package: &NamedText) -> Result<LoadedPackage, String> {
    Ok(LoadedPackage {
        name: package.name.clone(),
        factors: DataPackage::parse_factors(&package.text, &package.name)
            .map_err(|e| e.to_string())?,
    })
}

/// A factor's level indicators on `table` (`n × levels`), as `orthomask_stats` takes them.
fn factor(table: &Table, f: &datapackage::Factor) -> Result<Factor, String> {
    let n = table.data().nrows();
    let mut indicators = DMatrix::zeros(n, f.levels.len());
    for (k, level) in f.levels.iter().enumerate() {
        let values = level
            .indicator
            .evaluate(n, |name| {
                table
                    .column_index(name)
                    .ok()
                    // Column-major storage: column j is one run of n values.
                    .and_then(|j| table.data().as_slice().get(j * n..(j + 1) * n))
            })
            .ok_or_else(|| {
                format!(
                    "{}: the data package's factor {:?} names a column the release lacks",
                    table.source_name(),
                    f.name
                )
            })?;
        indicators.set_column(k, &nalgebra::DVector::from_vec(values));
    }
    let labels = f.levels.iter().map(|l| l.label.clone()).collect();
    Factor::complete(&f.name, labels, indicators).map_err(|e| e.to_string())
}

/// The tables of every pair of the package's factors (at most [`MAX_TABLES`]), with the labels
/// as level names.
pub fn labelled_tables(
    table: &Table,
    package: &LoadedPackage,
) -> Vec<Result<TableSummary, String>> {
    let mut out = Vec::new();
    let factors = &package.factors;
    for (a, row) in factors.iter().enumerate() {
        for column in &factors[a + 1..] {
            if out.len() == MAX_TABLES {
                return out;
            }
            let summary = factor(table, row).and_then(|r| {
                let c = factor(table, column)?;
                ContingencyTable::new(&r, &c, CountRounding::ToIntegers)
                    .map(|t| TableSummary::from_table(&t))
                    .map_err(|e| e.to_string())
            });
            out.push(summary);
        }
    }
    out
}

/// `text` as an R or Python string literal (double quotes; backslash and quote escaped).
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The exported R script's labelled tables: the package read with jsonlite, each level's
/// indicator formed from the released columns `d`, the table of their cross-products with the
/// labels as its dimnames.
pub fn r_labelled_tables(package: &LoadedPackage, tables: &[&TableSummary]) -> String {
    let mut out = format!(
        "# Contingency tables with the data package's labels (issue 29 sec. 2). A masked column\n\
         # holds real numbers, not codes: never factor() it. Each level's indicator is an affine\n\
         # combination of released columns (orthomask:factors) whose cross-products are the raw counts.\n\
         library(jsonlite)\n\
         pkg <- fromJSON({}, simplifyVector = FALSE)\n\
         factors <- Filter(function(r) r$path == \"release.csv\", pkg$resources)[[1]][[\"orthomask:factors\"]]\n\
         names(factors) <- vapply(factors, function(f) f$name, \"\")\n\
         indicators <- function(f) {{\n\
         \x20 z <- sapply(f$levels, function(l) {{\n\
         \x20   v <- rep(l$indicator$constant, nrow(d))\n\
         \x20   for (t in l$indicator$terms) v <- v + t$coefficient * d[[t$column]]\n\
         \x20   v\n\
         \x20 }})\n\
         \x20 colnames(z) <- vapply(f$levels, function(l) l$label, \"\")\n\
         \x20 z\n\
         }}\n\
         labelled_table <- function(row, column) {{\n\
         \x20 t <- as.table(round(crossprod(indicators(factors[[row]]), indicators(factors[[column]]))))\n\
         \x20 names(dimnames(t)) <- c(row, column)\n\
         \x20 t\n\
         }}\n",
        quoted(&package.name)
    );
    out.push_str(&print_tables(tables));
    out
}

/// The exported Python script's labelled tables: the package read with `json`, the table a
/// DataFrame whose index and columns are pandas Categoricals of the labels.
pub fn python_labelled_tables(package: &LoadedPackage, tables: &[&TableSummary]) -> String {
    let mut out = format!(
        "# Contingency tables with the data package's labels (issue 29 sec. 2). A masked column\n\
         # holds real numbers, not codes: never make it a Categorical. Each level's indicator is an\n\
         # affine combination of released columns (orthomask:factors) whose cross-products are the\n\
         # raw counts; the labels are the table's index and columns.\n\
         import json\nimport urllib.request\n\n\
         def read_text(path):\n\
         \x20   if path.startswith((\"http://\", \"https://\")):\n\
         \x20       return urllib.request.urlopen(path).read().decode(\"utf-8\")\n\
         \x20   with open(path, encoding=\"utf-8\") as f:\n\
         \x20       return f.read()\n\n\
         pkg = json.loads(read_text({}))\n\
         factors = {{f[\"name\"]: f for r in pkg[\"resources\"] if r[\"path\"] == \"release.csv\"\n\
         \x20          for f in r.get(\"orthomask:factors\", [])}}\n\n\
         def indicators(name):\n\
         \x20   levels = factors[name][\"levels\"]\n\
         \x20   labels = [l[\"label\"] for l in levels]\n\
         \x20   z = np.column_stack([l[\"indicator\"][\"constant\"] + sum(t[\"coefficient\"] * d[t[\"column\"]].to_numpy()\n\
         \x20                                                        for t in l[\"indicator\"][\"terms\"])\n\
         \x20                        for l in levels])\n\
         \x20   return z, pd.CategoricalIndex(labels, categories=labels, ordered=True, name=name)\n\n\
         def labelled_table(row, column):\n\
         \x20   zr, rows = indicators(row)\n\
         \x20   zc, columns = indicators(column)\n\
         \x20   return pd.DataFrame(np.round(zr.T @ zc).astype(int), index=rows, columns=columns)\n\n",
        quoted(&package.name)
    );
    out.push_str(&print_tables(tables));
    out
}

/// `print(labelled_table("row", "column"))` for each table: the same line in R and in Python,
/// both scripts defining `labelled_table`.
fn print_tables(tables: &[&TableSummary]) -> String {
    tables
        .iter()
        .map(|t| {
            format!(
                "print(labelled_table({}, {}))\n",
                quoted(&t.rows),
                quoted(&t.columns)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
