//! The commands known to take a password on their command line, and how each writes it: the
//! options that carry one ([`Reads`], [`Holds`]) and the positional arguments that are one.
//! Adding a command is adding an entry to [`COMMANDS`].

/// How an option's value is written.
#[derive(Clone, Copy)]
pub(super) enum Reads {
    /// In the same word only: `-pS3cret`; the option alone makes the command prompt (MySQL, 7-Zip,
    /// RAR, FreeRDP's `/p:`).
    Glued,
    /// The next word; glued too for a one-letter option (`-PS3cret`) and after `=` for a
    /// `--long` one.
    Next,
    /// The next word only (OpenSSL's `-k`: `-kfile` is another option).
    Separate,
}

/// What the value holds.
#[derive(Clone, Copy)]
pub(super) enum Holds {
    Password,
    /// `user` + this separator + the password (`user:pw`, `user%pw`, `user,pw`); without the
    /// separator the command prompts.
    UserThen(u8),
    /// As [`Holds::UserThen`], but the whole value is a token when the command line asks for
    /// bearer authentication (HTTPie's `-A bearer -a <token>`, `--auth-type=bearer`).
    UserOrToken(u8),
    /// OpenSSL's pass phrase argument: only `pass:…` holds one (`env:`, `file:`, `fd:`, `stdin`
    /// say where it is kept).
    Source,
    /// Cookies, `name=value` pairs split by `;` (curl's `-b`); a word without `=` names the file
    /// they are read from.
    Cookies,
}

pub(super) struct Flag {
    pub(super) name: &'static str,
    pub(super) reads: Reads,
    pub(super) holds: Holds,
}

const fn next(name: &'static str) -> Flag {
    Flag { name, reads: Reads::Next, holds: Holds::Password }
}

const fn glued(name: &'static str) -> Flag {
    Flag { name, reads: Reads::Glued, holds: Holds::Password }
}

const fn user(name: &'static str, separator: u8) -> Flag {
    Flag { name, reads: Reads::Next, holds: Holds::UserThen(separator) }
}

const fn user_or_token(name: &'static str, separator: u8) -> Flag {
    Flag { name, reads: Reads::Next, holds: Holds::UserOrToken(separator) }
}

const fn source(name: &'static str) -> Flag {
    Flag { name, reads: Reads::Separate, holds: Holds::Source }
}

const fn cookies(name: &'static str) -> Flag {
    Flag { name, reads: Reads::Next, holds: Holds::Cookies }
}

/// A positional argument that is a password.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Positional {
    None,
    /// `htpasswd -b[c…] file user password`, `htpasswd -nb user password`.
    Htpasswd,
    /// `net use [X:] \\host\share password [/user:…]`, `net user name password [/add]`.
    Net,
    /// `wpa_passphrase ssid passphrase`.
    Second,
    /// `echo password | sudo -S …` and the other commands that read a password on standard input.
    Echo,
    /// PowerShell's `ConvertTo-SecureString 'password' -AsPlainText` (or `-String 'password'`).
    PlainText,
    /// The second positional argument after one of these subcommands: `rabbitmqctl add_user
    /// name password`.
    AfterVerb(&'static [&'static str]),
    /// Oracle's logon `user/password[@connect]`, a positional word or `userid=`'s value:
    /// `sqlplus scott/…@orcl`, `rman target sys/…@db`, `sqlldr userid=scott/…`.
    Logon,
    /// The arguments of Redis' `AUTH` command: `redis-cli -h cache AUTH [user] password`.
    RedisAuth,
    /// A token, the first positional argument after one of these subcommands that is not a
    /// `name=value` pair: `vault login <token>` (`vault login -method=userpass username=…
    /// password=…` names its fields, and the assignments read those).
    Token(&'static [&'static str]),
    /// The last positional argument after one of these subcommands: `openssl passwd -6 [-salt
    /// …] <password>` (before it, an option's value may stand).
    LastAfterVerb(&'static [&'static str]),
}

pub(super) struct Command {
    names: &'static [&'static str],
    /// Words that must follow the command, one after the other, for its options to mean a
    /// password (`docker login`, `az keyvault secret set`). A command may have an entry for each.
    pub(super) verb: Option<&'static str>,
    pub(super) flags: &'static [Flag],
    pub(super) positional: Positional,
}

const fn command(names: &'static [&'static str], flags: &'static [Flag]) -> Command {
    Command { names, verb: None, flags, positional: Positional::None }
}

const MYSQL: &[&str] = &[
    "mysql",
    "mysqldump",
    "mysqladmin",
    "mysqlimport",
    "mysqlcheck",
    "mysqlshow",
    "mysqlpump",
    "mysqlslap",
    "mysqlbinlog",
    "mariadb",
    "mariadb-dump",
    "mariadb-admin",
    "mariadb-import",
    "mariadb-check",
    "mariadb-show",
    "mariadb-slap",
    "mariadb-binlog",
];
const MONGO: &[&str] = &[
    "mongo",
    "mongosh",
    "mongodump",
    "mongorestore",
    "mongoexport",
    "mongoimport",
    "mongostat",
    "mongotop",
    "mongofiles",
];
const LDAP: &[&str] = &[
    "ldapsearch",
    "ldapmodify",
    "ldapadd",
    "ldapdelete",
    "ldapwhoami",
    "ldapcompare",
    "ldapmodrdn",
    "ldapexop",
];
const SNMP: &[&str] =
    &["snmpwalk", "snmpbulkwalk", "snmpget", "snmpgetnext", "snmpbulkget", "snmpset", "snmptrap"];
const FREERDP: &[&str] = &["xfreerdp", "xfreerdp3", "wlfreerdp", "wlfreerdp3", "sdl-freerdp", "sdl-freerdp3"];
const SAMBA: &[&str] = &["smbclient", "rpcclient", "smbcacls", "smbget", "smbtree", "smbcquotas"];
const REGISTRY_LOGIN: &[&str] = &["docker", "podman", "buildah", "skopeo", "nerdctl", "oras"];
const AZ: &[&str] = &["az"];
/// HTTPie and xh, its clone.
const HTTPIE: &[&str] = &["http", "https", "xh", "xhs"];
/// Sysinternals' remote tools, which take an account's `-u` and `-p`.
const SYSINTERNALS: &[&str] = &[
    "psexec",
    "psexec64",
    "psfile",
    "psgetsid",
    "psinfo",
    "pskill",
    "pslist",
    "psloggedon",
    "psloglist",
    "pspasswd",
    "psservice",
    "psshutdown",
    "pssuspend",
];

/// Oracle's tools that take a logon: SQL*Plus, Data Pump and the older export and import,
/// SQL*Loader, Recovery Manager, the Data Guard broker.
const ORACLE: &[&str] = &["sqlplus", "expdp", "impdp", "exp", "imp", "sqlldr", "rman", "dgmgrl"];

/// Every command known to take a password on its command line.
const COMMANDS: &[Command] = &[
    command(MYSQL, &[glued("-p"), glued("--password")]),
    command(
        &["curl"],
        &[
            user("-u", b':'),
            user("--user", b':'),
            user("-U", b':'),
            user("--proxy-user", b':'),
            cookies("-b"),
            cookies("--cookie"),
        ],
    ),
    command(HTTPIE, &[user_or_token("-a", b':'), user_or_token("--auth", b':')]),
    command(SYSINTERNALS, &[next("-p")]),
    command(&["sshpass"], &[next("-p")]),
    Command {
        names: &["redis-cli"],
        verb: None,
        flags: &[next("-a"), next("--pass")],
        positional: Positional::RedisAuth,
    },
    command(SAMBA, &[user("-U", b'%'), user("--user", b'%')]),
    Command {
        names: REGISTRY_LOGIN,
        verb: Some("login"),
        flags: &[next("-p"), next("--password")],
        positional: Positional::None,
    },
    Command {
        names: AZ,
        verb: Some("login"),
        flags: &[next("-p"), next("--password")],
        positional: Positional::None,
    },
    // OpenShift's client signs in like `docker login`.
    Command {
        names: &["oc"],
        verb: Some("login"),
        flags: &[next("-p"), next("--password")],
        positional: Positional::None,
    },
    // A repository's, environment's or organization's secret, set from the command line.
    Command {
        names: &["gh"],
        verb: Some("secret set"),
        flags: &[next("-b"), next("--body")],
        positional: Positional::None,
    },
    Command { names: &["vault"], verb: Some("login"), flags: &[], positional: Positional::Token(&["login"]) },
    Command {
        names: &["openssl"],
        verb: Some("passwd"),
        flags: &[],
        positional: Positional::LastAfterVerb(&["passwd"]),
    },
    Command {
        names: AZ,
        verb: Some("keyvault secret set"),
        flags: &[next("--value")],
        positional: Positional::None,
    },
    // A machine's or a database server's first administrator: `az vm create`, `az vmss create`,
    // `az sql server create`, `az postgres flexible-server create`, `az mysql … create`.
    command(AZ, &[next("--admin-password"), next("--administrator-login-password")]),
    command(
        &["openssl"],
        &[
            source("-pass"),
            source("-passin"),
            source("-passout"),
            source("-password"),
            Flag { name: "-k", reads: Reads::Separate, holds: Holds::Password },
        ],
    ),
    command(&["zip", "unzip"], &[next("-P"), next("--password")]),
    command(&["7z", "7za", "7zr", "7zz"], &[glued("-p")]),
    command(&["rar", "unrar"], &[glued("-p"), glued("-hp")]),
    command(
        &["keytool", "jarsigner"],
        &[
            next("-storepass"),
            next("-keypass"),
            next("-srcstorepass"),
            next("-deststorepass"),
            next("-srckeypass"),
            next("-destkeypass"),
            next("-new"),
        ],
    ),
    command(MONGO, &[next("-p"), next("--password")]),
    command(LDAP, &[next("-w")]),
    command(&["ldappasswd"], &[next("-w"), next("-s"), next("-a")]),
    command(&["sqlcmd", "bcp", "osql"], &[next("-P")]),
    command(&["ipmitool"], &[next("-P")]),
    command(FREERDP, &[glued("/p:"), glued("/password:")]),
    command(&["rdesktop"], &[next("-p")]),
    command(&["nmcli"], &[next("password"), next("wifi-sec.psk"), next("802-11-wireless-security.psk")]),
    command(&["ssh-keygen"], &[next("-N"), next("-P")]),
    command(&["mosquitto_pub", "mosquitto_sub", "mosquitto_rr"], &[next("-P"), next("--pw")]),
    command(SNMP, &[next("-A"), next("-X")]),
    command(&["lftp"], &[user("-u", b',')]),
    Command { names: &["htpasswd"], verb: None, flags: &[], positional: Positional::Htpasswd },
    Command { names: &["net"], verb: None, flags: &[], positional: Positional::Net },
    Command { names: &["wpa_passphrase"], verb: None, flags: &[], positional: Positional::Second },
    Command { names: &["echo", "printf"], verb: None, flags: &[], positional: Positional::Echo },
    Command { names: &["convertto-securestring"], verb: None, flags: &[], positional: Positional::PlainText },
    Command { names: ORACLE, verb: None, flags: &[], positional: Positional::Logon },
    Command {
        names: &["rabbitmqctl"],
        verb: None,
        flags: &[],
        positional: Positional::AfterVerb(&["add_user", "change_password", "authenticate_user"]),
    },
];

/// Options that carry a password whatever the command (compared without case): PowerShell's
/// `-Password` (`Invoke-Sqlcmd`, `New-ADUser … -AccountPassword`), and the single-dash long options
/// of other tools (`influx -password`, `x11vnc -passwd`).
pub(super) const PASSWORD_OPTIONS: [&str; 4] = ["-password", "-passwd", "-accountpassword", "-pass"];

/// Options of a command reading its password on standard input (`echo pw | sudo -S …`).
pub(super) const STDIN_OPTIONS: [&str; 4] = ["--password-stdin", "--stdin", "--with-token", "stdin"];

/// The command a word names: a table name, written alone or as a path (`/usr/bin/mysql`,
/// `C:\Tools\mysql.exe`), after whatever else the word holds before it: a prompt, a quote, the
/// key of a log field or JSON member (`command=mysql`, `"cmd":"mysql`), a CSV cell's comma.
pub(super) fn lookup(word: &str) -> Option<&'static Command> {
    let name = command_name(word);
    COMMANDS.iter().find(|command| command.names.contains(&name.as_str()))
}

/// Commands whose target may be a remote written `user:password@host` (`git clone
/// admin:…@build:repo.git`, `ssh`, `psql`), besides the database clients of [`COMMANDS`].
const REMOTES: [&str; 22] = [
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "sshpass",
    "autossh",
    "mosh",
    "git",
    "svn",
    "hg",
    "telnet",
    "ftp",
    "lftp",
    "curl",
    "wget",
    "rclone",
    "psql",
    "pg_dump",
    "pg_dumpall",
    "pg_restore",
    "pgcli",
    "mycli",
];

/// Whether a word names a command whose target may carry a remote's user and password: one of
/// [`REMOTES`], or a MySQL, MongoDB or Redis client.
pub(super) fn is_remote(word: &str) -> bool {
    let name = command_name(word);
    let name = name.as_str();
    REMOTES.contains(&name) || MYSQL.contains(&name) || MONGO.contains(&name) || name == "redis-cli"
}

/// The command's name a word holds, in lower case: written alone or as a path, after a prompt, a
/// quote or a field's key (see [`lookup`]).
fn command_name(word: &str) -> String {
    let path =
        word.rsplit(|c: char| !(c.is_ascii_alphanumeric() || "_.-/\\".contains(c))).next().unwrap_or(word);
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.strip_suffix(".exe").unwrap_or(name).to_ascii_lowercase()
}

/// The entries of the command `command` is the first entry of (one for each verb).
pub(super) fn variants(command: &'static Command) -> impl Iterator<Item = &'static Command> {
    COMMANDS.iter().filter(move |other| other.names == command.names)
}
