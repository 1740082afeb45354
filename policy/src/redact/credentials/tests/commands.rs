//! Passwords on command lines (`cli`): each command's options and positional arguments, the
//! values a command prompts for, variables, and the options of other commands.

use super::*;

#[test]
fn passwords_given_as_options() {
    let cases = [
        ("mysql -u root -pS3cretPw9 -h db.internal", "S3cretPw9"),
        ("mysqldump --user=app -p'Tr0ub4dor&3' prod > dump.sql", "Tr0ub4dor&3"),
        ("$ mariadb -h db -u app --password=Xq7wPl2v app_db", "Xq7wPl2v"),
        ("sshpass -p 'hunter2Long!' ssh admin@host", "hunter2Long!"),
        ("redis-cli -h cache -a Xy7Kq2mZpL9w ping", "Xy7Kq2mZpL9w"),
        ("smbclient //fs/share -U bob%Passw0rd123", "Passw0rd123"),
        ("rpcclient -U 'CORP\\bob%Pa ss' dc01", "Pa ss"),
        ("docker login -u ci -p Dk7pQ2zLm9 registry.corp", "Dk7pQ2zLm9"),
        ("podman login --password Pm4nLq8z quay.corp", "Pm4nLq8z"),
        ("az login -u ada@corp.com -p Az9!kLm2q", "Az9!kLm2q"),
        ("openssl enc -aes-256-cbc -k MyS3cretKey99 -in a -out b", "MyS3cretKey99"),
        ("openssl pkcs12 -export -in c.pem -passout pass:Exp0rtPw -out c.p12", "Exp0rtPw"),
        ("zip -P Zz9secret99 archive.zip file", "Zz9secret99"),
        ("unzip -PZz9secret99 archive.zip", "Zz9secret99"),
        ("7z a -pQw3rty!98 secure.7z docs", "Qw3rty!98"),
        ("rar a -hpRr5Tt6Yy7 backup.rar docs", "Rr5Tt6Yy7"),
        ("keytool -list -storepass Ch4ngeM3Now -keystore ks.jks", "Ch4ngeM3Now"),
        ("mongodump -u admin -p Mg0Pass77 --authenticationDatabase admin", "Mg0Pass77"),
        ("ldapsearch -x -D cn=admin,dc=corp -w LdP4ss9x -b dc=corp", "LdP4ss9x"),
        ("sqlcmd -S db -U sa -P 'Sq1!Pass' -Q 'select 1'", "Sq1!Pass"),
        ("ipmitool -I lanplus -H bmc01 -U root -P Ipm1Pw88 power status", "Ipm1Pw88"),
        ("xfreerdp /v:ts01 /u:bob /p:Rdp!9x7Q", "Rdp!9x7Q"),
        ("nmcli dev wifi connect Office password Wif1Pass2024", "Wif1Pass2024"),
        ("ssh-keygen -t ed25519 -N 'Ph4se!x' -f key", "Ph4se!x"),
        ("mosquitto_pub -h mq -u dev -P Mq7tt!pw -t a -m b", "Mq7tt!pw"),
        ("snmpwalk -v3 -l authPriv -u mon -a SHA -A Auth9Pass -x AES -X $PRIV host", "Auth9Pass"),
        ("lftp -u deploy,Ft9pPass sftp://files", "Ft9pPass"),
        ("curl -u alice:W0nderland42 https://api.internal/v1", "W0nderland42"),
        ("http -a alice:Xk9mQ2vL7pz https://api.internal/v1", "Xk9mQ2vL7pz"),
        ("https -a svc:Xk9mQ2vL7pz POST api.internal/v1 name=x", "Xk9mQ2vL7pz"),
        ("xh -a 'svc:Xk9mQ2vL7pz' api.internal/v1", "Xk9mQ2vL7pz"),
        ("psexec \\\\host -u admin -p Xk9mQ2vL7pz cmd", "Xk9mQ2vL7pz"),
        ("PsExec64.exe \\\\10.0.0.5 -u CORP\\svc -p 'Xk9 mQ2' -s cmd", "Xk9 mQ2"),
        ("pslist \\\\host -u admin -p Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("az keyvault secret set --vault-name kv --name db --value Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("az keyvault secret set --name db --vault-name kv --value='Xk9mQ2vL7pz'", "Xk9mQ2vL7pz"),
        ("az login --service-principal -u http://app -p Xk9mQ2vL7pz --tenant t", "Xk9mQ2vL7pz"),
        ("az login --service-principal --username app --password=Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        // With bearer authentication HTTPie's `-a` holds the token whole.
        ("http -A bearer -a Xk9mQ2vL7pzR4tW https://api.internal/v1", "Xk9mQ2vL7pzR4tW"),
        ("xh --auth-type=bearer --auth 'Xk9mQ2vL7pzR4tW' api.internal/v1", "Xk9mQ2vL7pzR4tW"),
        ("http -a Xk9mQ2vL7pzR4tW --auth-type Bearer pie.dev/bearer", "Xk9mQ2vL7pzR4tW"),
        (
            "az vm create -g rg -n vm1 --image Ubuntu2204 --admin-username azureuser --admin-password 'Xk9!mQ2vL7pz'",
            "Xk9!mQ2vL7pz",
        ),
        (
            "az postgres flexible-server create --name pg --administrator-login dba --administrator-login-password Xk9mQ2vL7pz",
            "Xk9mQ2vL7pz",
        ),
    ];
    for (text, password) in cases {
        assert_secret(text, password);
    }
    // The command word glued to what a log, JSON text or a CSV cell puts before it.
    assert_secret("INFO request command=mysql -u app -p'Xg7fruenf%' shop status=400", "Xg7fruenf%");
    assert_secret(r#"{"command":"curl -u 'svc:Cs7snim2&' https://api.internal/v1"}"#, "Cs7snim2&");
    assert_secret("22732,[card 1],\"docker login -u ci -p 'piano-maple' registry\",x", "piano-maple");
    assert_secret("C:\\Tools\\mysql.exe -u app -pW1nP4ss", "W1nP4ss");
    // JSON text: a command logged inside a string.
    assert_secret(r#"{"cmd": "mysql -uroot -p\"S3cr3tPw\" prod\n"}"#, "S3cr3tPw");
    // A line continuation keeps the command going.
    assert_secret("mysql -h db \\\n  -u app -pW4rmL1ne app", "W4rmL1ne");
}

#[test]
fn passwords_given_as_arguments_and_on_standard_input() {
    let cases = [
        ("htpasswd -b /etc/nginx/.htpasswd admin Adm1nPass!", "Adm1nPass!"),
        ("htpasswd -nbB admin Adm1nPass!", "Adm1nPass!"),
        ("net use Z: \\\\fs\\share /user:CORP\\bob Passw0rd123", "Passw0rd123"),
        ("net use \\\\fs\\share Passw0rd123 /user:bob", "Passw0rd123"),
        ("net user svc_backup B4ckupPw! /add", "B4ckupPw!"),
        ("wpa_passphrase Office 'correct horse 42'", "correct horse 42"),
        ("echo 'S3cr3tV4lue!' | sudo -S apt update", "S3cr3tV4lue!"),
        ("echo Rg7tKn2pQ | docker login -u ci --password-stdin registry", "Rg7tKn2pQ"),
        ("echo 'svc:N3wPassw0rd' | chpasswd", "N3wPassw0rd"),
        ("echo -n Pw9x7Lm | passwd --stdin svc", "Pw9x7Lm"),
        ("echo 'REfq?mJ7p4%FdT' | sudo -S systemctl restart app", "REfq?mJ7p4%FdT"),
        ("rabbitmqctl add_user alice Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
        ("rabbitmqctl change_password alice 'Xk9 mQ2vL7pz'", "Xk9 mQ2vL7pz"),
        ("sudo rabbitmqctl -n rabbit@mq1 add_user svc Xk9mQ2vL7pz", "Xk9mQ2vL7pz"),
    ];
    for (text, password) in cases {
        assert_secret(text, password);
    }
}

#[test]
fn prompts_variables_and_other_options_are_not_passwords() {
    for text in [
        "mysql -u root -p -h db.internal",
        "mysql -u root -p app_db",
        "mysqldump -p --all-databases > all.sql",
        "docker run -p 8080:80 -P nginx",
        "docker push -p registry.corp/app",
        "redis-cli -a \"$REDIS_PASSWORD\" ping",
        "sshpass -p \"${SSHPASS}\" ssh host",
        "zip -r archive.zip dir",
        "7z a -p secure.7z docs",
        "rar a -p- backup.rar docs",
        "openssl pkcs12 -in c.p12 -passin env:P12_PASS",
        "openssl req -new -key server.key -passout file:pw.txt",
        "openssl enc -d -kfile key.txt -in a",
        "ssh-keygen -t ed25519 -N '' -f key",
        "net use Z: \\\\fs\\share * /user:bob",
        "net user bob /delete",
        "htpasswd -c /etc/nginx/.htpasswd admin",
        "echo hello | grep h",
        "echo \"$PASSWORD\" | sudo -S true",
        "echo done || sudo -S reboot",
        "curl -u ada https://x",
        "the net used by the team",
        "keytool -list -storepass:env STOREPASS -keystore ks.jks",
        "mongosh mongodb://db/app -p",
        "curl -b cookies.txt https://x",
        "curl -b /tmp/jar -c /tmp/jar https://x",
        "curl --cookie 'theme=dark; lang=en-US' https://x",
        "curl -b \"session=$SESSION\" https://x",
        "http -a alice https://x",
        "http -a \"alice:$PASS\" https://x",
        "http -A basic -a alice https://x",
        "http -A bearer -a \"$TOKEN\" https://x",
        "az vm create -g rg -n vm1 --admin-password \"$ADMIN_PW\"",
        "az vm create -g rg -n vm1 --generate-ssh-keys",
        "http -v https://x",
        "psexec \\\\host -u admin cmd",
        "psexec \\\\host -s -i cmd",
        "rabbitmqctl add_user alice",
        "rabbitmqctl list_users -p /vhost",
        "rabbitmqctl delete_user alice",
        "az keyvault secret show --vault-name kv --name db",
        "az appconfig kv set --name cfg --key color --value blue",
        "az keyvault secret set --vault-name kv --name db --value \"$DB_PASSWORD\"",
        "az keyvault secret set --vault-name kv --name db --file secret.txt",
    ] {
        assert_clean(text);
    }
    // Single quotes keep `$` literal: that is a password, not a variable.
    assert_secret("mysql -u app -p'$ecretPw9'", "$ecretPw9");
    // A cookie value is read as in a `Cookie:` header: the session cookie, not the preference.
    assert_secret(
        "curl -b 'session=9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://x",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    );
    assert_secret(
        "curl --cookie \"sid=9f8e7d6c5b4a39281706f5e4d3c2b1a0\" https://x",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    );
    assert_secret("curl --cookie=\"theme=dark; sid=Rk7fPq2LmZ9x\" https://x", "Rk7fPq2LmZ9x");
    assert_secret(
        "curl -H 'Cookie: sid=9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://x",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    );
    // `--auth` is also a key word, whose value is read whole: the user name goes with it.
    assert_secret("http --auth svc:Xk9mQ2vL7pz https://x", "svc:Xk9mQ2vL7pz");
    // One command's option does not read the next command's words.
    assert_clean("mysql -u app -p; echo -pS3cret");
}

#[test]
fn powershell_and_password_options_of_any_command() {
    assert_secret("Invoke-Sqlcmd -ServerInstance db01 -Username sa -Password 'Xk8mQ2pLz'", "Xk8mQ2pLz");
    assert_secret("influx -username admin -password Xk8mQ2pLz", "Xk8mQ2pLz");
    assert_secret(
        "New-LocalUser svc -Password (ConvertTo-SecureString \"Xk8mQ2pLz\" -AsPlainText -Force)",
        "Xk8mQ2pLz",
    );
    assert_secret("ConvertTo-SecureString -String 'Xk8mQ2pLz' -AsPlainText -Force", "Xk8mQ2pLz");
    assert_clean("Get-Credential -Password $pw");
    assert_clean("ConvertTo-SecureString $encrypted -Key $key");
}

#[test]
fn sql_passwords_and_calls_named_for_a_secret() {
    assert_secret("CREATE USER app IDENTIFIED BY 'Xk8mQ2pLz';", "Xk8mQ2pLz");
    assert_secret("GRANT ALL ON *.* TO 'app'@'%' IDENTIFIED BY 'Xk8mQ2pLz';", "Xk8mQ2pLz");
    assert_secret("alter user scott identified by tiger2024;", "tiger2024");
    assert_secret("SET PASSWORD FOR 'app'@'%' = PASSWORD('Xk8mQ2pLz');", "Xk8mQ2pLz");
    assert_secret("ds.setPassword(\"Xk8#mQ2p!Lz\");", "Xk8#mQ2p!Lz");
    assert_secret("Driver={ODBC Driver 18};Uid=app;Pwd={Rf4$t;6yH};", "Rf4$t;6yH");
    assert_clean("user.check_password(request.POST[\"pw\"])");
    assert_clean("CREATE USER app IDENTIFIED BY $1;");
}

#[test]
fn oracle_logons() {
    assert_secret("sqlplus scott/Xk8mQ2pLz@orcl", "Xk8mQ2pLz");
    assert_secret("$ sqlplus -s app/Xk8mQ2pLz@//db.example.com:1521/svc @report.sql", "Xk8mQ2pLz");
    assert_secret("sqlplus \"sys/Xk8mQ2pLz@prod as sysdba\"", "Xk8mQ2pLz");
    assert_secret("sqlplus sys/Xk8mQ2pLz as sysdba", "Xk8mQ2pLz");
    assert_secret("expdp system/Xk8mQ2pLz@db schemas=hr directory=dp dumpfile=hr.dmp", "Xk8mQ2pLz");
    assert_secret("sqlldr userid=scott/Xk8mQ2pLz control=load/emp.ctl", "Xk8mQ2pLz");
    assert_eq!(redacted("rman target sys/Xk8mQ2pLz@prim auxiliary sys/Rt5nW3@stby"), ["Xk8mQ2pLz", "Rt5nW3"]);
    assert_clean("sqlplus / as sysdba");
    assert_clean("sqlplus /nolog");
    assert_clean("sqlplus -s @scripts/report.sql");
    assert_clean("sqlldr control=load/emp.ctl log=logs/emp.log");
    // Oracle's JDBC URLs carry the same logon.
    assert_secret("url=jdbc:oracle:thin:scott/Xk8mQ2pLz@db01:1521/ORCL", "Xk8mQ2pLz");
    assert_secret("\"jdbc:oracle:oci:app/Xk8m@Q2pLz\"", "Xk8m");
    assert_clean("jdbc:oracle:thin:@db01:1521/ORCL");
    assert_clean("jdbc:oracle:thin:@//db01:1521/svc");
}

#[test]
fn platform_clients_subcommands_and_their_tokens() {
    assert_secret("oc login -u admin -p Xk8mQ2pLz https://api.ocp:6443", "Xk8mQ2pLz");
    assert_secret("gh secret set DB_PASS --body Xk8mQ2pLz --repo corp/app", "Xk8mQ2pLz");
    assert_secret("gh secret set DB_PASS -b'Xk8mQ2pLz'", "Xk8mQ2pLz");
    let token = join(&["s.", &chars(230, 24, BASE62)]);
    assert_secret(&format!("$ vault login {token}"), &token);
    assert_secret("openssl passwd -6 -salt Qw8e Xk8mQ2pLz", "Xk8mQ2pLz");
    assert_secret("useradd -p $(openssl passwd -1 Xk8mQ2pLz) bob", "Xk8mQ2pLz");
    for text in [
        "vault login -method=oidc",
        "vault login -method=userpass username=ada",
        "oc login https://api.ocp:6443 --token=$OC_TOKEN",
        "gh secret set DB_PASS < secret.txt",
        "openssl passwd -stdin",
        "gh secret list",
    ] {
        assert_clean(text);
    }
}

#[test]
fn redis_auth_at_the_prompt_and_on_the_command_line() {
    assert_secret("127.0.0.1:6379> AUTH Xk8mQ2pLz", "Xk8mQ2pLz");
    assert_secret("cache.internal:6379> auth default Xk8mQ2pLz\nOK", "Xk8mQ2pLz");
    assert_secret("redis> AUTH Xk8mQ2pLz", "Xk8mQ2pLz");
    assert_secret("redis-cli -h cache -p 6379 AUTH app Xk8mQ2pLz", "Xk8mQ2pLz");
    assert_clean("127.0.0.1:6379> AUTH");
    assert_clean("See the AUTH command in the manual.");
    assert_clean("redis-cli -h cache PING");
}
