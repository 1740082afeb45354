//! A real PostgreSQL server for one test: `initdb` into a temporary directory, `postgres` on a
//! free loopback port (as `nobody` when the tests run as root, since PostgreSQL refuses root),
//! password authentication over TCP, and everything stopped and removed when the value drops.
//! The server comes from Debian's `postgresql` package (the test command installs it).

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The superuser the cluster is created with, and its password.
pub const USER: &str = "toolgate";
pub const PASSWORD: &str = "cluster-test-password";

/// A running PostgreSQL server; stopped and deleted on drop.
pub struct Cluster {
    server: Child,
    port: u16,
    data: PathBuf,
    options: Vec<String>,
    identity: Option<(u32, u32)>,
    dir: tempfile::TempDir,
}

/// Where Debian puts the server's programs (the newest version), else `PATH`.
fn bin(program: &str) -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| entries.filter_map(|entry| entry.ok().map(|entry| entry.path().join("bin"))).collect())
        .unwrap_or_default();
    versions.sort_by_key(|path| {
        path.parent()
            .and_then(|version| version.file_name())
            .and_then(|name| name.to_str())
            .and_then(|name| name.parse::<u32>().ok())
            .unwrap_or(0)
    });
    versions
        .into_iter()
        .rev()
        .map(|dir| dir.join(program))
        .find(|path| path.exists())
        .unwrap_or_else(|| PathBuf::from(program))
}

/// The uid and gid to run the server as: `nobody` when this process is root.
fn server_identity() -> Option<(u32, u32)> {
    let me = std::fs::metadata("/proc/self").expect("/proc/self").uid();
    (me == 0).then_some((65534, 65534))
}

fn as_server_user(command: &mut Command, identity: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = identity {
        command.uid(uid).gid(gid);
    }
    command
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("address").port()
}

/// Starts `postgres` on `data`.
fn spawn(data: &Path, port: u16, options: &[String], identity: Option<(u32, u32)>, dir: &Path) -> Child {
    as_server_user(&mut Command::new(bin("postgres")), identity)
        .arg("-D")
        .arg(data)
        .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1"])
        .args(options)
        .arg("-c")
        .arg(format!("unix_socket_directories={}", dir.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("postgres starts")
}

/// A server certificate and its key, both PEM.
pub struct ServerTls {
    pub cert_pem: String,
    pub key_pem: String,
}

impl Cluster {
    /// Creates and starts a cluster without TLS.
    pub fn start() -> Self {
        Self::start_with(None)
    }

    /// Creates and starts a cluster, serving TLS with `tls` when given; panics with the server's
    /// own words when it cannot.
    pub fn start_with(tls: Option<&ServerTls>) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let identity = server_identity();
        if let Some((uid, gid)) = identity {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).expect("chown the cluster directory");
        }
        let data = dir.path().join("data");
        let password_file = dir.path().join("password");
        std::fs::write(&password_file, PASSWORD).expect("password file");
        if let Some((uid, gid)) = identity {
            std::os::unix::fs::chown(&password_file, Some(uid), Some(gid)).expect("chown the password file");
        }
        let initdb = as_server_user(&mut Command::new(bin("initdb")), identity)
            .args(["--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8", "--no-sync"])
            .arg(format!("--username={USER}"))
            .arg(format!("--pwfile={}", password_file.display()))
            .arg("-D")
            .arg(&data)
            .output()
            .expect("initdb runs (Debian package postgresql)");
        assert!(initdb.status.success(), "initdb failed: {}", String::from_utf8_lossy(&initdb.stderr));
        let mut tls_options = Vec::new();
        if let Some(tls) = tls {
            let (cert, key) = (dir.path().join("server.crt"), dir.path().join("server.key"));
            std::fs::write(&cert, &tls.cert_pem).expect("server certificate");
            std::fs::write(&key, &tls.key_pem).expect("server key");
            // PostgreSQL refuses a key others may read.
            std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .expect("key mode");
            if let Some((uid, gid)) = identity {
                for file in [&cert, &key] {
                    std::os::unix::fs::chown(file, Some(uid), Some(gid)).expect("chown the TLS files");
                }
            }
            tls_options = vec![
                "-c".to_owned(),
                "ssl=on".to_owned(),
                "-c".to_owned(),
                format!("ssl_cert_file={}", cert.display()),
                "-c".to_owned(),
                format!("ssl_key_file={}", key.display()),
            ];
        }
        let port = free_port();
        let server = spawn(&data, port, &tls_options, identity, dir.path());
        let cluster = Self { server, port, data, options: tls_options, identity, dir };
        cluster.wait_ready(&cluster.data);
        cluster
    }

    /// Stops the server (a fast shutdown: clients are disconnected) and waits until it is gone.
    pub fn stop(&mut self) {
        let _ = Command::new("kill").args(["-INT", &self.server.id().to_string()]).status();
        let _ = self.server.wait();
    }

    /// Starts the stopped server again, on the same port with the same data.
    pub fn restart(&mut self) {
        self.server = spawn(&self.data, self.port, &self.options, self.identity, self.dir.path());
        self.wait_ready(&self.data);
    }

    fn wait_ready(&self, data: &Path) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
                && data.join("postmaster.pid").exists()
            {
                // Accepting connections is not yet accepting logins; give the startup a moment.
                std::thread::sleep(Duration::from_millis(200));
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("PostgreSQL did not listen on 127.0.0.1:{} within 30 s", self.port);
    }

    /// The URL of `database` (no password in it, as the gateway requires).
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{database}", self.port)
    }

    /// A plain client, for setting things up behind the gateway's back.
    pub async fn client(&self, database: &str) -> tokio_postgres::Client {
        let mut config = tokio_postgres::Config::new();
        config.host("127.0.0.1").port(self.port).user(USER).dbname(database).password(PASSWORD);
        let (client, connection) =
            config.connect(tokio_postgres::NoTls).await.expect("connect to the test cluster");
        tokio::spawn(connection);
        client
    }

    /// A fresh database on this cluster.
    pub async fn database(&self, name: &str) -> String {
        let admin = self.client("postgres").await;
        admin.batch_execute(&format!("CREATE DATABASE {name}")).await.expect("create database");
        name.to_owned()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SIGQUIT: PostgreSQL's immediate shutdown, which takes its backends down with it (a
        // SIGKILL would leave them to notice on their own). The directory is deleted next.
        let _ = Command::new("kill").args(["-QUIT", &self.server.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(self.server.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}
