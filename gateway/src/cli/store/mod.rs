//! `toolgate store backup` and `toolgate store restore`. A backup is a consistent copy of the
//! store (`store::backup`), taken from the running gateway through its admin listener
//! (`admin/backup.rs`), or read directly when the gateway is stopped; it becomes a new store
//! directory whose audit chain is verified on the spot, or a stream on standard output. A
//! restore puts a backup into `store.path` while the gateway is stopped and verifies the chain
//! before it counts; on any failure the previous state is put back.

mod restore;

use crate::admin::backup::TOKEN_FILE;
use crate::app::audit_key;
use crate::audit::verify::{self, ChainError, Verified};
use crate::config::{Config, StoreLocation};
use crate::http::hex;
use crate::store::backup::{self, BackupError, Decoder, Importer, Item, TableTally};
use crate::store::{SledStore, Store, Table};
use anyhow::{Context as _, anyhow, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file beside a backup directory's store files that says what it holds.
pub const MANIFEST: &str = "toolgate-backup.json";
/// Longest silence of the admin listener during a backup.
const BACKUP_IDLE: Duration = Duration::from_secs(60);
/// A progress line every this many records.
const PROGRESS_EVERY: u64 = 100_000;

/// The store subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum StoreCommand {
    /// Copy the store: from the running gateway (its admin listener), or directly when stopped.
    Backup {
        /// The gateway configuration (store.path, server.admin_listen, audit.key).
        #[arg(long, short)]
        config: PathBuf,
        /// A new or empty directory (a verified store copy), or `-` (the stream on standard output).
        #[arg(long)]
        to: PathBuf,
        /// The admin listener as HOST:PORT (default: server.admin_listen, reached on loopback).
        #[arg(long)]
        admin: Option<String>,
    },
    /// Put a backup into store.path, with the gateway stopped; the audit chain must verify.
    Restore {
        /// The gateway configuration.
        #[arg(long, short)]
        config: PathBuf,
        /// A backup directory, a backup stream file, or `-` (standard input).
        #[arg(long)]
        from: PathBuf,
        /// Move a store already in store.path aside (kept as `<path>.before-restore-<time>`).
        #[arg(long)]
        replace: bool,
    },
}

/// Runs a store subcommand; returns whether it succeeded (a broken audit chain is a failure).
pub fn execute(command: StoreCommand) -> anyhow::Result<bool> {
    match command {
        StoreCommand::Backup { config, to, admin } => backup_to(&Config::load(&config)?, &to, admin),
        StoreCommand::Restore { config, from, replace } => {
            restore::restore(&Config::load(&config)?, &from, replace)
        }
    }
}

/// Where a backup's records come from: hands the store's walk to the sink, returns its name.
type Source<'a> =
    dyn FnMut(&mut dyn FnMut(Item) -> Result<(), BackupError>) -> anyhow::Result<&'static str> + 'a;

fn backup_to(config: &Config, to: &Path, admin: Option<String>) -> anyhow::Result<bool> {
    if let StoreLocation::Database(_) = &config.store {
        // A shared database is read directly, beside the running replicas: each table is read
        // in key order, the audit log first (see `store::backup`).
        let (owned, to) = (config.clone(), to.to_owned());
        return crate::cli::with_store(config, move |_, store| {
            write_backup(&owned, &to, &mut |sink| {
                backup::walk(store.as_ref(), sink)?;
                Ok("the database")
            })
        });
    }
    let store_path = store_directory(config)?;
    write_backup(config, to, &mut |sink| read_store(config, &store_path, admin.clone(), sink))
}

fn write_backup(config: &Config, to: &Path, read_store: &mut Source<'_>) -> anyhow::Result<bool> {
    let mut progress = Progress::new("backup");
    if to == Path::new("-") {
        let mut output = std::io::BufWriter::new(std::io::stdout().lock());
        output.write_all(backup::MAGIC)?;
        let mut buffer = Vec::new();
        let source = read_store(&mut |item| {
            progress.see(&item);
            buffer.clear();
            backup::encode(&item, &mut buffer);
            output
                .write_all(&buffer)
                .map_err(|error| BackupError::Aborted(format!("standard output: {error}")))
        })?;
        output.flush()?;
        eprintln!(
            "backup: {} records from {source} written to standard output (`toolgate store restore` verifies them)",
            progress.total
        );
        return Ok(true);
    }
    let existed = ensure_empty_directory(to)?;
    let copied = (|| {
        let copy = SledStore::create_new(to)?;
        let mut importer = Importer::new(&copy);
        let source = read_store(&mut |item| {
            progress.see(&item);
            importer.accept(item)
        })?;
        let counts = importer.finish()?;
        let verified = verify_chain(config, &copy)?;
        write_manifest(to, source, &counts, verified.as_ref().ok())?;
        anyhow::Ok((source, verified))
    })();
    let (source, verified) = match copied {
        Ok(copied) => copied,
        Err(error) => {
            // A failed backup leaves nothing that could pass for one.
            let _ = if existed { restore::clear_directory(to) } else { std::fs::remove_dir_all(to) };
            return Err(error);
        }
    };
    match verified {
        Ok(verified) => {
            eprintln!(
                "backup: {} records from {source} in {}; audit chain ok: {} records, {}..{}",
                progress.total,
                to.display(),
                verified.records,
                verified.first,
                verified.last
            );
            Ok(true)
        }
        Err(problem) => {
            eprintln!("backup: BROKEN audit chain in the copy at {}: {problem}", to.display());
            Ok(false)
        }
    }
}

/// Hands the store's backup walk to `sink`: from the running gateway when it answers, else
/// from the store files. Returns which it was.
fn read_store(
    config: &Config,
    store_path: &Path,
    admin: Option<String>,
    sink: &mut dyn FnMut(Item) -> Result<(), BackupError>,
) -> anyhow::Result<&'static str> {
    let token_path = store_path.join(TOKEN_FILE);
    let not_running = match std::fs::read_to_string(&token_path) {
        Ok(token) => {
            let authority = admin_authority(config, admin)?;
            match from_gateway(&authority, token.trim(), sink) {
                Ok(()) => return Ok("the running gateway"),
                Err(FromGateway::Unreachable(reason)) => reason,
                Err(FromGateway::Failed(error)) => {
                    return Err(error.context(format!("backup through the admin listener at {authority}")));
                }
            }
        }
        Err(error) => format!("no {} ({error})", token_path.display()),
    };
    if !store_path.join("db").exists() {
        bail!("there is no store in {} (store.path)", store_path.display());
    }
    // sled refuses to open a store another process holds: a gateway that runs but did not answer.
    let store = SledStore::open(store_path, None).map_err(|error| {
        anyhow!("{error}\nthe gateway seems to run, but its admin listener did not answer: {not_running}")
    })?;
    backup::walk(&store, sink)?;
    Ok("the stopped store")
}

enum FromGateway {
    Unreachable(String),
    Failed(anyhow::Error),
}

fn from_gateway(
    authority: &str,
    token: &str,
    sink: &mut dyn FnMut(Item) -> Result<(), BackupError>,
) -> Result<(), FromGateway> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| FromGateway::Failed(error.into()))?;
    let mut decoder = Decoder::new();
    let mut receive = |bytes: &[u8]| decoder.push(bytes, sink).map_err(|error| error.to_string());
    match runtime.block_on(crate::cli::admin_client::backup(authority, token, BACKUP_IDLE, &mut receive)) {
        Ok(()) => decoder.finish().map_err(|error| FromGateway::Failed(error.into())),
        Err(error) if error.is_unreachable() => Err(FromGateway::Unreachable(error.to_string())),
        Err(error) => Err(FromGateway::Failed(error.into())),
    }
}

/// `--admin`, else `server.admin_listen` with an unspecified address reached on loopback.
fn admin_authority(config: &Config, admin: Option<String>) -> anyhow::Result<String> {
    if let Some(admin) = admin {
        return Ok(admin);
    }
    let mut address = config.server.admin_listen;
    if address.port() == 0 {
        bail!("server.admin_listen has port 0: give the admin listener's address with --admin HOST:PORT");
    }
    if address.ip().is_unspecified() {
        address.set_ip(match address {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    Ok(address.to_string())
}

fn store_directory(config: &Config) -> anyhow::Result<PathBuf> {
    match &config.store {
        StoreLocation::Directory(path) => Ok(path.clone()),
        StoreLocation::Memory => bail!("store.path is \":memory:\": there is no store on disk"),
        StoreLocation::Database(_) => bail!(
            "store.url names a database: restore it with PostgreSQL's own tools (pg_restore of a pg_dump); \
             `toolgate store restore` fills an embedded store (store.path), which a backup of either can"
        ),
    }
}

/// Whether `path` exists (empty); an error when it holds anything.
fn ensure_empty_directory(path: &Path) -> anyhow::Result<bool> {
    match std::fs::read_dir(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(anyhow!("cannot use {} for the backup: {error}", path.display())),
        Ok(mut entries) => match entries.next() {
            None => Ok(true),
            Some(_) => bail!("{} is not empty: a backup goes into a new or empty directory", path.display()),
        },
    }
}

/// Verifies the audit chain of `store` with the configured (or the store's generated) key.
fn verify_chain(config: &Config, store: &dyn Store) -> anyhow::Result<Result<Verified, ChainError>> {
    let key = audit_key(config, store)?;
    Ok(verify::verify(store, &key)?)
}

fn write_manifest(
    directory: &Path,
    source: &str,
    tallies: &[TableTally],
    verified: Option<&Verified>,
) -> anyhow::Result<()> {
    let tables: serde_json::Map<String, serde_json::Value> =
        tallies.iter().map(|tally| (tally.table.name().to_owned(), tally.records.into())).collect();
    let digests: serde_json::Map<String, serde_json::Value> =
        tallies.iter().map(|tally| (tally.table.name().to_owned(), hex(&tally.sha256).into())).collect();
    let manifest = serde_json::json!({
        "format": 2,
        "sha256": digests,
        "created": humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        "toolgate": env!("CARGO_PKG_VERSION"),
        "source": source,
        "records": tables,
        "audit": verified.map(|verified| serde_json::json!({
            "records": verified.records, "first": verified.first, "last": verified.last,
        })),
    });
    std::fs::write(directory.join(MANIFEST), format!("{manifest:#}\n"))
        .with_context(|| format!("cannot write {}", directory.join(MANIFEST).display()))
}

/// Progress lines on standard error: one per table, and one every `PROGRESS_EVERY` records.
struct Progress {
    verb: &'static str,
    table: Option<Table>,
    in_table: u64,
    total: u64,
}

impl Progress {
    fn new(verb: &'static str) -> Self {
        Self { verb, table: None, in_table: 0, total: 0 }
    }

    fn see(&mut self, item: &Item) {
        match item {
            Item::Table(table) => {
                self.table_done();
                self.table = Some(*table);
                self.in_table = 0;
            }
            Item::Record(_) => {
                self.in_table += 1;
                self.total += 1;
                if self.in_table.is_multiple_of(PROGRESS_EVERY) {
                    eprintln!("{}: {} … {} records", self.verb, self.table_name(), self.in_table);
                }
            }
            Item::End { .. } => {
                self.table_done();
                self.table = None;
            }
        }
    }

    fn table_done(&self) {
        if self.table.is_some() {
            eprintln!("{}: {} {} records", self.verb, self.table_name(), self.in_table);
        }
    }

    fn table_name(&self) -> &'static str {
        self.table.map_or("-", Table::name)
    }
}
