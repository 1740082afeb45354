//! Secrets in the columns of Markdown, HTML and two-column CSV tables whose header names them.

use super::*;

#[test]
fn a_markdown_tables_column() {
    let table = "| user | password | role |\n|---|:---:|---|\n| ada | Xk9mQ2vL7pz | admin |\n| bob | Rt5#nW3qLp | ops |\n";
    assert_eq!(redacted(table), ["Xk9mQ2vL7pz", "Rt5#nW3qLp"]);
    assert_secret(
        "| Service | API key |\n| --- | --- |\n| billing | Xk9mQ2vL7pzAbCdEf |",
        "Xk9mQ2vL7pzAbCdEf",
    );
    assert_clean("| field | password |\n|---|---|\n| type | string |\n| required | yes |");
    assert_clean("| user | password |\n| ada | not a table without its delimiter row |");
}

#[test]
fn an_html_tables_column() {
    let table = "<table><tr><th>User</th><th>Password</th></tr>\n<tr><td>ada</td><td>Xk9mQ2vL7pz</td></tr>\n<tr><td>bob</td><td><code>Rt5#nW3qLp</code></td></tr></table>";
    assert_eq!(redacted(table), ["Xk9mQ2vL7pz"]);
    assert_secret(
        "<TR><TH>Host</TH><TH class=x>Token</TH></TR><TR><TD>db</TD><TD>Xk9mQ2vL7pzAbCdEf</TD></TR>",
        "Xk9mQ2vL7pzAbCdEf",
    );
    assert_clean("<tr><th>Field</th><th>Password</th></tr><tr><td>type</td><td>string</td></tr>");
    assert_clean("<tr><th>Password</th></tr><tr><th>Token</th></tr>");
}

#[test]
fn a_two_column_csv() {
    assert_secret("user,password\nada,Xk9mQ2vL7pz\n", "Xk9mQ2vL7pz");
    assert_clean("user,password\nada,Xk9mQ2vL7pz,extra, words here\n");
}

#[test]
fn a_header_like_row_reads_the_rows_below_it_itself() {
    let table = "user,password,role\nada,secret,admin\nbob,Xk9mQ2vL7pz,ops\n";
    assert_eq!(redacted(table), ["Xk9mQ2vL7pz"]);
}
