//! `orthomask keygen`: a key file with fresh 256-bit keys from the operating system.

use crate::io::{exists, restrict_to_owner, write_file};
use anyhow::{Result, bail};
use clap::Args;
use orthomask_formats::keyfile::write_key_file;
use std::path::PathBuf;

/// Arguments of `keygen`.
#[derive(Args)]
pub struct KeygenArgs {
    /// Where to write the key file.
    #[arg(long)]
    out: PathBuf,
    /// Overwrite an existing file.
    #[arg(long)]
    force: bool,
}

/// Run `keygen`.
pub fn run(args: KeygenArgs) -> Result<()> {
    if exists(&args.out) && !args.force {
        bail!(
            "{} already exists; pass --force to replace it (the old keys are then lost)",
            args.out.display()
        );
    }
    let keys = crate::keys::fresh_party_keys()?;
    write_file(&args.out, &write_key_file(&keys))?;
    restrict_to_owner(&args.out)?;
    println!(
        "wrote fresh keys for collector, provider and participants to {}",
        args.out.display()
    );
    Ok(())
}
