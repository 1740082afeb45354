//! Secrets in source code: string literals passed as a call's password, name and value pairs,
//! `auth` tuples.

use super::*;

#[test]
fn a_literal_at_the_password_place_of_a_known_call() {
    let pw = "Xk8#mQ2p!Lz";
    for call in [
        "server.login(\"ada@example.com\", \"{pw}\")",
        "smtp.login('ada', '{pw}')",
        "ftp.login(user='ada', passwd='{pw}')",
        "new NetworkCredential(\"ada\", \"{pw}\", \"CORP\")",
        "new UsernamePasswordCredentials(\"ada\", \"{pw}\")",
        "new PasswordAuthentication(\"ada\", \"{pw}\".toCharArray())",
        "requests.get(url, auth=HTTPBasicAuth('ada', '{pw}'))",
        "req.SetBasicAuth(\"ada\", \"{pw}\")",
        "client.get(url).basic_auth(\"ada\", Some(\"{pw}\"))",
        "superagent.get(url).auth('ada', '{pw}')",
        "conn.simple_bind_s('cn=admin,dc=example,dc=com', '{pw}')",
        "smtp.PlainAuth(\"\", \"ada\", \"{pw}\", \"smtp.example.com\")",
        "DriverManager.getConnection(\"jdbc:postgresql://db/app\", \"app\", \"{pw}\")",
        "$db = new mysqli('localhost', 'app', '{pw}', 'shop');",
        "$link = mysqli_connect(\"db\", \"app\", \"{pw}\");",
        "$pdo = new PDO($dsn, 'app', '{pw}', $options);",
        "ldap_bind($ds, \"cn=admin,dc=example,dc=com\", \"{pw}\");",
        "ftp_login($conn, 'ada', '{pw}');",
        "login(\n    \"ada\",\n    \"{pw}\",\n)",
        "ds.setPassword(r\"{pw}\")",
        "var c = new NetworkCredential(@\"CORP\\ada\", @\"{pw}\");",
    ] {
        assert_secret(&call.replace("{pw}", pw), pw);
    }
}

#[test]
fn a_tuple_under_an_auth_name() {
    assert_secret("requests.get(url, auth=('admin', 'Xk8mQ2pLz'))", "Xk8mQ2pLz");
    assert_secret("session.auth = (\"admin\", \"Xk8mQ2pLz\")", "Xk8mQ2pLz");
    assert_secret("auth: ['admin', 'Xk8mQ2pLz']", "Xk8mQ2pLz");
    assert_clean("requests.get(url, auth=(user, password))");
    assert_clean("auth = (username, os.environ['PW'])");
}

#[test]
fn a_secrets_name_and_its_value_as_a_pair() {
    assert_secret("define('DB_PASSWORD', 'Xk8mQ2pLz');", "Xk8mQ2pLz");
    assert_secret("define( 'AUTH_KEY', 'g8#Qz!v;L2@kP0^mX7&w' );", "g8#Qz!v;L2@kP0^mX7&w");
    assert_secret("os.Setenv(\"API_TOKEN\", \"Xk8mQ2pLzAbCdEf\")", "Xk8mQ2pLzAbCdEf");
    assert_secret("props.setProperty(\"mail.smtp.password\", \"Xk8mQ2pLz\");", "Xk8mQ2pLz");
    assert_secret("config = dict([(\"password\", \"Xk8mQ2pLz\")])", "Xk8mQ2pLz");
}

#[test]
fn code_without_a_literal_secret_stays() {
    assert_clean("smtp.login(user, password)");
    assert_clean("smtp.login(os.environ['SMTP_USER'], os.environ['SMTP_PASSWORD'])");
    assert_clean("new NetworkCredential(\"ada\", securePassword)");
    assert_clean("login(\"ada\")");
    assert_clean("autologin(\"ada\", \"Xk8mQ2pLz\")");
    assert_clean("DriverManager.getConnection(url, user, pass)");
    assert_clean("define( 'AUTH_KEY', 'put your unique phrase here' );");
    assert_clean("os.getenv(\"DB_PASSWORD\", \"\")");
    assert_clean("os.environ.get(\"API_TOKEN\", \"changeme\")");
    assert_clean("rename_column(\"password\", \"password_hash\")");
    assert_clean("smtp.login(\"ada\", \"********\")");
}
