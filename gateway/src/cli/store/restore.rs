//! `toolgate store restore`: puts a backup (a backup directory, a stream file or standard
//! input) into `store.path` while the gateway is stopped, verifies the audit chain, and on any
//! failure removes what it wrote and puts back what was there.

use super::{Progress, store_directory, verify_chain};
use crate::admin::backup::TOKEN_FILE;
use crate::audit::verify::{ChainError, Verified};
use crate::config::Config;
use crate::http::hex;
use crate::store::SledStore;
use crate::store::backup::{self, BackupError, Decoder, Importer, Item, TableTally};
use anyhow::{Context as _, anyhow, bail};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Restores `from` into the configured `store.path`; returns whether the audit chain verified.
pub(super) fn restore(config: &Config, from: &Path, replace: bool) -> anyhow::Result<bool> {
    let store_path = store_directory(config)?;
    // Open the source before touching the target: a wrong path must not move anything aside.
    let source = Source::open(from)?;
    // A backup directory must say what it holds: one without its manifest did not finish.
    let manifest = match &source {
        Source::Directory(_) => Some(Manifest::read(from)?),
        Source::Stream(_) => None,
    };
    let target = Target::prepare(&store_path, replace)?;
    let mut progress = Progress::new("restore");
    let outcome = (|| -> anyhow::Result<Result<Verified, ChainError>> {
        let store = SledStore::create_new(&store_path)?;
        let mut importer = Importer::new(&store);
        source.walk(&mut |item| {
            progress.see(&item);
            importer.accept(item)
        })?;
        let tallies = importer.finish()?;
        if let Some(manifest) = &manifest {
            manifest.check(&tallies)?;
        }
        verify_chain(config, &store)
    })();
    match outcome {
        Ok(Ok(verified)) => {
            eprintln!(
                "restore: {} records into {}; audit chain ok: {} records, {}..{}",
                progress.total,
                store_path.display(),
                verified.records,
                verified.first,
                verified.last
            );
            if let Target::MovedAside(aside) = &target {
                eprintln!("restore: the previous store is kept in {}", aside.display());
            }
            Ok(true)
        }
        Ok(Err(problem)) => {
            target.undo(&store_path)?;
            eprintln!("restore: BROKEN audit chain in the backup: {problem}; nothing was changed");
            Ok(false)
        }
        Err(error) => {
            target.undo(&store_path)?;
            Err(error.context("restore failed; nothing was changed"))
        }
    }
}

/// What a backup directory says it holds (`toolgate-backup.json`): records per table and, from
/// format 2 on, a digest per table. A restore must find exactly that.
struct Manifest {
    records: serde_json::Map<String, serde_json::Value>,
    digests: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Manifest {
    fn read(directory: &Path) -> anyhow::Result<Self> {
        let path = directory.join(super::MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|_| {
            anyhow!(
                "{} has no {}: a backup that did not finish (or not a backup); refusing to restore it",
                directory.display(),
                super::MANIFEST
            )
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", path.display()))?;
        let records = value["records"]
            .as_object()
            .cloned()
            .with_context(|| format!("{} lists no records", path.display()))?;
        Ok(Self { records, digests: value["sha256"].as_object().cloned() })
    }

    /// Every table the manifest names must have arrived with its count (and digest), and no
    /// other table may have records.
    fn check(&self, tallies: &[TableTally]) -> anyhow::Result<()> {
        for tally in tallies {
            let name = tally.table.name();
            let expected = self.records.get(name).and_then(serde_json::Value::as_u64).unwrap_or(0);
            if tally.records != expected {
                bail!(
                    "the backup's {name} table holds {} records, its manifest says {expected}",
                    tally.records
                );
            }
            if let Some(digests) = &self.digests {
                let expected = digests.get(name).and_then(serde_json::Value::as_str).unwrap_or_default();
                if hex(&tally.sha256) != expected {
                    bail!("the backup's {name} table does not match its manifest's digest");
                }
            }
        }
        for (name, count) in &self.records {
            let arrived = tallies.iter().any(|tally| tally.table.name() == name);
            if !arrived && count.as_u64().unwrap_or(0) > 0 {
                bail!("the backup's manifest lists {count} {name} records that are not in it");
            }
        }
        Ok(())
    }
}

/// Where a restore reads from.
enum Source {
    Directory(SledStore),
    Stream(Box<dyn Read>),
}

impl Source {
    fn open(from: &Path) -> anyhow::Result<Self> {
        if from == Path::new("-") {
            return Ok(Self::Stream(Box::new(std::io::stdin().lock())));
        }
        if from.is_dir() {
            if !from.join("db").exists() {
                bail!("{} is a directory without a store in it", from.display());
            }
            return Ok(Self::Directory(SledStore::open(from, None)?));
        }
        let file = std::fs::File::open(from).with_context(|| format!("cannot open {}", from.display()))?;
        Ok(Self::Stream(Box::new(file)))
    }

    fn walk(self, sink: &mut dyn FnMut(Item) -> Result<(), BackupError>) -> anyhow::Result<()> {
        match self {
            Self::Directory(store) => {
                backup::walk(&store, sink)?;
            }
            Self::Stream(mut reader) => {
                let mut decoder = Decoder::new();
                let mut buffer = vec![0; 64 * 1024];
                loop {
                    let read = reader.read(&mut buffer).context("reading the backup")?;
                    if read == 0 {
                        break;
                    }
                    decoder.push(&buffer[..read], sink)?;
                }
                decoder.finish()?;
            }
        }
        Ok(())
    }
}

/// What was in `store.path` before a restore, so a failed one can put it back.
enum Target {
    Absent,
    Empty,
    MovedAside(PathBuf),
}

impl Target {
    fn prepare(store_path: &Path, replace: bool) -> anyhow::Result<Self> {
        let entries = match std::fs::read_dir(store_path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Self::Absent),
            other => other.with_context(|| format!("cannot read {}", store_path.display()))?,
        };
        let mut holds_data = false;
        for entry in entries {
            // A stopped gateway may leave its backup token behind; it is not data.
            if entry?.file_name() != TOKEN_FILE {
                holds_data = true;
            }
        }
        if !holds_data {
            let _ = std::fs::remove_file(store_path.join(TOKEN_FILE));
            return Ok(Self::Empty);
        }
        if !store_path.join("db").exists() {
            bail!(
                "{} holds files but no store: empty it or point store.path elsewhere",
                store_path.display()
            );
        }
        if !replace {
            bail!(
                "{} already holds a store: stop the gateway and add --replace to move it aside (it is kept)",
                store_path.display()
            );
        }
        // sled refuses to open a store a running gateway holds.
        drop(
            SledStore::open(store_path, None)
                .map_err(|error| anyhow!("{error}\nstop the gateway before restoring"))?,
        );
        let mut aside = store_path.as_os_str().to_owned();
        aside.push(format!(".before-restore-{}", crate::support::clock::unix_now()));
        let aside = PathBuf::from(aside);
        std::fs::rename(store_path, &aside).with_context(|| {
            format!(
                "cannot move {} aside to {} (if it is a mount point, point store.path at a directory inside it)",
                store_path.display(),
                aside.display()
            )
        })?;
        Ok(Self::MovedAside(aside))
    }

    /// Removes what the restore wrote and puts back what was there.
    fn undo(&self, store_path: &Path) -> anyhow::Result<()> {
        let cleared = match self {
            Self::Empty => clear_directory(store_path),
            Self::Absent | Self::MovedAside(_) => std::fs::remove_dir_all(store_path),
        };
        cleared
            .or_else(|error| if error.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(error) })
            .with_context(|| format!("cannot remove the partial restore in {}", store_path.display()))?;
        if let Self::MovedAside(aside) = self {
            std::fs::rename(aside, store_path).with_context(|| {
                format!("cannot move {} back to {}", aside.display(), store_path.display())
            })?;
        }
        Ok(())
    }
}

pub(super) fn clear_directory(path: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(path)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}
