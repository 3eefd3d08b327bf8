//! Each service's own key file, the bearer secrets, and the private files and directories
//! they live in ([`create_private_dir`], [`write_private_atomically`], [`create_private`]).
//!
//! A service keeps one 256-bit key per survey in `<role>-keys.json` inside its own data
//! directory, readable by its owner only; keys never enter a database, a log line or an HTTP
//! answer (the one exception is by design: the collector publishes the *device subkey* of a
//! cohort, `derive(RightMaskKey { cohort })`, in that cohort's survey definition). Writes are
//! atomic: a temporary file, created readable by its owner only, is written and fsynced, renamed
//! over the old one, and the directory is fsynced, so a crash leaves either the old or the new
//! file and no other user ever reads a secret in between.

use crate::error::ServerError;
use orthomask_core::key::Key;
use orthomask_survey::trust::CollectorSigningKey;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A fresh 256-bit key from the operating system's random source (the core takes entropy, never
/// reads it).
///
/// # Errors
/// [`ServerError::Config`] when the OS random source fails.
pub fn fresh_key() -> Result<Key, ServerError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        ServerError::Config(format!("the operating system random source failed: {e}"))
    })?;
    Ok(Key::from_entropy(bytes))
}

/// The collector's Ed25519 signing key (`orthomask_survey::trust`), kept as 64 hex digits in its
/// own private file: loaded when present, generated from the operating system and written
/// atomically when not. Its public half is what the provider, the right-masking services and
/// participants' devices verify definitions and upload credentials with.
///
/// # Errors
/// [`ServerError::KeyFile`] for a file that is not 64 hex digits; [`ServerError::Config`] when
/// the OS random source fails; I/O errors writing it.
pub fn load_or_create_signing_key(path: &Path) -> Result<CollectorSigningKey, ServerError> {
    let bad = |reason: String| ServerError::KeyFile {
        path: path.display().to_string(),
        reason,
    };
    match std::fs::read_to_string(path) {
        Ok(text) => CollectorSigningKey::from_secret_hex(&text).map_err(|e| bad(e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut secret = [0u8; 32];
            getrandom::fill(&mut secret).map_err(|e| {
                ServerError::Config(format!("the operating system random source failed: {e}"))
            })?;
            let key = CollectorSigningKey::from_secret(secret);
            if create_private(path, format!("{}\n", key.secret_hex()).as_bytes())? {
                Ok(key)
            } else {
                // Another process created it meanwhile: use that one.
                load_or_create_signing_key(path)
            }
        }
        Err(e) => Err(bad(e.to_string())),
    }
}

#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    role: String,
    surveys: BTreeMap<String, String>,
}

/// One service's survey keys.
pub struct KeyStore {
    path: PathBuf,
    role: String,
    keys: Mutex<BTreeMap<String, Key>>,
}

impl std::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyStore")
            .field("path", &self.path)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl KeyStore {
    /// Open `path` (created empty when absent) for `role`.
    ///
    /// # Errors
    /// [`ServerError::KeyFile`] when the file is malformed or belongs to another role.
    pub fn open(path: &Path, role: &str) -> Result<Self, ServerError> {
        let bad = |reason: String| ServerError::KeyFile {
            path: path.display().to_string(),
            reason,
        };
        let mut keys = BTreeMap::new();
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let file: KeyFile = serde_json::from_str(&text)
                    .map_err(|e| bad(format!("not a service key file: {e}")))?;
                if file.role != role {
                    return Err(bad(format!(
                        "this key file belongs to the {} service, not the {role} service; each \
                         service keeps its own keys",
                        file.role
                    )));
                }
                for (survey, hex) in file.surveys {
                    let key = Key::from_hex(&hex)
                        .map_err(|e| bad(format!("key of survey {survey:?}: {e}")))?;
                    keys.insert(survey, key);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ServerError::io(format!("reading {}", path.display()), e)),
        }
        Ok(Self {
            path: path.to_owned(),
            role: role.to_owned(),
            keys: Mutex::new(keys),
        })
    }

    /// The key file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The key of `survey`, if this service has one.
    pub fn get(&self, survey: &str) -> Option<Key> {
        self.lock().get(survey).cloned()
    }

    /// The key of `survey`, generating and saving a fresh one from the operating system when it
    /// has none.
    ///
    /// # Errors
    /// [`ServerError`] when the OS random source or the file write fails.
    pub fn get_or_create(&self, survey: &str) -> Result<Key, ServerError> {
        let mut keys = self.lock();
        if let Some(key) = keys.get(survey) {
            return Ok(key.clone());
        }
        let key = fresh_key()?;
        keys.insert(survey.to_owned(), key.clone());
        if let Err(e) = self.save(&keys) {
            keys.remove(survey);
            return Err(e);
        }
        Ok(key)
    }

    /// Forget the key of `survey` (issue 20 §1: once a survey is released, nothing that could be
    /// combined with another party's view stays): removed from memory and from the key file,
    /// which is rewritten atomically. Erasing a key this service does not hold does nothing.
    ///
    /// # Errors
    /// [`ServerError`] when the file write fails (the key is then kept in memory too).
    pub fn erase(&self, survey: &str) -> Result<(), ServerError> {
        let mut keys = self.lock();
        let Some(old) = keys.remove(survey) else {
            return Ok(());
        };
        if let Err(e) = self.save(&keys) {
            keys.insert(survey.to_owned(), old);
            return Err(e);
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Key>> {
        // A panic while holding the lock cannot leave the map half-updated (inserts are single
        // operations), so a poisoned lock is still consistent.
        self.keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn save(&self, keys: &BTreeMap<String, Key>) -> Result<(), ServerError> {
        let file = KeyFile {
            role: self.role.clone(),
            surveys: keys.iter().map(|(s, k)| (s.clone(), k.to_hex())).collect(),
        };
        let text =
            serde_json::to_string_pretty(&file).map_err(|e| ServerError::Config(e.to_string()))?;
        write_private_atomically(&self.path, text.as_bytes())
    }
}

/// Create a directory (and parents) readable by its owner only.
///
/// # Errors
/// [`ServerError::Io`] naming the directory.
pub fn create_private_dir(path: &Path) -> Result<(), ServerError> {
    std::fs::create_dir_all(path)
        .map_err(|e| ServerError::io(format!("creating {}", path.display()), e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| ServerError::io(format!("restricting {}", path.display()), e))?;
    }
    Ok(())
}

/// Write `bytes` to `path` readable by the owner only, atomically and durably, replacing what
/// was there: see [`write_private`].
///
/// # Errors
/// [`ServerError::Io`] naming the file.
pub fn write_private_atomically(path: &Path, bytes: &[u8]) -> Result<(), ServerError> {
    write_private(path, bytes, true).map(|_| ())
}

/// Write `bytes` to `path` as [`write_private_atomically`] does, but only if nothing is there:
/// `false` (and `path` untouched) when something already is — decided by the rename itself, so
/// two processes creating the same key file cannot both succeed and one of them run with a key
/// that is not on disk.
///
/// # Errors
/// [`ServerError::Io`] naming the file.
pub fn create_private(path: &Path, bytes: &[u8]) -> Result<bool, ServerError> {
    write_private(path, bytes, false)
}

/// The secret goes to a fresh file beside `path` (a random name, created exclusively with mode
/// 0600 by `tempfile`, so it is never readable by others, whatever the umask), is synced, and is
/// renamed to `path` — over what was there when `replace`, else only if nothing is (`false`
/// otherwise) — and the directory is synced. A crash leaves the old file or the new one, never
/// half a secret.
fn write_private(path: &Path, bytes: &[u8], replace: bool) -> Result<bool, ServerError> {
    let io = |what: &str, e| ServerError::io(format!("{what} {}", path.display()), e);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut file = tempfile::Builder::new()
        .prefix(".orthomask-")
        .tempfile_in(dir)
        .map_err(|e| io("creating a file beside", e))?;
    file.write_all(bytes).map_err(|e| io("writing", e))?;
    file.as_file().sync_all().map_err(|e| io("syncing", e))?;
    if replace {
        file.persist(path).map_err(|e| io("replacing", e.error))?;
    } else {
        match file.persist_noclobber(path) {
            Ok(_) => {}
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
            Err(e) => return Err(io("creating", e.error)),
        }
    }
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(true)
}

/// Where a bearer secret comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretSource {
    /// Read from this file (surrounding whitespace ignored).
    File(PathBuf),
    /// Given directly (from an environment variable).
    Value(String),
    /// Read from this file, creating it with a fresh random secret when absent.
    GenerateInto(PathBuf),
}

/// Shortest accepted bearer secret.
pub const MIN_SECRET_LEN: usize = 16;

/// Resolve a bearer secret.
///
/// # Errors
/// [`ServerError`] when the file cannot be read or written, or the secret is shorter than
/// [`MIN_SECRET_LEN`] characters.
pub fn load_secret(source: &SecretSource, what: &str) -> Result<String, ServerError> {
    let secret = match source {
        SecretSource::Value(v) => v.trim().to_owned(),
        SecretSource::File(path) => std::fs::read_to_string(path)
            .map_err(|e| ServerError::io(format!("reading the {what} from {}", path.display()), e))?
            .trim()
            .to_owned(),
        SecretSource::GenerateInto(path) => match std::fs::read_to_string(path) {
            Ok(text) => text.trim().to_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let fresh = fresh_key()?.to_hex();
                if !create_private(path, format!("{fresh}\n").as_bytes())? {
                    // Another process created it meanwhile: use that one.
                    return load_secret(source, what);
                }
                fresh
            }
            Err(e) => {
                return Err(ServerError::io(
                    format!("reading the {what} from {}", path.display()),
                    e,
                ));
            }
        },
    };
    if secret.len() < MIN_SECRET_LEN || secret.chars().any(char::is_whitespace) {
        return Err(ServerError::Config(format!(
            "the {what} must be at least {MIN_SECRET_LEN} characters without spaces"
        )));
    }
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file that appears in the directory while a secret is written — the file being
    /// written as well as the result — is readable by its owner only. A watcher lists the
    /// directory over and over while a large secret is written (large, so that the write
    /// takes long enough to be seen), and once more at the end; a file ever seen with another
    /// mode fails the test (writing, then `chmod`, left a window of 0644).
    #[cfg(unix)]
    #[test]
    fn a_secret_is_never_readable_by_others_while_it_is_written() {
        use std::os::unix::fs::PermissionsExt;
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let watcher = {
            let (dir, done) = (dir.path().to_owned(), done.clone());
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                loop {
                    let last = done.load(Ordering::SeqCst);
                    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                        if let Ok(meta) = entry.metadata() {
                            seen.push((entry.file_name(), meta.permissions().mode() & 0o777));
                        }
                    }
                    if last {
                        return seen;
                    }
                }
            })
        };
        let secret = vec![b'7'; 64 << 20];
        write_private_atomically(&dir.path().join("replaced.key"), &secret).unwrap();
        assert!(create_private(&dir.path().join("created.key"), &secret).unwrap());
        done.store(true, Ordering::SeqCst);
        let seen = watcher.join().unwrap();
        let loose: Vec<_> = seen.iter().filter(|(_, mode)| *mode != 0o600).collect();
        assert!(loose.is_empty(), "files readable by others: {loose:?}");
        for name in ["replaced.key", "created.key"] {
            assert!(seen.iter().any(|(n, _)| n == name), "{name} was seen");
        }
    }

    /// Creating a key file where one already is leaves it alone and says so; of two threads
    /// creating the same file at once, exactly one succeeds.
    #[test]
    fn creating_never_replaces_a_key_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("signing.key");
        assert!(create_private(&path, b"first\n").unwrap());
        assert!(!create_private(&path, b"second\n").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"first\n");
        let raced = dir.path().join("raced.key");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let created: Vec<bool> = (0..2)
            .map(|i| {
                let (raced, barrier) = (raced.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    create_private(&raced, format!("{i}\n").as_bytes()).unwrap()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        assert_eq!(created.iter().filter(|&&c| c).count(), 1, "{created:?}");
        let kept = std::fs::read_to_string(&raced).unwrap();
        assert_eq!(
            kept,
            format!("{}\n", created.iter().position(|&c| c).unwrap())
        );
        // Only the key files are left: no temporary file survives either outcome.
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["raced.key", "signing.key"]);
    }

    #[test]
    fn keys_persist_and_files_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("msp-keys.json");
        let store = KeyStore::open(&path, "msp").unwrap();
        let k = store.get_or_create("s1").unwrap();
        assert_eq!(store.get_or_create("s1").unwrap(), k);
        let again = KeyStore::open(&path, "msp").unwrap();
        assert_eq!(again.get("s1").unwrap().to_hex(), k.to_hex());
        assert!(again.get("s2").is_none());
        let wrong = KeyStore::open(&path, "collector").unwrap_err().to_string();
        assert!(wrong.contains("belongs to the msp service"), "{wrong}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn secrets_are_generated_once_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("admin-token");
        let a = load_secret(&SecretSource::GenerateInto(path.clone()), "admin token").unwrap();
        let b = load_secret(&SecretSource::GenerateInto(path.clone()), "admin token").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        assert!(load_secret(&SecretSource::Value("short".into()), "admin token").is_err());
        assert!(load_secret(&SecretSource::File(dir.path().join("none")), "x").is_err());
    }
}
