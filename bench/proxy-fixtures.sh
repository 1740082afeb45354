# shellcheck shell=bash
# Sourced by bench/load.sh (the proxy section), in its scope: writes the fixtures (a 20 KB page
# with tools, a context and a form; a small JSON document; a 50 MB page) into $TMP/www and the
# nginx configurations (the upstream; proxy_pass with and without an access log, sub_filter, and
# sub_filter with gzip) into $TMP. Needs TMP, BIG_BYTES, UP_PORT, PROXY_PORT, SUB_PORT, GZIP_PORT,
# LOG_PORT, GZIP_LEVEL and BIG_RATE; sets WWW, PAGE_BYTES, JSON_BYTES, BIG_FILE_BYTES.

# --- 2. fixtures ----------------------------------------------------------------------------
WWW="$TMP/www"
mkdir -p "$WWW"
html_head() {
    cat <<'EOF'
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Quarterly operations report · Intranet</title>
<link rel="stylesheet" href="/static/app.css">
<style>
body{font-family:system-ui,sans-serif;margin:0;color:#1d2330}
nav ul{list-style:none;display:flex;gap:1rem;padding:.5rem 1rem;background:#eef1f6}
table{border-collapse:collapse;width:100%;margin:1rem 0}
td,th{border:1px solid #d5dae3;padding:.25rem .5rem;text-align:left}
.muted{color:#6b7385}
</style>
<script src="/static/vendor.js" defer></script>
</head>
<body class="layout-wide">
<header><a class="brand" href="/">Intranet</a>
<form action="/search" method="get" role="search"><input type="search" name="q" aria-label="Search"><button>Search</button></form>
</header>
<nav aria-label="Main"><ul>
<li><a href="/">Home</a></li><li><a href="/tasks">Tasks</a></li><li><a href="/expenses">Expenses</a></li>
<li><a href="/people">People</a></li><li><a href="/reports" aria-current="page">Reports</a></li><li><a href="/help">Help</a></li>
</ul></nav>
<main id="content">
<h1>Quarterly operations report</h1>
<tool name="export_report" description="Export this report as CSV" return><prop name="region" type="number" description="Region number" required></prop></tool>
<tool name="delete_report" description="Delete this report"><prop name="confirm" type="boolean" required></prop></tool>
<context name="report_summary">Quarterly operations report: all regions, provisional figures.</context>
<form id="feedback" action="/feedback" method="post"><label>Feedback <input name="text"></label><button>Send</button></form>
EOF
}
html_section() { # n
    local n="$1" i
    printf '<section id="s%d">\n<h2>Region %d &mdash; summary</h2>\n' "$n" "$n"
    printf '<p>During the quarter the team in region %d closed most open tickets, reduced the median time to resolution and onboarded new colleagues. Details per site follow; figures are provisional until finance signs off &amp; the audit completes.</p>\n' "$n"
    printf '<table>\n<thead><tr><th>Site</th><th>Open</th><th>Closed</th><th>Median days</th><th>Owner</th></tr></thead>\n<tbody>\n'
    for i in 1 2 3 4 5 6; do
        printf '<tr><td><a href="/sites/%d-%d">Site %d-%d</a></td><td>%d</td><td>%d</td><td>%d.%d</td><td class="muted">team-%d@corp.example</td></tr>\n' \
            "$n" "$i" "$n" "$i" $(((n * 7 + i * 3) % 50)) $(((n * 13 + i * 11) % 400)) $((i % 9)) $((n % 10)) "$i"
    done
    printf '</tbody>\n</table>\n<p class="muted">Updated by the reporting job. <a href="/reports/%d/export.csv">Export CSV</a></p>\n</section>\n' "$n"
}
html_tail() {
    printf '</main>\n<footer><p class="muted">&copy; Corp &middot; <a href="/privacy">Privacy</a></p></footer>\n</body>\n</html>\n'
}
# head, then whole sections while the page stays within 20 KB, then the tail
tail_bytes=$(html_tail | wc -c)
html_head >"$WWW/page.html"
n=1
while :; do
    html_section "$n" >"$TMP/section.tmp"
    (( $(wc -c <"$WWW/page.html") + $(wc -c <"$TMP/section.tmp") + tail_bytes > 20480 )) && break
    cat "$TMP/section.tmp" >>"$WWW/page.html"
    n=$((n + 1))
done
html_tail >>"$WWW/page.html"
rm -f "$TMP/section.tmp"

printf '{"id":"7f3c2a9e","status":"ok","user":{"name":"Ada Lovelace","team":"analytics"},"items":[{"id":1,"title":"Review Q3 budget","done":false},{"id":2,"title":"Ship report","done":true}],"total":2,"page":1}\n' \
    >"$WWW/api.json"

# 50 MB page: the same head, then sections repeated until >= 50 MiB, then the tail.
{
    for n in $(seq 1 40); do html_section "$n"; done
} >"$TMP/block.tmp"
for _ in 1 2 3 4 5; do cat "$TMP/block.tmp" "$TMP/block.tmp" >"$TMP/block2.tmp"; mv "$TMP/block2.tmp" "$TMP/block.tmp"; done
{
    html_head
    size=0
    block_size=$(wc -c <"$TMP/block.tmp")
    while ((size < BIG_BYTES)); do cat "$TMP/block.tmp"; size=$((size + block_size)); done
    html_tail
} >"$WWW/big.html"
rm -f "$TMP/block.tmp"
chmod -R a+rX "$WWW"
PAGE_BYTES=$(wc -c <"$WWW/page.html")
JSON_BYTES=$(wc -c <"$WWW/api.json")
BIG_FILE_BYTES=$(wc -c <"$WWW/big.html")

# --- 3. nginx: upstream (own process) and the two proxies (another process) ----------------
USER_LINE=""
[[ "$(id -u)" == 0 ]] && USER_LINE="user root;"
nginx_common() { # name
    cat <<EOF
$USER_LINE
worker_processes auto;
daemon off;
pid $TMP/$1.pid;
error_log $TMP/$1-error.log warn;
events { worker_connections 4096; }
EOF
}
nginx_temp_paths() { # name
    cat <<EOF
    client_body_temp_path $TMP/$1-tmp/body;
    proxy_temp_path $TMP/$1-tmp/proxy;
    fastcgi_temp_path $TMP/$1-tmp/fastcgi;
    uwsgi_temp_path $TMP/$1-tmp/uwsgi;
    scgi_temp_path $TMP/$1-tmp/scgi;
EOF
}
mkdir -p "$TMP/upstream-tmp" "$TMP/proxy-tmp"
{
    nginx_common upstream
    cat <<EOF
http {
    access_log off;
$(nginx_temp_paths upstream)
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    types { text/html html; application/json json; }
    default_type application/octet-stream;
    charset utf-8;
    server {
        listen 127.0.0.1:$UP_PORT;
        root $WWW;
        location = /big.html { limit_rate $BIG_RATE; }
    }
}
EOF
} >"$TMP/upstream.conf"
proxy_common='proxy_pass http://backend;
            proxy_http_version 1.1;'
# The analogue of the gateway's script injection, shared by the plain and the gzip row; upstream
# bodies come uncompressed so sub_filter can see them.
sub_filter_common="$proxy_common
            proxy_set_header Connection \"\";
            proxy_set_header Accept-Encoding \"\";
            sub_filter '<head>' '<head><script src=\"/.toolgate/runtime.js\" defer></script>';
            sub_filter_once on;"
{
    nginx_common proxy
    cat <<EOF
http {
    access_log off;
$(nginx_temp_paths proxy)
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    upstream backend {
        server 127.0.0.1:$UP_PORT;
        keepalive 64;
        keepalive_requests 1000000;
    }
    # (b) plain proxy_pass
    server {
        listen 127.0.0.1:$PROXY_PORT;
        location / {
            $proxy_common
            proxy_set_header Connection "";
        }
    }
    # (b') plain proxy_pass with nginx's default access log (a line a request, written as it
    # comes): the analogue of the gateway's default RUST_LOG=info
    server {
        listen 127.0.0.1:$LOG_PORT;
        access_log $TMP/proxy-access.log;
        location / {
            $proxy_common
            proxy_set_header Connection "";
        }
    }
    # (c) proxy_pass + sub_filter: the analogue of the gateway's script injection
    server {
        listen 127.0.0.1:$SUB_PORT;
        location / {
            $sub_filter_common
        }
    }
    # (d) the same with gzip on the way out, at the gateway's gzip level (text/html is always in
    # gzip_types; the gateway's compression.min_size is 1024 too)
    server {
        listen 127.0.0.1:$GZIP_PORT;
        gzip on;
        gzip_comp_level $GZIP_LEVEL;
        gzip_min_length 1024;
        location / {
            $sub_filter_common
        }
    }
}
EOF
} >"$TMP/proxy.conf"

