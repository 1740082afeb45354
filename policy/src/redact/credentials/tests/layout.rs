//! Values set apart from their names by markup or a line break, and network devices'
//! configuration lines.

use super::*;

#[test]
fn a_value_in_the_next_cell_or_inside_inline_tags() {
    let pw = "Xk9#mQ2vL7pz";
    for markup in [
        "<tr><th>Password</th><td>{pw}</td></tr>",
        "<tr><td>Password:</td><td> {pw} </td></tr>",
        "<dl><dt>Password</dt>\n  <dd><code>{pw}</code></dd></dl>",
        "<label>Password</label> <span class=\"mono\">{pw}</span>",
        "Password: <code>{pw}</code>",
        "<b>Password:</b> {pw}",
        "<p><strong>Password</strong>: <kbd>{pw}</kbd></p>",
    ] {
        assert_secret(&markup.replace("{pw}", pw), pw);
    }
    assert_secret("<dt>API token</dt><dd><code>Xk9mQ2vL7pzAbCdEf</code></dd>", "Xk9mQ2vL7pzAbCdEf");
}

#[test]
fn markup_that_names_a_type_or_a_rule_stays() {
    assert_clean("<td>password</td><td>string</td><td>The user's password</td>");
    assert_clean("<th>Password</th><td>Required</td>");
    assert_clean("<p>Your password</p><p>must be 12 characters</p>");
    assert_clean("<th>Password</th><td>********</td>");
    assert_clean("password = <your password>");
    assert_clean("<th>Token</th><td><a href=\"/tokens\">Manage</a></td>");
}

#[test]
fn a_value_alone_on_the_line_after_its_label() {
    assert_secret("Password:\n  Xk9#mQ2vL7pz", "Xk9#mQ2vL7pz");
    assert_secret("Hi Ada,\nyour password:\r\nXk9#mQ2vL7pz\r\nRegards", "Xk9#mQ2vL7pz");
    assert_secret("db:\n  password:\n    Xk9mQ2vL7pz\n  host: db", "Xk9mQ2vL7pz");
    assert_secret("\"password\":\n  \"Xk9mQ2vL7pz\"", "Xk9mQ2vL7pz");
    assert_clean("password:\n  value: Xk9mQ2vL7pz");
    assert_clean("password:\n  - one\n  - two");
    assert_clean("Password:\n\nThanks for signing up");
    assert_clean("Password:\nRequired");
    assert_clean("PASSWORD=\nHOST=db");
    // After a `:`, an `=` is part of the value; after an empty `NAME=`, it starts the next line's.
    assert_secret(
        "Your new password:\n  QUU=GdzPXns%XmdRJ*mHDuH=-A6TV\n\nThe",
        "QUU=GdzPXns%XmdRJ*mHDuH=-A6TV",
    );
    assert_secret("password:\r\n  Xk9mQ2vL7pz==\r\n", "Xk9mQ2vL7pz==");
    assert_clean("DB_PASSWORD= \nNODE_ENV=production");
    assert_clean("Password:\n<input type=password name=pw>");
}

#[test]
fn a_quote_doubled_inside_single_quotes() {
    assert_secret("password: 'it''s Xk9mQ2vL7pz'", "it''s Xk9mQ2vL7pz");
    assert_secret("ALTER LOGIN app WITH PASSWORD = 'Xk9''mQ2vL7pz';", "Xk9''mQ2vL7pz");
}

#[test]
fn network_device_configurations() {
    for (line, secret) in [
        ("enable secret 0 Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("enable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0", "$1$mERr$hx5rVt7rPNoS4wqbXKX7m0"),
        ("enable password cisco123", "cisco123"),
        ("username admin privilege 15 password 0 Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("username bob password 7 0822455D0A16", "0822455D0A16"),
        ("snmp-server community Xk9mQ2vL7pz RO", "Xk9mQ2vL7pz"),
        ("snmp-server community public RW 10", "public"),
        ("tacacs-server host 10.1.1.1 key 7 0822455D0A16", "0822455D0A16"),
        ("radius-server key 0 Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("crypto isakmp key Xk9mQ2vL7pz address 10.0.0.1", "Xk9mQ2vL7pz"),
        ("key chain ospf\n key 1\n  key-string 7 0822455D0A16", "0822455D0A16"),
        ("interface Gi0/1\n ip ospf message-digest-key 1 md5 Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("router bgp 65000\n neighbor 10.0.0.2 password Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("dot11 ssid corp\n wpa-psk ascii 0 Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("line vty 0 4\n password 7 0822455D0A16\n login", "0822455D0A16"),
    ] {
        let found = redacted(line);
        assert!(found.contains(&secret), "{secret:?} in {line:?}: {found:?}");
        assert!(found.iter().all(|span| !span.contains("10.")), "only the secret in {line:?}: {found:?}");
    }
}

#[test]
fn prose_about_device_passwords_stays() {
    assert_clean("The password 12 characters long is fine");
    assert_clean("password 7 characters minimum");
    assert_clean("key 1\nkey 2");
    assert_clean("snmp-server community <string> RO");
    assert_clean("Set the enable secret on every router.");
}

#[test]
fn a_go_mysql_dsn() {
    assert_secret("dsn := \"app:Xk9mQ2vL7pz@tcp(db:3306)/shop\"", "Xk9mQ2vL7pz");
    assert_secret("sql.Open(\"mysql\", \"root:Xk9:mQ2@vL7@unix(/tmp/mysql.sock)/test\")", "Xk9:mQ2@vL7");
    assert_clean("sql.Open(\"mysql\", \"root@tcp(db)/test\")");
    assert_clean("dsn: user:password@tcp(localhost:3306)/dbname");
}

#[test]
fn a_wifi_qr_codes_password() {
    assert_secret("WIFI:T:WPA;S:CorpGuest;P:Xk9mQ2vL7pz;;", "Xk9mQ2vL7pz");
    assert_secret("WIFI:S:Corp\\;Guest;P:Xk9\\;mQ2vL7pz;T:WPA;H:false;;", "Xk9\\;mQ2vL7pz");
    assert_secret("<img alt=\"WIFI:T:WPA;P:Xk9mQ2vL7pz;S:Lab;;\">", "Xk9mQ2vL7pz");
    assert_clean("WIFI:T:nopass;S:CorpGuest;;");
    assert_clean("WIFI:T:WPA;S:CorpGuest;P:;;");
    assert_clean("SHOW_WIFI: true");
}

#[test]
fn a_device_line_quoted_in_a_sentence() {
    assert_secret("Please use config tacacs-server host 10.1.1.1 key Welcome2023* for this.", "Welcome2023*");
    assert_secret(
        "Ada (config: username admin privilege 15 password 0 piano_maple_horse) joined",
        "piano_maple_horse",
    );
    assert_clean("Remember to enable password protection on every switch.");
    assert_clean("The username and password fields are required.");
}

#[test]
fn a_value_on_the_next_line_of_json_text() {
    assert_secret(r#"{"body": "Your new password:\n  river_river_piano\n"}"#, "river_river_piano");
    assert_secret(r#"{"body": "Password:\r\nXk9#mQ2vL7pz"}"#, "Xk9#mQ2vL7pz");
    assert_clean(r#"{"body": "Password:\n\nThanks"}"#);
    assert_clean(r#"{"body": "Password:\nRequired\n"}"#);
}

#[test]
fn device_lines_and_calls_inside_json_text_and_logs() {
    assert_secret(
        "Merci d'utiliser config enable secret 0 orange_river_maple_battery pour cette demande.",
        "orange_river_maple_battery",
    );
    assert_secret(
        "config.load config=username admin privilege 15 password 0 horse.staple status=500",
        "horse.staple",
    );
    assert_secret(
        r#"{"snippet": "check server.login(\"ops@example.com\", \"horse-orange-tiger\")?"}"#,
        "horse-orange-tiger",
    );
    assert_clean("You can enable password login in the settings.");
}

#[test]
fn a_distinct_device_name_anywhere_on_a_line() {
    assert_secret("CONFIG=\"dot11 ssid corp\\n wpa-psk ascii 0 cPtku7%_Ca_^ZsM\"", "cPtku7%_Ca_^ZsM");
    assert_secret("As discussed, key-string 7 0822455D0A16 will be used.", "0822455D0A16");
}

#[test]
fn pgpass_lines() {
    assert_secret("db.internal:5432:shop:app:Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    assert_secret("$ cat ~/.pgpass\n*:*:*:replicator:Rt5\\:nW3 q\n", "Rt5\\:nW3 q");
    assert_secret("  localhost:5432:*:postgres:Xk9mQ2vL7pz\r\n", "Xk9mQ2vL7pz");
    assert_clean("db.internal:5432:shop:app:");
    assert_clean("connect to db.internal:5432:shop now");
    assert_clean("a:*:b:c");
    assert_clean("db.internal:5432:shop:app:changeme");
    // The ports of a second cluster, PgBouncer and managed services.
    assert_secret("db.internal:6432:shop:app:Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    assert_secret("replica:5433:*:alice:Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    assert_secret("db-do-user-1.db.ondigitalocean.com:25060:defaultdb:doadmin:Xk9mQ2vL7pz", "Xk9mQ2vL7pz");
    assert_clean("listening on 0.0.0.0:6432: ready");
    // Any port, and a `*` in any of the first four fields.
    for (text, secret) in [
        ("redshift.corp.example:5439:analytics:etl:Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("db.internal:5555:shop:app:hunter2", "hunter2"),
        ("$ cat ~/.pgpass\nreplica:15432:*:alice:Rt5\\:nW3\n", "Rt5\\:nW3"),
        ("*:5439:*:*:Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("db.internal:*:*:app:Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("*:*:shop:*:s3cret", "s3cret"),
        ("  10.0.0.5:1:db:u:pw-2024\r\n", "pw-2024"),
    ] {
        assert_secret(text, secret);
    }
    for text in [
        "2024-05-01 12:30:45 INFO ready",
        "12:30:45:00:start",
        "Meeting 10:30:room:4:bring laptops",
        "db.internal:5439:shop:app:",
        "db.internal:123456:shop:app:Xk9mQ2vL7pz",
        "host:5439:a b:app:Xk9mQ2vL7pz",
        "fe80:1:2:3:4",
        "db.internal:5439:shop:app:changeme",
    ] {
        assert_clean(text);
    }
}

#[test]
fn user_and_password_before_a_host_without_a_scheme() {
    assert_secret("ssh admin:Xk9mQ2vL7pz@10.0.0.5", "Xk9mQ2vL7pz");
    assert_secret("connect with root:Hunter2024!@db01.corp.example:5432 then", "Hunter2024!");
    assert_secret("(svc_backup:Tr0ub4dor&3x@localhost)", "Tr0ub4dor&3x");
    assert_secret("proxy=ops:Qz7vLm2pX9@[2001:db8::1]:3128", "Qz7vLm2pX9");
    assert_secret("psql app:Xk9mQ2vL7pz@db01:5432/shop", "Xk9mQ2vL7pz");
    assert_secret("admin:Xk9mQ2vL7pz@build", "Xk9mQ2vL7pz");
    for text in [
        "mailto:jane@corp.example",
        "Re:jane@corp.example",
        "write to jane@corp.example",
        "user:password@host.example",
        "alice:changeme@10.0.0.5",
        "git@github.com:org/repo.git",
        "at 10:30@home",
        "ratio 3:1@2x scale",
    ] {
        assert_clean(text);
    }
    // The more the text says it is a remote, the less the password must look like one: a chosen
    // one before a host of a known shape, any one before a port or a path, or after a command
    // that connects to a remote.
    for (text, secret) in [
        ("ssh admin:hunter2@10.0.0.5", "hunter2"),
        ("git clone admin:s3cret@build.internal:repo.git", "s3cret"),
        ("$ git clone admin:pw@build:repo.git", "pw"),
        ("mysql -h db admin:pw@host", "pw"),
        ("rsync -av ./dist deploy:Kettle@web01:/srv/www", "Kettle"),
        ("url = ci:letmein@git.corp.example:platform/api.git", "letmein"),
        ("connect app:pw@db01.corp.example/shop", "pw"),
        ("run psql 'app:pw@db01' and check", "pw"),
        // A password a person chose, after a user name, before a bare host name.
        ("use alice:hunter2@build to sign in", "hunter2"),
    ] {
        assert_secret(text, secret);
    }
    for text in [
        // Look-alikes of a remote: a port or a time before the `@`, an image's digest after it.
        "localhost:8080@v2",
        "redis.internal:6379@cluster.local:6379",
        "ssh to db01 at 10:30@home",
        "docker pull node:20-alpine@sha256:4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac",
        "git clone git@github.com:org/repo.git",
        "ssh -L 8080:localhost:80 ada@bastion.corp.example",
        // Weak words without a remote or a command: an address's local part, a label.
        "Re:jane@corp.example",
        "note:remember@home",
        "admin:pw@build",
        "2fa:hunter2@build",
        "git clone admin:changeme@build.internal:repo.git",
    ] {
        assert_clean(text);
    }
    // A URL's userinfo and a Go DSN are read by their own recognizers, once.
    assert_eq!(redacted("https://admin:Xk9mQ2vL7pz@10.0.0.5/x"), ["Xk9mQ2vL7pz"]);
    assert_eq!(redacted("app:Xk9mQ2vL7pz@tcp(db:3306)/shop"), ["Xk9mQ2vL7pz"]);
}
