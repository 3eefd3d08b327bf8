//! `orthomask serve`: run the services — the masking service provider, the data collector (which
//! also serves the web app), right-masking services for share mode, or all of them on one host.
//! Everything here is argument handling; the services are `orthomask_server`'s.

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use orthomask_server::keys::{SecretSource, load_secret};
use orthomask_server::peers::{IDENTITY_KEY_FILE, Identity, Party, PartyKey, PeerKeys};
use orthomask_server::run::{AllConfig, ServePlan, serve_blocking};
use orthomask_server::{CollectorConfig, Limits, MspConfig, RightConfig};
use std::path::{Path, PathBuf};

/// Which service to run.
#[derive(Subcommand)]
pub enum ServeCommand {
    /// The masking service provider: accepts masked uploads, applies A₂ per cohort, hands
    /// A₂XB to the collector.
    Msp(MspArgs),
    /// The data collector: surveys, definitions, unmasking B, QA, the release; serves the web app.
    Collector(CollectorArgs),
    /// A right-masking service of share mode (seed 000 §3.5); a deployment runs three or more.
    Right(RightArgs),
    /// Collector, provider and right-masking services in one process on this host, each with its
    /// own directory, store, key file and identity key, pinning one another's.
    All(AllArgs),
    /// Print a service's identity key (its public half, 64 hex digits), creating the key in its
    /// data directory when absent: what the operators of its peers pin (--collector-key,
    /// --msp-key, --right-key).
    Identity(IdentityArgs),
}

/// `serve identity`.
#[derive(Args)]
pub struct IdentityArgs {
    /// The service's data directory.
    #[arg(long)]
    data_dir: PathBuf,
    /// Which party the service plays: collector, provider or right-<i>.
    #[arg(long)]
    party: String,
}

/// A party's name as `serve identity --party` takes it.
fn party(text: &str) -> Result<Party> {
    Party::from_name(text).ok_or_else(|| {
        anyhow::anyhow!(
            "--party {text:?} is not a party: use collector, provider or right-<i> (e.g. right-0)"
        )
    })
}

/// A pinned identity key on the command line, in one line naming the flag when it is not one.
fn party_key(text: &str, flag: &str) -> Result<PartyKey> {
    PartyKey::from_hex(text).map_err(|e| anyhow::anyhow!("{flag} {text:?}: {e}"))
}

/// The `--right` list names no right-masking service, or at least the fewest share mode runs
/// with (`orthomask_survey::policy::MIN_SHARE_SERVICES`; the services check it again).
fn share_services(urls: &[String]) -> Result<()> {
    let fewest = orthomask_survey::policy::MIN_SHARE_SERVICES;
    if !urls.is_empty() && urls.len() < fewest {
        bail!(
            "{} right-masking services are named (--right), but share mode needs at least \
             {fewest} (or none, for the basic protocol alone)",
            urls.len()
        );
    }
    Ok(())
}

/// Every `--right-key`, in order.
fn right_keys(texts: &[String]) -> Result<Vec<PartyKey>> {
    texts.iter().map(|t| party_key(t, "--right-key")).collect()
}

/// Options every single service takes.
#[derive(Args)]
pub struct CommonArgs {
    /// The service's own data directory (database and key file; created 0700).
    #[arg(long)]
    data_dir: PathBuf,
    /// Address to listen on.
    #[arg(long)]
    listen: String,
    /// Base URL others reach this service at (default http://<listen>).
    #[arg(long)]
    public_url: Option<String>,
    /// Origin allowed to call the public API from a browser (repeatable): the web app's.
    #[arg(long = "allow-origin")]
    allow_origin: Vec<String>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Per-client limits.
#[derive(Args)]
pub struct LimitArgs {
    /// Average requests per second allowed per client address.
    #[arg(long, default_value_t = 20.0)]
    rate_per_second: f64,
    /// Burst of requests allowed per client address.
    #[arg(long, default_value_t = 200)]
    rate_burst: u32,
    /// Largest accepted request body on public endpoints, in bytes.
    #[arg(long, default_value_t = 2 * 1024 * 1024)]
    max_body_bytes: usize,
    /// Take the client address from X-Forwarded-For (only behind a reverse proxy you run).
    #[arg(long)]
    trust_forwarded: bool,
}

impl LimitArgs {
    fn limits(&self) -> Result<Limits> {
        if !(self.rate_per_second.is_finite() && self.rate_per_second > 0.0) {
            bail!("--rate-per-second must be a positive number");
        }
        if self.max_body_bytes < 1024 {
            bail!("--max-body-bytes must be at least 1024");
        }
        Ok(Limits {
            rate_per_second: self.rate_per_second,
            rate_burst: self.rate_burst,
            max_body_bytes: self.max_body_bytes,
            trust_forwarded: self.trust_forwarded,
            ..Limits::default()
        })
    }
}

/// `serve msp`.
#[derive(Args)]
pub struct MspArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Base URL of the data collector that receives the masked cohorts.
    #[arg(long)]
    collector: String,
    /// The collector's identity key (64 hex digits; `orthomask serve identity --party collector`
    /// on its host): only requests it signs may register, open and close surveys here.
    #[arg(long)]
    collector_key: String,
    /// Base URL of right-masking service i, in index order (repeatable; share mode).
    #[arg(long = "right")]
    right: Vec<String>,
    /// Identity key of right-masking service i, in index order (repeatable, one per --right).
    #[arg(long = "right-key")]
    right_key: Vec<String>,
}

/// `serve collector`.
#[derive(Args)]
pub struct CollectorArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Base URL of the masking service provider.
    #[arg(long)]
    msp: String,
    /// The provider's identity key (64 hex digits; `orthomask serve identity --party provider`
    /// on its host): only requests it signs may hand cohorts to this collector.
    #[arg(long)]
    msp_key: String,
    /// Base URL of right-masking service i, in index order (repeatable; share mode).
    #[arg(long = "right")]
    right: Vec<String>,
    /// Identity key of right-masking service i, in index order (repeatable, one per --right).
    #[arg(long = "right-key")]
    right_key: Vec<String>,
    /// The built web app (`scripts/build-web.sh` writes dist/).
    #[arg(long, default_value = "dist")]
    web_dir: PathBuf,
    /// Serve the API only.
    #[arg(long)]
    no_web: bool,
    /// An earlier app build digest whose uploads are still accepted (repeatable): published in
    /// the deployment's `builds` after the one served (issue 27 §2).
    #[arg(long = "accept-build")]
    accept_build: Vec<String>,
    /// File holding the administrator's bearer token (default: the ORTHOMASK_ADMIN_TOKEN
    /// variable, else <data-dir>/admin-token, created when absent).
    #[arg(long)]
    admin_token_file: Option<PathBuf>,
}

/// `serve right`.
#[derive(Args)]
pub struct RightArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// This service's index i (0-based): it receives share i of every record.
    #[arg(long)]
    index: u32,
    /// Base URL of the masking service provider (the left-masking provider).
    #[arg(long)]
    msp: String,
    /// The provider's identity key (64 hex digits).
    #[arg(long)]
    msp_key: String,
    /// Base URL of the data collector.
    #[arg(long)]
    collector: String,
    /// The collector's identity key (64 hex digits).
    #[arg(long)]
    collector_key: String,
    /// Base URL of every right-masking service of the deployment, in index order, this one
    /// included (repeat the flag): share mode hands each cohort's unmasking key on to the next
    /// service. Configured by each operator, never taken from the collector.
    #[arg(long = "right")]
    right: Vec<String>,
    /// Identity key of every right-masking service, in index order, this one included (repeat
    /// the flag, one per --right; this service's own is checked against its identity).
    #[arg(long = "right-key")]
    right_key: Vec<String>,
}

/// `serve all`.
#[derive(Args)]
pub struct AllArgs {
    /// Parent directory: collector/, msp/, right-<i>/ below it (each with its identity key), plus
    /// admin-token and services.json (the URLs and the identity keys).
    #[arg(long)]
    data_dir: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The collector's port; the provider listens on the next one, right-masking service i on
    /// port + 2 + i (0: any free ports, listed in services.json).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Right-masking services to run for share mode (0, or at least 3, the default: the fewest
    /// for which share mode resists the collector together with one service —
    /// `docs/threat-model.md`).
    #[arg(long, default_value_t = 3)]
    right_services: usize,
    /// The built web app (`scripts/build-web.sh` writes dist/).
    #[arg(long, default_value = "dist")]
    web_dir: PathBuf,
    /// Serve the API only.
    #[arg(long)]
    no_web: bool,
    /// An earlier app build digest whose uploads are still accepted (repeatable): published in
    /// the deployment's `builds` after the one served (issue 27 §2).
    #[arg(long = "accept-build")]
    accept_build: Vec<String>,
    /// File holding the administrator's bearer token (default: <data-dir>/admin-token).
    #[arg(long)]
    admin_token_file: Option<PathBuf>,
    /// Do not create the live demonstration surveys (by default each one still taking
    /// participants is kept, or the next is created, and one line says which).
    #[arg(long)]
    no_demonstrations: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// A base URL without a trailing slash.
fn base_url(url: &str, what: &str) -> Result<String> {
    let trimmed = url.trim().trim_end_matches('/');
    let ok = (trimmed.starts_with("http://") || trimmed.starts_with("https://"))
        && trimmed
            .split_once("://")
            .is_some_and(|(_, rest)| !rest.is_empty());
    if !ok {
        bail!("{what} {url:?} is not an http:// or https:// URL");
    }
    Ok(trimmed.to_owned())
}

fn base_urls(urls: &[String], what: &str) -> Result<Vec<String>> {
    urls.iter().map(|u| base_url(u, what)).collect()
}

/// A secret from a file, an environment variable, or a file in the data directory.
fn secret(file: Option<&PathBuf>, variable: &str, default: &Path, what: &str) -> Result<String> {
    let source = match (file, std::env::var(variable)) {
        (Some(path), _) => SecretSource::File(path.clone()),
        (None, Ok(value)) if !value.trim().is_empty() => SecretSource::Value(value),
        _ => SecretSource::GenerateInto(default.to_owned()),
    };
    if let SecretSource::GenerateInto(path) = &source
        && !crate::io::exists(path)
    {
        if let Some(dir) = path.parent() {
            orthomask_server::keys::create_private_dir(dir)?;
        }
        tracing::info!("created the {what} in {}", path.display());
    }
    Ok(load_secret(&source, what)?)
}

impl CommonArgs {
    /// `--listen` as a socket address's text: `host:port`, not a URL.
    fn listen(&self) -> Result<String> {
        if self.listen.contains("://") {
            bail!(
                "--listen {:?} takes host:port (e.g. 127.0.0.1:8081), not a URL; the URL others \
                 reach the service at is --public-url",
                self.listen
            );
        }
        Ok(self.listen.clone())
    }

    fn public_url(&self) -> Result<String> {
        match &self.public_url {
            Some(u) => base_url(u, "--public-url"),
            None => Ok(format!("http://{}", self.listen)),
        }
    }
}

fn web_dir(dir: &Path, no_web: bool) -> Option<PathBuf> {
    if no_web {
        return None;
    }
    if !crate::io::exists(&dir.join("index.html")) {
        tracing::warn!(
            "{} has no index.html; build the web app with bash scripts/build-web.sh (the API works \
             without it)",
            dir.display()
        );
    }
    Some(dir.to_owned())
}

/// The party a data directory already belongs to, by the files its service keeps there: its
/// survey key file names its role, and only the collector keeps `collector-signing-key`.
fn party_of_directory(dir: &Path) -> Result<Option<Party>> {
    let collector = dir.join(orthomask_server::collector::SIGNING_KEY_FILE);
    let identity = dir.join(IDENTITY_KEY_FILE);
    if crate::io::exists(&collector) && !crate::io::exists(&identity) {
        return Ok(Some(Party::Collector));
    }
    for file in ["msp-keys.json", "right-keys.json", "collector-keys.json"] {
        let path = dir.join(file);
        if !crate::io::exists(&path) {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        let role = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v["role"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let party = match role.as_str() {
            "msp" => Some(Party::Provider),
            "collector" => Some(Party::Collector),
            other => Party::from_name(other),
        };
        return Ok(party);
    }
    Ok(None)
}

/// `serve identity`: the public half of the party's identity key, made when absent, on standard
/// output alone (for scripts); on standard error, which flags its peers' operators pin it with.
fn print_identity(a: &IdentityArgs) -> Result<()> {
    let party = party(&a.party)?;
    if let Some(found) = party_of_directory(&a.data_dir)?
        && found != party
    {
        bail!(
            "{} is the data directory of {found} ({}), not of --party {}: give the directory of \
             the service whose key you want",
            a.data_dir.display(),
            found.name(),
            a.party
        );
    }
    orthomask_server::keys::create_private_dir(&a.data_dir)?;
    let file = match party {
        Party::Collector => orthomask_server::collector::SIGNING_KEY_FILE,
        Party::Provider | Party::Right(_) => IDENTITY_KEY_FILE,
    };
    let identity = Identity::load_or_create(&a.data_dir.join(file), party)?;
    println!("{}", identity.public_key());
    let pin = match party {
        Party::Collector => {
            "--collector-key at the masking service provider and at every right-masking service"
                .to_owned()
        }
        Party::Provider => {
            "--msp-key at the data collector and at every right-masking service".to_owned()
        }
        Party::Right(i) => format!(
            "--right-key (position {i} of the list) at the data collector, the masking service \
             provider and every right-masking service, this one included"
        ),
    };
    eprintln!(
        "{party}'s identity key, kept in {}: its peers' operators pin it as {pin}",
        a.data_dir.join(file).display()
    );
    Ok(())
}

/// Run `serve`.
pub fn run(command: ServeCommand) -> Result<()> {
    // The services keep serving when their output cannot be written (issue 30 §2): a closed
    // pipe is an error the log counts, not the SIGPIPE that `main` restores for the other
    // commands, and every line goes through the non-blocking log.
    crate::closed_pipe::on_closed_pipe(crate::closed_pipe::OnClosedPipe::FailTheWrite);
    orthomask_server::log::init();
    // Check every argument before any secret file is created.
    match &command {
        ServeCommand::Msp(a) => {
            a.common.limits.limits()?;
            share_services(&a.right)?;
        }
        ServeCommand::Right(a) => {
            a.common.limits.limits()?;
            share_services(&a.right)?;
        }
        ServeCommand::Collector(a) => {
            a.common.limits.limits()?;
            share_services(&a.right)?;
        }
        ServeCommand::All(a) => a.limits.limits().map(drop)?,
        ServeCommand::Identity(_) => {}
    }
    let plan = match command {
        ServeCommand::Msp(a) => ServePlan::Msp(
            MspConfig {
                public_url: a.common.public_url()?,
                collector_url: base_url(&a.collector, "--collector")?,
                right_urls: base_urls(&a.right, "--right")?,
                limits: a.common.limits.limits()?,
                allowed_origins: a.common.allow_origin.clone(),
                peer_keys: PeerKeys {
                    collector: Some(party_key(&a.collector_key, "--collector-key")?),
                    provider: None,
                    rights: right_keys(&a.right_key)?,
                },
                data_dir: a.common.data_dir.clone(),
            },
            a.common.listen()?,
        ),
        ServeCommand::Right(a) => ServePlan::Right(
            RightConfig {
                index: a.index,
                public_url: a.common.public_url()?,
                msp_url: base_url(&a.msp, "--msp")?,
                collector_url: base_url(&a.collector, "--collector")?,
                right_urls: base_urls(&a.right, "--right")?,
                limits: a.common.limits.limits()?,
                allowed_origins: a.common.allow_origin.clone(),
                peer_keys: PeerKeys {
                    collector: Some(party_key(&a.collector_key, "--collector-key")?),
                    provider: Some(party_key(&a.msp_key, "--msp-key")?),
                    rights: right_keys(&a.right_key)?,
                },
                data_dir: a.common.data_dir.clone(),
            },
            a.common.listen()?,
        ),
        ServeCommand::Collector(a) => ServePlan::Collector(
            CollectorConfig {
                public_url: a.common.public_url()?,
                msp_url: base_url(&a.msp, "--msp")?,
                right_urls: base_urls(&a.right, "--right")?,
                limits: a.common.limits.limits()?,
                allowed_origins: a.common.allow_origin.clone(),
                web_dir: web_dir(&a.web_dir, a.no_web),
                accepted_builds: a.accept_build.clone(),
                admin_token: secret(
                    a.admin_token_file.as_ref(),
                    "ORTHOMASK_ADMIN_TOKEN",
                    &a.common.data_dir.join("admin-token"),
                    "admin token",
                )?,
                peer_keys: PeerKeys {
                    collector: None,
                    provider: Some(party_key(&a.msp_key, "--msp-key")?),
                    rights: right_keys(&a.right_key)?,
                },
                data_dir: a.common.data_dir.clone(),
            },
            a.common.listen()?,
        ),
        ServeCommand::All(a) => ServePlan::All(AllConfig {
            host: a.host,
            port: a.port,
            right_services: a.right_services,
            web_dir: web_dir(&a.web_dir, a.no_web),
            limits: a.limits.limits()?,
            admin_token: a.admin_token_file.map(SecretSource::File),
            data_dir: a.data_dir,
            demonstrations: !a.no_demonstrations,
            accepted_builds: a.accept_build,
        }),
        ServeCommand::Identity(a) => return print_identity(&a),
    };
    Ok(serve_blocking(plan)?)
}
