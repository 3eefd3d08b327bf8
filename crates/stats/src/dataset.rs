//! Named numeric columns: the one input type of every analysis.
//!
//! A [`Dataset`] is an `n × p` matrix whose rows are records (participants, or rows of a masked
//! release `A·X`, which no longer belong to anyone) and whose columns carry names. The
//! constructor checks the shape, the names and that every value is finite, so the models
//! downstream never meet a NaN.

use nalgebra::{DMatrix, DVector};

/// Errors when building or reading a [`Dataset`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DatasetError {
    /// The number of names differs from the number of columns.
    #[error(
        "the dataset has {columns} columns but {names} column names were given; give one name per column"
    )]
    NameCount {
        /// Names given.
        names: usize,
        /// Columns in the matrix.
        columns: usize,
    },
    /// A column has no name.
    #[error("column {index} (0-based) has an empty name; every column needs a name")]
    EmptyName {
        /// 0-based column index.
        index: usize,
    },
    /// Two columns share a name.
    #[error("two columns are both named {name:?}; column names must be unique")]
    DuplicateName {
        /// The repeated name.
        name: String,
    },
    /// A value is NaN or infinite.
    #[error(
        "column {column:?}, row {row} (1-based) is {value}; remove or impute missing values before the analysis"
    )]
    NonFinite {
        /// Column name.
        column: String,
        /// 1-based row number.
        row: usize,
        /// The offending value.
        value: f64,
    },
    /// Columns of different lengths were combined.
    #[error(
        "column {column:?} has {found} values but the first column has {expected}; all columns need one value per record"
    )]
    ColumnLength {
        /// Column name.
        column: String,
        /// Length of the first column.
        expected: usize,
        /// Length of this column.
        found: usize,
    },
    /// A column name was asked for that the dataset does not have.
    #[error("there is no column named {name:?}; the columns are {available}")]
    UnknownColumn {
        /// The name asked for.
        name: String,
        /// The names that exist, comma-separated.
        available: String,
    },
    /// The dataset has no rows or no columns.
    #[error("the dataset is empty ({rows} rows, {columns} columns); it needs at least one of each")]
    Empty {
        /// Rows.
        rows: usize,
        /// Columns.
        columns: usize,
    },
}

/// An `n × p` matrix of finite values with one unique, non-empty name per column.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    names: Vec<String>,
    values: DMatrix<f64>,
}

impl Dataset {
    /// Wrap a matrix whose columns are called `names`.
    ///
    /// # Errors
    /// [`DatasetError::Empty`], [`DatasetError::NameCount`], [`DatasetError::EmptyName`],
    /// [`DatasetError::DuplicateName`], [`DatasetError::NonFinite`] (naming the cell).
    pub fn new(names: Vec<String>, values: DMatrix<f64>) -> Result<Self, DatasetError> {
        if values.nrows() == 0 || values.ncols() == 0 {
            return Err(DatasetError::Empty {
                rows: values.nrows(),
                columns: values.ncols(),
            });
        }
        if names.len() != values.ncols() {
            return Err(DatasetError::NameCount {
                names: names.len(),
                columns: values.ncols(),
            });
        }
        for (index, name) in names.iter().enumerate() {
            if name.trim().is_empty() {
                return Err(DatasetError::EmptyName { index });
            }
            if names[..index].contains(name) {
                return Err(DatasetError::DuplicateName { name: name.clone() });
            }
        }
        for (j, column) in values.column_iter().enumerate() {
            if let Some((i, &value)) = column.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(DatasetError::NonFinite {
                    column: names[j].clone(),
                    row: i + 1,
                    value,
                });
            }
        }
        Ok(Self { names, values })
    }

    /// Build from `(name, values)` pairs, one per column.
    ///
    /// # Errors
    /// [`DatasetError::ColumnLength`] when the columns differ in length, and the errors of
    /// [`new`](Self::new).
    pub fn from_columns(columns: Vec<(String, Vec<f64>)>) -> Result<Self, DatasetError> {
        let rows = columns.first().map_or(0, |(_, v)| v.len());
        for (name, values) in &columns {
            if values.len() != rows {
                return Err(DatasetError::ColumnLength {
                    column: name.clone(),
                    expected: rows,
                    found: values.len(),
                });
            }
        }
        let matrix = DMatrix::from_fn(rows, columns.len(), |i, j| columns[j].1[i]);
        Self::new(columns.into_iter().map(|(name, _)| name).collect(), matrix)
    }

    /// Column names, in column order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The `n × p` values.
    pub fn values(&self) -> &DMatrix<f64> {
        &self.values
    }

    /// Number of records `n`.
    pub fn nrows(&self) -> usize {
        self.values.nrows()
    }

    /// Number of columns `p`.
    pub fn ncols(&self) -> usize {
        self.values.ncols()
    }

    /// 0-based index of the column called `name`.
    ///
    /// # Errors
    /// [`DatasetError::UnknownColumn`], listing the names that exist.
    pub fn index_of(&self, name: &str) -> Result<usize, DatasetError> {
        self.names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| DatasetError::UnknownColumn {
                name: name.to_owned(),
                available: self.names.join(", "),
            })
    }

    /// The column called `name`, as a vector.
    ///
    /// # Errors
    /// [`DatasetError::UnknownColumn`].
    pub fn column(&self, name: &str) -> Result<DVector<f64>, DatasetError> {
        Ok(self.values.column(self.index_of(name)?).into_owned())
    }

    /// A new dataset with the named columns, in the order given.
    ///
    /// # Errors
    /// [`DatasetError::UnknownColumn`]; [`DatasetError::DuplicateName`] when a name is repeated;
    /// [`DatasetError::Empty`] when `names` is empty.
    pub fn select(&self, names: &[&str]) -> Result<Self, DatasetError> {
        let indices = names
            .iter()
            .map(|n| self.index_of(n))
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(
            names.iter().map(|&n| n.to_owned()).collect(),
            self.values.select_columns(&indices),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|&s| s.to_owned()).collect()
    }

    #[test]
    fn valid_data_keep_names_and_values() {
        let d = Dataset::from_columns(vec![
            ("x".to_owned(), vec![1.0, 2.0, 3.0]),
            ("y".to_owned(), vec![4.0, 5.0, 6.0]),
        ])
        .unwrap();
        assert_eq!(d.names(), ["x", "y"]);
        assert_eq!((d.nrows(), d.ncols()), (3, 2));
        assert_eq!(d.column("y").unwrap().as_slice(), [4.0, 5.0, 6.0]);
        assert_eq!(d.index_of("y").unwrap(), 1);
        let swapped = d.select(&["y", "x"]).unwrap();
        assert_eq!(swapped.names(), ["y", "x"]);
        assert_eq!(swapped.values()[(0, 0)], 4.0);
    }

    #[test]
    fn malformed_input_is_refused_with_the_place_named() {
        let m = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, f64::NAN, 4.0]);
        assert!(matches!(
            Dataset::new(names(&["a", "b"]), m),
            Err(DatasetError::NonFinite { ref column, row: 2, value }) if column == "a" && value.is_nan()
        ));
        assert!(
            Dataset::from_columns(vec![
                ("a".into(), vec![1.0]),
                ("b".into(), vec![f64::INFINITY])
            ])
            .unwrap_err()
            .to_string()
            .contains("column \"b\", row 1")
        );
        let ok = DMatrix::from_element(2, 2, 1.0);
        assert_eq!(
            Dataset::new(names(&["a"]), ok.clone()).unwrap_err(),
            DatasetError::NameCount {
                names: 1,
                columns: 2
            }
        );
        assert_eq!(
            Dataset::new(names(&["a", "a"]), ok.clone()).unwrap_err(),
            DatasetError::DuplicateName { name: "a".into() }
        );
        assert_eq!(
            Dataset::new(names(&["a", " "]), ok.clone()).unwrap_err(),
            DatasetError::EmptyName { index: 1 }
        );
        assert_eq!(
            Dataset::new(vec![], DMatrix::zeros(0, 0)).unwrap_err(),
            DatasetError::Empty {
                rows: 0,
                columns: 0
            }
        );
        let d = Dataset::new(names(&["a", "b"]), ok).unwrap();
        assert_eq!(
            d.index_of("c").unwrap_err(),
            DatasetError::UnknownColumn {
                name: "c".into(),
                available: "a, b".into()
            }
        );
        assert!(matches!(
            Dataset::from_columns(vec![("a".into(), vec![1.0]), ("b".into(), vec![1.0, 2.0])]),
            Err(DatasetError::ColumnLength {
                expected: 1,
                found: 2,
                ..
            })
        ));
    }
}
