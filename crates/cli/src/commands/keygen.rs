//! `orthomask keygen`: a key file with fresh 256-bit keys from the operating system.

use anyhow::{Context, Result, bail};
use clap::Args;
use orthomask_formats::keyfile::write_key_file;
use orthomask_server::keys::{create_private, write_private_atomically};
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
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create directory {}", dir.display()))?;
    }
    let keys = crate::keys::fresh_party_keys()?;
    let text = write_key_file(&keys);
    // Written readable by the owner only from the first byte, synced and renamed into place
    // (the services' own key-file writer); without --force the rename itself refuses to replace
    // a file, so no check-then-write race can lose old keys.
    if args.force {
        write_private_atomically(&args.out, text.as_bytes())?;
    } else if !create_private(&args.out, text.as_bytes())? {
        bail!(
            "{} already exists; pass --force to replace it (the old keys are then lost)",
            args.out.display()
        );
    }
    println!(
        "wrote fresh keys for collector, provider and participants to {}",
        args.out.display()
    );
    Ok(())
}
