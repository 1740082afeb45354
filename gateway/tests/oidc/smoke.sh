#!/usr/bin/env bash
# Smoke test for the oidc-provider fixture: starts provider.mjs, drives a real
# authorization-code + PKCE flow with curl and a cookie jar, exchanges the code
# with client_secret_basic, checks ID-token claims and signature, rotates keys,
# refreshes, shortens TTLs, drops old keys, logs out. Needs: node, curl.
# Usage: tests/oidc/smoke.sh   (run `npm ci` in tests/oidc first)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$(mktemp -d)"
JAR="$WORK/cookies.txt"
CLIENT_ID=toolgate-smoke
CLIENT_SECRET='s3cret:with/odd+chars'
REDIRECT_URI=http://127.0.0.1:9/oidc/callback
POST_LOGOUT_URI=http://127.0.0.1:9/logged-out
PASS=0
FAIL=0
PROVIDER_PID=

cleanup() {
  if [[ -n "$PROVIDER_PID" ]]; then kill "$PROVIDER_PID" 2>/dev/null || true; wait "$PROVIDER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

ok() { PASS=$((PASS + 1)); echo "ok   - $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
check() { # check DESCRIPTION COMMAND...
  local desc=$1; shift
  if "$@"; then ok "$desc"; else bad "$desc"; fi
}
die() { echo "FATAL: $*" >&2; echo "--- provider stderr ---" >&2; cat "$WORK/stderr" >&2 || true; echo "$PASS passed, $((FAIL + 1)) failed"; exit 1; }

# js CODE ARGS... : evaluate JS with the ARGS available as array `a`; prints the result.
# (statements allowed: the value of the last expression statement is printed)
js() { node -e "const a=process.argv.slice(2); const r=eval(process.argv[1]); if (r !== undefined) console.log(typeof r === 'string' ? r : JSON.stringify(r));" -- "$@"; }
json_get() { js 'JSON.parse(a[0])[a[1]] ?? ""' "$1" "$2"; }
jwt_part() { js 'JSON.parse(Buffer.from(a[0].split(".")[a[1]], "base64url"))' "$1" "$2"; }
# verify_jwt JWT JWKS_JSON -> prints "valid" when the signature verifies with the key named by its kid
verify_jwt() {
  js '(() => { const c = require("node:crypto"); const [h, p, s] = a[0].split(".");
    const hdr = JSON.parse(Buffer.from(h, "base64url")); const jwk = JSON.parse(a[1]).keys.find((k) => k.kid === hdr.kid);
    if (!jwk) return "no-key"; const key = c.createPublicKey({ key: jwk, format: "jwk" });
    const alg = { ES256: ["sha256", { key, dsaEncoding: "ieee-p1363" }], RS256: ["sha256", key] }[hdr.alg];
    return c.verify(alg[0], Buffer.from(`${h}.${p}`), alg[1], Buffer.from(s, "base64url")) ? "valid" : "invalid"; })()' "$1" "$2"
}

# --- start -------------------------------------------------------------------
[[ -d "$HERE/node_modules/oidc-provider" ]] || die "run 'npm ci' in $HERE first"
CLIENT_ID="$CLIENT_ID" CLIENT_SECRET="$CLIENT_SECRET" REDIRECT_URIS="$REDIRECT_URI,http://127.0.0.1:9/other" \
  POST_LOGOUT_REDIRECT_URIS="$POST_LOGOUT_URI" node "$HERE/provider.mjs" >"$WORK/stdout" 2>"$WORK/stderr" &
PROVIDER_PID=$!
for _ in $(seq 1 100); do
  grep -q '^oidc-provider listening on ' "$WORK/stdout" 2>/dev/null && break
  kill -0 "$PROVIDER_PID" 2>/dev/null || die "provider exited early"
  sleep 0.1
done
LINE="$(head -n1 "$WORK/stdout")"
[[ "$LINE" =~ ^oidc-provider\ listening\ on\ (http://127\.0\.0\.1:[0-9]+)$ ]] || die "unexpected stdout: $LINE"
ISSUER="${BASH_REMATCH[1]}"
echo "# issuer $ISSUER"

C() { curl -sS --max-time 10 "$@"; }
check "GET /test/health is 200" [ "$(C -o /dev/null -w '%{http_code}' "$ISSUER/test/health")" = 200 ]

DISCOVERY="$(C "$ISSUER/.well-known/openid-configuration")"
check "discovery issuer matches" [ "$(json_get "$DISCOVERY" issuer)" = "$ISSUER" ]
TOKEN_EP="$(json_get "$DISCOVERY" token_endpoint)"
AUTH_EP="$(json_get "$DISCOVERY" authorization_endpoint)"
USERINFO_EP="$(json_get "$DISCOVERY" userinfo_endpoint)"
REVOKE_EP="$(json_get "$DISCOVERY" revocation_endpoint)"
END_SESSION_EP="$(json_get "$DISCOVERY" end_session_endpoint)"
JWKS_URI="$(json_get "$DISCOVERY" jwks_uri)"
check "discovery advertises ES256 and RS256 id tokens, S256 PKCE, revocation, end_session" \
  [ "$(js 'const d=JSON.parse(a[0]); d.id_token_signing_alg_values_supported.includes("ES256") && d.id_token_signing_alg_values_supported.includes("RS256") && d.code_challenge_methods_supported.join()==="S256" && !!d.revocation_endpoint && !!d.end_session_endpoint' "$DISCOVERY")" = true ]
JWKS="$(C "$JWKS_URI")"
KID1="$(js 'JSON.parse(a[0]).keys[0].kid' "$JWKS")"
check "jwks has an EC P-256 key first and an RSA key" \
  [ "$(js 'const k=JSON.parse(a[0]).keys; k[0].kty==="EC" && k[0].crv==="P-256" && k.some((x)=>x.kty==="RSA") && k.every((x)=>!x.d)' "$JWKS")" = true ]

# --- authorization code flow with PKCE -----------------------------------------
# authorize USER -> sets CODE, CALLBACK, HOPS, VERIFIER, NONCE, STATE
authorize() {
  local user=$1
  C -o /dev/null -X POST --data "$user" "$ISSUER/test/next-user"
  VERIFIER="$(js 'require("node:crypto").randomBytes(32).toString("base64url")')"
  CHALLENGE="$(js 'require("node:crypto").createHash("sha256").update(a[0]).digest("base64url")' "$VERIFIER")"
  NONCE="n-$RANDOM$RANDOM"; STATE="s-$RANDOM$RANDOM"
  local url="$AUTH_EP?$(js 'new URLSearchParams({client_id:a[0],response_type:"code",redirect_uri:a[1],scope:"openid email profile groups",state:a[2],nonce:a[3],code_challenge:a[4],code_challenge_method:"S256"}).toString()' "$CLIENT_ID" "$REDIRECT_URI" "$STATE" "$NONCE" "$CHALLENGE")"
  HOPS=""; CALLBACK=""; CODE=""
  for _ in $(seq 1 10); do
    local loc
    loc="$(C -b "$JAR" -c "$JAR" -o /dev/null -w '%{redirect_url}' "$url")"
    [[ -n "$loc" ]] || { echo "# no redirect from $url: $(C -b "$JAR" "$url")" >&2; return 1; }
    if [[ "$loc" == "$REDIRECT_URI"* ]]; then CALLBACK="$loc"; break; fi
    HOPS="$HOPS $(js 'new URL(a[0]).pathname.split("/").slice(0,2).join("/")' "$loc")"
    if [[ -n "${ROTATE_MIDFLOW:-}" ]]; then C -o /dev/null -X POST "$ISSUER/test/rotate-keys"; fi
    url="$loc"
  done
  CODE="$(js 'new URL(a[0]).searchParams.get("code") ?? ""' "$CALLBACK")"
  [[ -n "$CODE" ]]
}

# token_request FORM... -> prints the token response body (and sets TOKEN_STATUS)
token_request() {
  local out
  out="$(C -u "$(js 'encodeURIComponent(a[0])+":"+encodeURIComponent(a[1])' "$CLIENT_ID" "$CLIENT_SECRET")" \
    -w '\n%{http_code}' "$@" "$TOKEN_EP")"
  TOKEN_STATUS="${out##*$'\n'}"
  TOKEN_BODY="${out%$'\n'*}"
}

authorize bob || die "authorization flow did not reach the redirect_uri"
ok "authorize -> interaction -> resume -> redirect_uri with code (hops:$HOPS)"
check "callback carries state and iss" [ "$(js 'const u=new URL(a[0]).searchParams; u.get("state")===a[1] && u.get("iss")===a[2]' "$CALLBACK" "$STATE" "$ISSUER")" = true ]

token_request --data-urlencode grant_type=authorization_code --data-urlencode "code=$CODE" \
  --data-urlencode "redirect_uri=$REDIRECT_URI" --data-urlencode "code_verifier=$VERIFIER"
check "code exchange with client_secret_basic is 200" [ "$TOKEN_STATUS" = 200 ]
ID_TOKEN="$(json_get "$TOKEN_BODY" id_token)"
FIRST_ID_TOKEN="$ID_TOKEN"
ACCESS_TOKEN="$(json_get "$TOKEN_BODY" access_token)"
REFRESH_TOKEN="$(json_get "$TOKEN_BODY" refresh_token)"
check "token response has a refresh_token" [ -n "$REFRESH_TOKEN" ]
HDR="$(jwt_part "$ID_TOKEN" 0)"; PAYLOAD="$(jwt_part "$ID_TOKEN" 1)"
echo "# id_token header $HDR"
echo "# id_token payload $PAYLOAD"
check "id_token is ES256 with kid $KID1" [ "$(js 'const h=JSON.parse(a[0]); h.alg==="ES256" && h.kid===a[1]' "$HDR" "$KID1")" = true ]
check "id_token signature verifies against JWKS" [ "$(verify_jwt "$ID_TOKEN" "$JWKS")" = valid ]
check "id_token claims: sub, email, email_verified, name, groups, nonce, iss, aud" \
  [ "$(js 'const p=JSON.parse(a[0]); p.sub==="bob" && p.email==="bob@example.test" && p.email_verified===true && p.name==="Bob Brown" && JSON.stringify(p.groups)===JSON.stringify(["finance","finance-approvers"]) && p.nonce===a[1] && p.iss===a[2] && p.aud===a[3]' "$PAYLOAD" "$NONCE" "$ISSUER" "$CLIENT_ID")" = true ]
check "access token works at userinfo" [ "$(json_get "$(C -H "Authorization: Bearer $ACCESS_TOKEN" "$USERINFO_EP")" sub)" = bob ]
SAVED_BODY="$TOKEN_BODY"
token_request --data-urlencode grant_type=authorization_code --data-urlencode "code=$CODE" \
  --data-urlencode "redirect_uri=$REDIRECT_URI" --data-urlencode "code_verifier=$VERIFIER"
check "code reuse is rejected (invalid_grant; OP revokes the grant)" [ "$TOKEN_STATUS|$(json_get "$TOKEN_BODY" error)" = "400|invalid_grant" ]
TOKEN_BODY="$SAVED_BODY"

# PKCE is mandatory
NOPKCE_LOC="$(C -o /dev/null -w '%{redirect_url}' "$AUTH_EP?client_id=$CLIENT_ID&response_type=code&scope=openid&redirect_uri=$(js 'encodeURIComponent(a[0])' "$REDIRECT_URI")")"
check "authorize without code_challenge is rejected" [ "$(js 'new URL(a[0]).searchParams.get("error")' "$NOPKCE_LOC")" = invalid_request ]

# --- other users -----------------------------------------------------------------
authorize dave || die "second flow failed"
token_request --data-urlencode grant_type=authorization_code --data-urlencode "code=$CODE" \
  --data-urlencode "redirect_uri=$REDIRECT_URI" --data-urlencode "code_verifier=$VERIFIER"
check "next-user switch with same cookie jar logs in dave (empty groups)" \
  [ "$(js 'const p=JSON.parse(Buffer.from(JSON.parse(a[0]).id_token.split(".")[1],"base64url")); p.sub==="dave" && Array.isArray(p.groups) && p.groups.length===0' "$TOKEN_BODY")" = true ]
authorize bob || die "third flow failed"
token_request --data-urlencode grant_type=authorization_code --data-urlencode "code=$CODE" \
  --data-urlencode "redirect_uri=$REDIRECT_URI" --data-urlencode "code_verifier=$VERIFIER"
REFRESH_TOKEN="$(json_get "$TOKEN_BODY" refresh_token)"
ID_TOKEN="$(json_get "$TOKEN_BODY" id_token)"

# --- key rotation ------------------------------------------------------------------
ROT="$(C -X POST "$ISSUER/test/rotate-keys")"
KID2="$(json_get "$ROT" signingKid)"
JWKS="$(C "$JWKS_URI")"
check "after rotate-keys the new kid $KID2 is first in JWKS" [ "$(js 'JSON.parse(a[0]).keys[0].kid' "$JWKS")" = "$KID2" ]
check "old kid $KID1 is still published" [ "$(js 'JSON.parse(a[0]).keys.some((k)=>k.kid===a[1])' "$JWKS" "$KID1")" = true ]
check "pre-rotation id_token still verifies against the new JWKS" [ "$(verify_jwt "$ID_TOKEN" "$JWKS")" = valid ]

token_request --data-urlencode grant_type=refresh_token --data-urlencode "refresh_token=$REFRESH_TOKEN"
check "refresh_token grant (pre-rotation token) is 200" [ "$TOKEN_STATUS" = 200 ]
NEW_RT="$(json_get "$TOKEN_BODY" refresh_token)"
check "refresh token rotated" [ -n "$NEW_RT" -a "$NEW_RT" != "$REFRESH_TOKEN" ]
ID_TOKEN="$(json_get "$TOKEN_BODY" id_token)"
check "refreshed id_token signed with new kid and verifies" \
  [ "$(js 'JSON.parse(a[0]).kid' "$(jwt_part "$ID_TOKEN" 0)")|$(verify_jwt "$ID_TOKEN" "$JWKS")" = "$KID2|valid" ]
check "refreshed id_token still carries groups/email" \
  [ "$(js 'const p=JSON.parse(a[0]); p.sub==="bob" && p.email==="bob@example.test" && p.groups.includes("finance-approvers")' "$(jwt_part "$ID_TOKEN" 1)")" = true ]
REFRESH_TOKEN="$NEW_RT"

authorize bob || die "post-rotation flow failed"
check "OP session and grant survive rotation (no interaction hop)" [ -z "$HOPS" ]
token_request --data-urlencode grant_type=authorization_code --data-urlencode "code=$CODE" \
  --data-urlencode "redirect_uri=$REDIRECT_URI" --data-urlencode "code_verifier=$VERIFIER"
check "post-rotation code exchange is 200" [ "$TOKEN_STATUS" = 200 ]
REVOKE_AT="$(json_get "$TOKEN_BODY" access_token)"

# rotation in the middle of a flow (after every hop) and under concurrent load
( for _ in $(seq 1 60); do C -o /dev/null -w '%{http_code}\n' "$JWKS_URI"; C -o /dev/null -w '%{http_code}\n' "$ISSUER/.well-known/openid-configuration"; done >"$WORK/load" ) &
LOAD_PID=$!
JAR="$WORK/cookies2.txt" ROTATE_MIDFLOW=1 authorize carol || die "flow with mid-flow rotations failed"
token_request --data-urlencode grant_type=authorization_code --data-urlencode "code=$CODE" \
  --data-urlencode "redirect_uri=$REDIRECT_URI" --data-urlencode "code_verifier=$VERIFIER"
wait "$LOAD_PID"
check "carol's flow survives a rotation after each of its hops ($HOPS); code exchange 200" [ "$TOKEN_STATUS|$(echo $HOPS | wc -w)" = "200|4" ]
check "requests during rotations all answered 200 ($(wc -l <"$WORK/load") requests)" [ "$(sort -u "$WORK/load")" = 200 ]
JWKS="$(C "$JWKS_URI")"
KID3="$(js 'JSON.parse(a[0]).keys[0].kid' "$JWKS")"
MID_ID="$(json_get "$TOKEN_BODY" id_token)"
check "its id_token (sub carol, groups hr-staff) is signed with the newest kid $KID3 and verifies" \
  [ "$(js 'JSON.parse(a[0]).kid' "$(jwt_part "$MID_ID" 0)")|$(verify_jwt "$MID_ID" "$JWKS")|$(js 'const p=JSON.parse(a[0]); p.sub+":"+p.groups.join()' "$(jwt_part "$MID_ID" 1)")|$(js 'JSON.parse(a[0]).keys.filter((k)=>k.kty==="EC").length' "$JWKS")" = "$KID3|valid|carol:hr-staff|6" ]

# --- ttl ---------------------------------------------------------------------------
C -o /dev/null -X POST -H 'content-type: application/json' --data '{"IdToken": 7, "AccessToken": 5}' "$ISSUER/test/ttl"
token_request --data-urlencode grant_type=refresh_token --data-urlencode "refresh_token=$REFRESH_TOKEN"
check "after /test/ttl the refreshed tokens have short lifetimes" \
  [ "$(js 'const b=JSON.parse(a[0]); const p=JSON.parse(Buffer.from(b.id_token.split(".")[1],"base64url")); `${b.expires_in}/${p.exp-p.iat}`' "$TOKEN_BODY")" = "5/7" ]
REFRESH_TOKEN="$(json_get "$TOKEN_BODY" refresh_token)"
ID_TOKEN="$(json_get "$TOKEN_BODY" id_token)"
check "bad ttl body is 400" [ "$(C -o /dev/null -w '%{http_code}' -X POST --data '{"Nope": 1}' "$ISSUER/test/ttl")" = 400 ]

# --- revocation ---------------------------------------------------------------------
check "revocation endpoint accepts an access token (200) and userinfo then rejects it" \
  [ "$(C -o /dev/null -w '%{http_code}' -u "$CLIENT_ID:$(js 'encodeURIComponent(a[0])' "$CLIENT_SECRET")" --data-urlencode "token=$REVOKE_AT" "$REVOKE_EP")|$(C -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $REVOKE_AT" "$USERINFO_EP")" = "200|401" ]

# --- drop old keys ------------------------------------------------------------------
C -o /dev/null -X POST "$ISSUER/test/drop-old-keys"
JWKS="$(C "$JWKS_URI")"
check "drop-old-keys leaves newest EC key + RSA key" \
  [ "$(js 'JSON.parse(a[0]).keys.map((k)=>k.kty==="EC"?k.kid:"RSA").join()' "$JWKS")" = "$KID3,RSA" ]
check "a token signed with a dropped kid no longer verifies against JWKS" [ "$(verify_jwt "$FIRST_ID_TOKEN" "$JWKS")" = no-key ]

# --- RP-initiated logout -------------------------------------------------------------
LOGOUT_PAGE="$(C -b "$JAR" -c "$JAR" "$END_SESSION_EP?$(js 'new URLSearchParams({id_token_hint:a[0],post_logout_redirect_uri:a[1],state:"bye"}).toString()' "$ID_TOKEN" "$POST_LOGOUT_URI")")"
XSRF="$(js '(/name="xsrf" value="([^"]+)"/.exec(a[0]) ?? [])[1] ?? ""' "$LOGOUT_PAGE")"
ACTION="$(js '(/action="([^"]+)"/.exec(a[0]) ?? [])[1] ?? ""' "$LOGOUT_PAGE")"
LOGOUT_LOC="$(C -b "$JAR" -c "$JAR" -o /dev/null -w '%{redirect_url}' --data-urlencode "xsrf=$XSRF" --data logout=yes "$ACTION")"
check "logout confirm redirects to post_logout_redirect_uri with state" [ "$LOGOUT_LOC" = "$POST_LOGOUT_URI?state=bye" ]
token_request --data-urlencode grant_type=refresh_token --data-urlencode "refresh_token=$REFRESH_TOKEN"
check "refresh after logout fails (invalid_grant)" [ "$TOKEN_STATUS|$(json_get "$TOKEN_BODY" error)" = "400|invalid_grant" ]

# --- stdout discipline --------------------------------------------------------------
check "provider wrote exactly one line to stdout" [ "$(wc -l <"$WORK/stdout")" = 1 ]
check "provider still alive" kill -0 "$PROVIDER_PID"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
