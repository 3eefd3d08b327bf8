//! The second TM² method (Wu, Chen, Burr & Zhang 2017, seed 003 §3.3–3.4, Remark 4), for
//! logistic regression.
//!
//! ```text
//! collector   draws A₀ (r×r, invertible) and sends it to the devices
//! participant x* = [x; noise rows; c·1ᵀ]  (r rows)           sends kept values and A₀x*
//! provider    B₁ = diag(I, B₁*), 1ᵀB₁* = 1ᵀ                  sends A₀x*B₁
//! collector   x*B₁ = A₀⁻¹(A₀x*B₁); QA: last row = c·1ᵀ; keeps row 0 → xB₁
//! collector   publishes XB₁B₂, B₂ = diag(I, B₂*)
//! ```
//!
//! The kept columns (response and treatment) are identity blocks of `B₁` and `B₂`, so they are
//! published unchanged; as §2.2 shows, the treatment effect and its standard error of a logistic
//! regression with intercept on `XB₁B₂` then equal the raw ones. Because the kept columns pass
//! through every step unchanged, the device sends them once instead of letting `A₀` mix `r` copies
//! of them (the paper's Table 8 also shows them unmixed). `B₁*`, `B₂*` are Haar on the orthogonal
//! matrices keeping `1` fixed, as in the paper's example (transposes of `GenerateROM`), which is
//! what gives `1ᵀB₁* = 1ᵀ` for the QA row.
//!
//! The combined release of §3.3 (last paragraph) additionally publishes `A₁A₂X`: the collector
//! sends `A₂XB₁` (its own `A₂`) to the provider, which removes `B₁`, applies its `A₁` and returns
//! `A₁A₂X`. Releasing both products raises disclosure risk that the paper leaves unassessed; see
//! [`COMBINED_RELEASE_WARNING`].

use super::qa::{QaReport, check_constant, max_row_norm};
use super::tm2::Generator;
use super::{ProtocolError, require_finite};
use crate::key::{Key, KeyOrigin, StreamId};
use crate::mask::{DenseInvertible, FixedSubspaceHaar, KeepColumns, Mask};
use crate::random::{BitSource, MatlabTwister, fill_standard_normal};
use nalgebra::DMatrix;

/// Printed whenever both `A₁A₂X` and `XB₁B₂` are released.
pub const COMBINED_RELEASE_WARNING: &str = "disclosure warning: releasing both A1A2X and XB1B2 lets \
an intruder combine two views of the same records; Wu et al. (2017) section 3.3 states this raises \
disclosure risk that has not been assessed — release both only if the analysis truly needs both";

/// The public design of a second-method survey.
#[derive(Clone, Debug, PartialEq)]
pub struct SecondDesign {
    columns: usize,
    kept: Vec<usize>,
    noise_rows: usize,
    noise_sigma: f64,
    qa_constant: Option<f64>,
    generator: Generator,
}

impl SecondDesign {
    /// `columns` variables per record, `kept` of them (response, treatment) invariant, `noise_rows`
    /// Gaussian rows of standard deviation `noise_sigma`, and a QA row of constant `qa_constant`.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] for bad indices, fewer than two masked columns (the QA
    /// row needs `1ᵀB* = 1ᵀ`, trivial in one dimension), no noise row, or non-finite numbers.
    pub fn new(
        columns: usize,
        kept: Vec<usize>,
        noise_rows: usize,
        noise_sigma: f64,
        qa_constant: Option<f64>,
    ) -> Result<Self, ProtocolError> {
        let invalid = |what: String| Err(ProtocolError::InvalidParameter { what });
        let mut seen = vec![false; columns];
        for &k in &kept {
            if k >= columns || seen[k] {
                return invalid(format!(
                    "kept column {k} is out of range or repeated ({columns} columns)"
                ));
            }
            seen[k] = true;
        }
        if columns < kept.len() + 2 {
            return invalid(format!(
                "the second method needs at least two masked columns besides the {} kept ones",
                kept.len()
            ));
        }
        if noise_rows == 0 || !(noise_sigma.is_finite() && noise_sigma > 0.0) {
            return invalid(format!(
                "the second method needs noise rows with a finite positive sigma (got {noise_rows} rows, \
                 sigma {noise_sigma})"
            ));
        }
        if let Some(c) = qa_constant
            && !c.is_finite()
        {
            return invalid(format!("the QA constant must be finite, got {c}"));
        }
        Ok(Self {
            columns,
            kept,
            noise_rows,
            noise_sigma,
            qa_constant,
            generator: Generator::ChaCha,
        })
    }

    /// Choose the generator (MATLAB reproduces `A₀` of eq. (2) from teaching key 535).
    pub fn with_generator(mut self, generator: Generator) -> Self {
        self.generator = generator;
        self
    }

    /// Rows of the augmented record `x*`: `r = 1 + noise rows + QA row`.
    pub fn r(&self) -> usize {
        1 + self.noise_rows + usize::from(self.qa_constant.is_some())
    }

    /// Variables per record.
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Kept (invariant) columns.
    pub fn kept(&self) -> &[usize] {
        &self.kept
    }

    /// Masked columns, in order.
    pub fn masked(&self) -> Vec<usize> {
        (0..self.columns)
            .filter(|j| !self.kept.contains(j))
            .collect()
    }
}

fn matlab_seed(key: &Key, offset: u32) -> Result<u32, ProtocolError> {
    match key.origin() {
        KeyOrigin::Teaching(n) => u32::try_from(n)
            .ok()
            .and_then(|n| n.checked_add(offset))
            .ok_or(ProtocolError::InvalidParameter {
                what: format!("MATLAB seeds are 32-bit; {n} is too large"),
            }),
        _ => Err(ProtocolError::InvalidParameter {
            what: "MATLAB-compatible generation needs a numeric teaching key like 535".into(),
        }),
    }
}

/// `B*`: Haar on the `q × q` orthogonal matrices keeping `1` fixed (so `1ᵀB* = 1ᵀ` too).
fn attribute_block(
    generator: Generator,
    key: &Key,
    party: u32,
    offset: u32,
    q: usize,
) -> Result<FixedSubspaceHaar, ProtocolError> {
    let ones = DMatrix::from_element(q, 1, 1.0);
    Ok(match generator {
        Generator::ChaCha => {
            FixedSubspaceHaar::keyed(&ones, key.stream(StreamId::AttributeMask { party }))?
        }
        Generator::Matlab => FixedSubspaceHaar::from_source(
            &ones,
            &mut MatlabTwister::new(matlab_seed(key, offset)?),
        )?,
    })
}

/// What one device sends: its kept values in the clear and `A₀x*` on the masked columns.
#[derive(Clone, Debug, PartialEq)]
pub struct SecondUpload {
    /// Values of the kept columns, in the design's order.
    pub kept: Vec<f64>,
    /// `A₀x*` (or later `A₀x*B₁`) on the masked columns (`r × q`).
    pub mixed: DMatrix<f64>,
}

/// A participant's device in the second method.
pub struct SecondParticipant<'a> {
    design: &'a SecondDesign,
    row_mixer: &'a DenseInvertible,
}

impl<'a> SecondParticipant<'a> {
    /// A device holding the collector's `A₀`.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] when `A₀` is not `r × r`.
    pub fn new(
        design: &'a SecondDesign,
        row_mixer: &'a DenseInvertible,
    ) -> Result<Self, ProtocolError> {
        if row_mixer.dim() != design.r() {
            return Err(ProtocolError::Shape {
                what: "A0 dimension",
                expected: design.r(),
                found: row_mixer.dim(),
            });
        }
        Ok(Self { design, row_mixer })
    }

    /// `x*` on the masked columns: the record, the noise rows and the QA row (never leaves the device).
    ///
    /// # Errors
    /// [`ProtocolError::RecordLength`] or [`ProtocolError::NonFinite`].
    pub fn augment<B: BitSource + ?Sized>(
        &self,
        record: &[f64],
        noise: &mut B,
    ) -> Result<DMatrix<f64>, ProtocolError> {
        if record.len() != self.design.columns {
            return Err(ProtocolError::RecordLength {
                record: 0,
                expected: self.design.columns,
                found: record.len(),
            });
        }
        if let Some((column, &value)) = record.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ProtocolError::NonFinite {
                record: 0,
                column,
                value,
            });
        }
        let masked = self.design.masked();
        let mut x = DMatrix::zeros(self.design.r(), masked.len());
        for (j, &c) in masked.iter().enumerate() {
            x[(0, j)] = record[c];
        }
        let mut row = vec![0.0; masked.len()];
        for i in 1..=self.design.noise_rows {
            fill_standard_normal(noise, &mut row);
            for (j, z) in row.iter().enumerate() {
                x[(i, j)] = self.design.noise_sigma * z;
            }
        }
        if let Some(c) = self.design.qa_constant {
            x.row_mut(self.design.r() - 1).fill(c);
        }
        Ok(x)
    }

    /// The upload: kept values and `A₀x*`.
    ///
    /// # Errors
    /// As [`augment`](Self::augment).
    pub fn mask_record<B: BitSource + ?Sized>(
        &self,
        record: &[f64],
        noise: &mut B,
    ) -> Result<SecondUpload, ProtocolError> {
        let mut mixed = self.augment(record, noise)?;
        self.row_mixer.left_apply(&mut mixed)?;
        let kept = self.design.kept.iter().map(|&k| record[k]).collect();
        Ok(SecondUpload { kept, mixed })
    }
}

/// `A₀` from the device key of [`SecondCollector::device_key`]: the same function runs on the
/// collector's server and on every device.
///
/// # Errors
/// [`ProtocolError::Mask`] for a (probability-zero) singular draw; MATLAB seeding errors.
pub fn row_mixer_from_device_key(
    design: &SecondDesign,
    key: &Key,
) -> Result<DenseInvertible, ProtocolError> {
    let r = design.r();
    Ok(match design.generator {
        Generator::ChaCha => {
            DenseInvertible::uniform_entries(r, &mut key.stream(StreamId::RowMixer).rng())?
        }
        Generator::Matlab => {
            DenseInvertible::uniform_entries(r, &mut MatlabTwister::new(matlab_seed(key, 0)?))?
        }
    })
}

/// The provider of the second method: holds the key of `B₁` (and of `A₁` for a combined release).
pub struct SecondProvider {
    key: Key,
    design: SecondDesign,
}

impl SecondProvider {
    /// A provider with its own key.
    pub fn new(key: Key, design: SecondDesign) -> Self {
        Self { key, design }
    }

    fn b1_star(&self) -> Result<FixedSubspaceHaar, ProtocolError> {
        attribute_block(
            self.design.generator,
            &self.key,
            1,
            0,
            self.design.masked().len(),
        )
    }

    /// `A₀x*B₁` for one upload.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] or [`ProtocolError::NonFinite`] for malformed uploads.
    pub fn mask_upload(&self, upload: &SecondUpload) -> Result<SecondUpload, ProtocolError> {
        let q = self.design.masked().len();
        if upload.mixed.shape() != (self.design.r(), q)
            || upload.kept.len() != self.design.kept.len()
        {
            return Err(ProtocolError::Shape {
                what: "upload shape (rows × masked columns)",
                expected: self.design.r() * q,
                found: upload.mixed.len(),
            });
        }
        require_finite(&upload.mixed)?;
        let mut mixed = upload.mixed.clone();
        self.b1_star()?.right_apply(&mut mixed)?;
        Ok(SecondUpload {
            kept: upload.kept.clone(),
            mixed,
        })
    }

    /// Combined release: remove `B₁` from the collector's `A₂XB₁` and apply the provider's `A₁`.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] for the wrong width; mask errors.
    pub fn finish_combined(&self, a2xb1: &DMatrix<f64>) -> Result<DMatrix<f64>, ProtocolError> {
        if a2xb1.ncols() != self.design.columns {
            return Err(ProtocolError::Shape {
                what: "width of A2XB1",
                expected: self.design.columns,
                found: a2xb1.ncols(),
            });
        }
        require_finite(a2xb1)?;
        let b1 = KeepColumns::new(self.design.columns, &self.design.kept, self.b1_star()?)?;
        let mut x = a2xb1.clone();
        b1.right_apply_inverse(&mut x)?;
        let a1 = FixedSubspaceHaar::ones_fixed(
            x.nrows(),
            self.key.stream(StreamId::ProviderLeftMask { cohort: 0 }),
        )?;
        a1.left_apply(&mut x)?;
        Ok(x)
    }
}

/// The collector of the second method: holds the keys of `A₀`, `B₂` (and `A₂` when combined).
pub struct SecondCollector {
    key: Key,
    design: SecondDesign,
}

impl SecondCollector {
    /// A collector with its own key.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidParameter`] when MATLAB generation lacks a teaching key.
    pub fn new(key: Key, design: SecondDesign) -> Result<Self, ProtocolError> {
        if design.generator == Generator::Matlab {
            matlab_seed(&key, 2)?;
        }
        Ok(Self { key, design })
    }

    /// `A₀`, the `r × r` row operator with i.i.d. U(0, 1) entries sent to every device.
    ///
    /// # Errors
    /// [`ProtocolError::Mask`] for a (probability-zero) singular draw.
    pub fn row_mixer(&self) -> Result<DenseInvertible, ProtocolError> {
        row_mixer_from_device_key(&self.design, &self.device_key())
    }

    /// The key published to devices so they can build `A₀`: a subkey of the collector's key
    /// (the teaching key itself in MATLAB mode, where `A₀` is `rand(r, r)` after `rng(key)`).
    pub fn device_key(&self) -> Key {
        match self.design.generator {
            Generator::ChaCha => self.key.derive(StreamId::RowMixerKey),
            Generator::Matlab => self.key.clone(),
        }
    }

    /// Remove `A₀`, check the QA row, and return the record's row of `XB₁` (all columns).
    ///
    /// # Errors
    /// [`ProtocolError::Shape`], [`ProtocolError::NonFinite`], [`ProtocolError::QaFailed`].
    pub fn unmask_record(
        &self,
        upload: &SecondUpload,
    ) -> Result<(Vec<f64>, Option<QaReport>), ProtocolError> {
        let masked = self.design.masked();
        if upload.mixed.shape() != (self.design.r(), masked.len())
            || upload.kept.len() != self.design.kept.len()
        {
            return Err(ProtocolError::Shape {
                what: "provider batch shape",
                expected: self.design.r() * masked.len(),
                found: upload.mixed.len(),
            });
        }
        require_finite(&upload.mixed)?;
        let mut xb1 = upload.mixed.clone();
        self.row_mixer()?.left_apply_inverse(&mut xb1)?;
        let qa = match self.design.qa_constant {
            Some(c) => Some(
                check_constant(
                    xb1.row(self.design.r() - 1).iter(),
                    c,
                    max_row_norm(&upload.mixed),
                )
                .require_pass()?,
            ),
            None => None,
        };
        let mut row = vec![0.0; self.design.columns];
        for (value, &k) in upload.kept.iter().zip(&self.design.kept) {
            row[k] = *value;
        }
        for (j, &c) in masked.iter().enumerate() {
            row[c] = xb1[(0, j)];
        }
        Ok((row, qa))
    }

    fn b2(&self) -> Result<KeepColumns<FixedSubspaceHaar>, ProtocolError> {
        let b2_star = attribute_block(
            self.design.generator,
            &self.key,
            2,
            2,
            self.design.masked().len(),
        )?;
        Ok(KeepColumns::new(
            self.design.columns,
            &self.design.kept,
            b2_star,
        )?)
    }

    /// Publish `XB₁B₂`.
    ///
    /// # Errors
    /// [`ProtocolError::Shape`] for the wrong width.
    pub fn release(&self, xb1: &DMatrix<f64>) -> Result<DMatrix<f64>, ProtocolError> {
        if xb1.ncols() != self.design.columns {
            return Err(ProtocolError::Shape {
                what: "width of XB1",
                expected: self.design.columns,
                found: xb1.ncols(),
            });
        }
        let mut out = xb1.clone();
        self.b2()?.right_apply(&mut out)?;
        Ok(out)
    }

    /// Combined release, first half: `A₂·XB₁` with the collector's `A₂` (keeps `1ₙ`), for the provider.
    ///
    /// # Errors
    /// Mask errors (e.g. a single record).
    pub fn start_combined(&self, xb1: &DMatrix<f64>) -> Result<DMatrix<f64>, ProtocolError> {
        let a2 = FixedSubspaceHaar::ones_fixed(
            xb1.nrows(),
            self.key.stream(StreamId::CollectorLeftMask),
        )?;
        let mut out = xb1.clone();
        a2.left_apply(&mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mask::test_support::test_block;
    use crate::tolerance::{PRESERVED_STATISTICS, ROUND_TRIP};

    fn design() -> SecondDesign {
        SecondDesign::new(6, vec![0, 1], 6, 1.0, Some(777.0)).unwrap()
    }

    fn run(raw: &DMatrix<f64>) -> (SecondCollector, SecondProvider, DMatrix<f64>) {
        let d = design();
        let collector = SecondCollector::new(Key::teaching(535), d.clone()).unwrap();
        let provider = SecondProvider::new(Key::teaching(536), d.clone());
        let a0 = collector.row_mixer().unwrap();
        let device = SecondParticipant::new(&d, &a0).unwrap();
        let mut xb1 = DMatrix::zeros(raw.nrows(), raw.ncols());
        for i in 0..raw.nrows() {
            let record: Vec<f64> = raw.row(i).iter().copied().collect();
            let upload = device
                .mask_record(
                    &record,
                    &mut Key::teaching(7)
                        .stream(StreamId::ParticipantNoise {
                            participant: i as u64,
                        })
                        .rng(),
                )
                .unwrap();
            let doubly = provider.mask_upload(&upload).unwrap();
            let (row, qa) = collector.unmask_record(&doubly).unwrap();
            assert!(qa.unwrap().passed());
            xb1.row_mut(i).copy_from_slice(&row);
        }
        (collector, provider, xb1)
    }

    #[test]
    fn kept_columns_survive_and_the_rest_is_masked() {
        let raw = test_block(9, 6);
        let (collector, _, xb1) = run(&raw);
        let release = collector.release(&xb1).unwrap();
        assert!((release.columns(0, 2) - raw.columns(0, 2)).amax() < ROUND_TRIP * raw.amax());
        assert!((release.column(3) - raw.column(3)).amax() > 0.1);
        // Masked block: row norms are preserved (B₁*, B₂* orthogonal).
        for i in 0..9 {
            let raw_norm = raw.row(i).columns(2, 4).norm();
            let rel_norm = release.row(i).columns(2, 4).norm();
            assert!((raw_norm - rel_norm).abs() < ROUND_TRIP * raw_norm * 10.0);
        }
    }

    #[test]
    fn combined_release_preserves_statistics() {
        let raw = test_block(11, 6);
        let (collector, provider, xb1) = run(&raw);
        let a2xb1 = collector.start_combined(&xb1).unwrap();
        let a1a2x = provider.finish_combined(&a2xb1).unwrap();
        let gram = raw.tr_mul(&raw);
        assert!((a1a2x.tr_mul(&a1a2x) - &gram).amax() / gram.amax() < PRESERVED_STATISTICS);
        assert!(
            ((a1a2x.row_sum() - raw.row_sum()).amax()) / raw.amax() < PRESERVED_STATISTICS * 11.0
        );
        assert!(COMBINED_RELEASE_WARNING.contains("disclosure"));
    }

    #[test]
    fn tampered_upload_fails_qa() {
        let raw = test_block(3, 6);
        let d = design();
        let collector = SecondCollector::new(Key::teaching(1), d.clone()).unwrap();
        let provider = SecondProvider::new(Key::teaching(2), d.clone());
        let a0 = collector.row_mixer().unwrap();
        let device = SecondParticipant::new(&d, &a0).unwrap();
        let record: Vec<f64> = raw.row(0).iter().copied().collect();
        let mut upload = device
            .mask_record(
                &record,
                &mut Key::teaching(3).stream(StreamId::Scratch(0)).rng(),
            )
            .unwrap();
        upload.mixed[(2, 1)] += 5.0;
        let doubly = provider.mask_upload(&upload).unwrap();
        assert!(matches!(
            collector.unmask_record(&doubly),
            Err(ProtocolError::QaFailed { .. })
        ));
    }

    #[test]
    fn matlab_generator_reproduces_a0_of_equation_2() {
        let d = SecondDesign::new(8, vec![0, 1], 6, 1.0, Some(777.0))
            .unwrap()
            .with_generator(Generator::Matlab);
        let a0 = SecondCollector::new(Key::teaching(535), d)
            .unwrap()
            .row_mixer()
            .unwrap();
        // Eq. (2) of seed 003, first row.
        let printed = [
            0.3622, 0.8146, 0.6877, 0.5300, 0.6252, 0.1891, 0.6139, 0.3486,
        ];
        for (j, p) in printed.iter().enumerate() {
            assert!((a0.matrix()[(0, j)] - p).abs() <= crate::tolerance::printed_precision(4));
        }
    }

    #[test]
    fn invalid_designs_are_refused() {
        assert!(SecondDesign::new(3, vec![0, 1], 6, 1.0, None).is_err());
        assert!(SecondDesign::new(5, vec![7], 6, 1.0, None).is_err());
        assert!(SecondDesign::new(5, vec![0], 0, 1.0, None).is_err());
        assert!(SecondDesign::new(5, vec![0], 2, f64::INFINITY, None).is_err());
    }
}
