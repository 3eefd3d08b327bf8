//! One module per subcommand.

pub mod app_audit;
pub mod attack;
pub mod audit;
pub mod contingency;
pub mod describe;
pub mod dp_sigma;
pub mod keygen;
pub mod logit;
pub mod mask;
pub mod model;
pub mod pipeline;
pub mod regress;
pub mod secure_product;
pub mod secure_regress;
pub mod serve;
pub mod survey;

use clap::ValueEnum;
use orthomask_core::protocol::tm2::{Generator, RightMaskKind};

/// `--rng`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RngChoice {
    /// Keyed ChaCha12 streams.
    Chacha,
    /// MT19937 seeded like MATLAB's rng(key); needs a numeric teaching key.
    Matlab,
}

impl RngChoice {
    /// The core's generator.
    pub fn generator(self) -> Generator {
        match self {
            Self::Chacha => Generator::ChaCha,
            Self::Matlab => Generator::Matlab,
        }
    }

    /// Name for manifests and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Chacha => "chacha",
            Self::Matlab => "matlab",
        }
    }
}

/// `--kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KindChoice {
    /// Haar-distributed orthogonal.
    Haar,
    /// I.i.d. U(0, 1) entries (invertible).
    UniformEntries,
}

impl KindChoice {
    /// The core's mask kind.
    pub fn kind(self) -> RightMaskKind {
        match self {
            Self::Haar => RightMaskKind::Haar,
            Self::UniformEntries => RightMaskKind::UniformEntries,
        }
    }

    /// Name for manifests and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Haar => "haar",
            Self::UniformEntries => "uniform-entries",
        }
    }
}
