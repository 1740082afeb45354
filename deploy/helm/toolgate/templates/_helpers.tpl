{{/*
Names, labels, the refusals (toolgate.validate), and toolgate.toml rendered from the values
(toolgate.config). The paths and ports here are the image's (deploy/Dockerfile): configuration in
/etc/toolgate, secrets as files in /run/secrets/toolgate, state in /var/lib/toolgate, users on
8080, probes and metrics on 9090.
*/}}

{{- define "toolgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "toolgate.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "toolgate.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "toolgate.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "toolgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "toolgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "toolgate.labels" -}}
{{ include "toolgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: toolgate
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "toolgate.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* "true" when the replicas share a database (anything but the embedded store). */}}
{{- define "toolgate.shared" -}}
{{- ne .Values.store.type "sled" -}}
{{- end -}}

{{- define "toolgate.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "toolgate.fullname" .)) -}}
{{- end -}}

{{/* The database password comes from a Secret other than the main one. */}}
{{- define "toolgate.separateDbSecret" -}}
{{- $name := .Values.store.postgres.passwordSecret.name -}}
{{- and (eq (include "toolgate.shared" .) "true") $name (ne $name (include "toolgate.secretName" .)) -}}
{{- end -}}

{{/* A `file:` reference to a key of the mounted Secret. */}}
{{- define "toolgate.secretRef" -}}
{{- printf "file:/run/secrets/toolgate/%s" . | toJson -}}
{{- end -}}

{{/* Every key the configuration reads from the main Secret. */}}
{{- define "toolgate.secretKeys" -}}
{{- $keys := list .Values.sso.clientSecretKey -}}
{{- $keys = concat $keys .Values.sso.sessionKeys .Values.sso.assertionKeys -}}
{{- with .Values.audit.keySecretKey }}{{ $keys = append $keys . }}{{ end -}}
{{- if .Values.llm.baseUrl }}{{ with .Values.llm.apiKeySecretKey }}{{ $keys = append $keys . }}{{ end }}{{ end -}}
{{- if and (eq (include "toolgate.shared" .) "true") (ne (include "toolgate.separateDbSecret" .) "true") -}}
{{- $keys = append $keys .Values.store.postgres.passwordSecret.key -}}
{{- end -}}
{{- toJson ($keys | uniq) -}}
{{- end -}}

{{/* What the chart refuses to render, with the reason. */}}
{{- define "toolgate.validate" -}}
{{- $pg := .Values.store.postgres -}}
{{- if ne (include "toolgate.shared" .) "true" -}}
{{- if gt (int .Values.replicas) 1 -}}
{{- fail (printf "store.type \"sled\" serves exactly one replica, and replicas is %d: the embedded store is a directory on a ReadWriteOnce volume that one process opens. Use store.type \"postgres\" for several replicas (docs/operations.md, \"Running several replicas\")." (int .Values.replicas)) -}}
{{- end -}}
{{- else -}}
{{- if not (regexMatch "^postgres(ql)?://[^/]" ($pg.url | default "")) -}}
{{- fail "store.postgres.url must be a postgres:// URL (postgres://USER@HOST:5432/DATABASE)" -}}
{{- end -}}
{{- if or (regexMatch "^postgres(ql)?://[^@/]*:[^@/]*@" $pg.url) (regexMatch "[?&]password=" $pg.url) -}}
{{- fail "store.postgres.url holds a password: leave it out; the password comes from the Secret key store.postgres.passwordSecret" -}}
{{- end -}}
{{- if and (eq $pg.tls "disable") (not (regexMatch "^(localhost|127\\.[0-9.]+|\\[::1\\])(:[0-9]+)?$" (urlParse $pg.url).host)) -}}
{{- fail "store.postgres.tls \"disable\" is for a database on loopback only: the password and every session would cross the network in the clear" -}}
{{- end -}}
{{- if and $pg.caCert $pg.caFile -}}
{{- fail "store.postgres.caCert and store.postgres.caFile: set one" -}}
{{- end -}}
{{- if and (eq $pg.tls "disable") (or $pg.caCert $pg.caFile) -}}
{{- fail "store.postgres.caCert and store.postgres.caFile apply only with store.postgres.tls \"verify-full\"" -}}
{{- end -}}
{{- if or (empty .Values.sso.sessionKeys) (empty .Values.sso.assertionKeys) -}}
{{- fail "store.type \"postgres\" needs sso.sessionKeys and sso.assertionKeys: keys generated per process would make a cookie or an assertion from one replica invalid on another" -}}
{{- end -}}
{{- end -}}
{{- if not .Values.secrets.existingSecret -}}
{{- range fromJsonArray (include "toolgate.secretKeys" .) -}}
{{- if not (get $.Values.secrets.files .) -}}
{{- fail (printf "secrets.existingSecret is empty, so the chart makes the Secret, and secrets.files.%s is missing: give it at install with --set-file secrets.files.%s=FILE" . .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A TOML key: bare when it may be, quoted otherwise. */}}
{{- define "toolgate.tomlKey" -}}
{{- if regexMatch "^[A-Za-z0-9_-]+$" . -}}{{ . }}{{- else -}}{{ toJson . }}{{- end -}}
{{- end -}}

{{/*
A value as TOML: a map becomes an inline table, a list an array, anything else its JSON form
(JSON strings, numbers and booleans are valid TOML). Null entries of a map are left out.
*/}}
{{- define "toolgate.tomlValue" -}}
{{- if kindIs "map" . -}}
{ {{- $first := true -}}
{{- range $key, $value := . -}}
{{- if not (kindIs "invalid" $value) -}}
{{- if not $first }}, {{ end -}}
{{- $first = false -}}
{{- include "toolgate.tomlKey" $key }} = {{ include "toolgate.tomlValue" $value -}}
{{- end -}}
{{- end -}} }
{{- else if kindIs "slice" . -}}
[{{- range $index, $item := . -}}{{- if $index }}, {{ end -}}{{- include "toolgate.tomlValue" $item -}}{{- end -}}]
{{- else -}}
{{- toJson . -}}
{{- end -}}
{{- end -}}

{{/* The entries of a map as `key = value` lines, each after a newline. */}}
{{- define "toolgate.tomlLines" -}}
{{- range $key, $value := . }}
{{- if not (kindIs "invalid" $value) }}
{{ include "toolgate.tomlKey" $key }} = {{ include "toolgate.tomlValue" $value }}
{{- end }}
{{- end }}
{{- end -}}

{{/* toolgate.toml (README, "Configuration"). */}}
{{- define "toolgate.config" -}}
{{- $pg := .Values.store.postgres -}}
# Rendered by the toolgate Helm chart from its values: change the values, not this text. A change
# rolls the pods (the Deployment carries this text's checksum).
public_url = {{ toJson .Values.publicUrl }}

[server]
# Plain HTTP inside the cluster: TLS terminates at the data plane, which the NetworkPolicy
# admits to this port.
listen = "0.0.0.0:8080"
# Probes and Prometheus (the NetworkPolicy admits only Prometheus).
admin_listen = "0.0.0.0:9090"
trusted_proxies = {{ include "toolgate.tomlValue" (.Values.server.trustedProxies | default list) }}
log_format = {{ toJson .Values.server.logFormat }}

[sso]
issuer = {{ toJson .Values.sso.issuer }}
client_id = {{ toJson .Values.sso.clientId }}
client_secret = {{ include "toolgate.secretRef" .Values.sso.clientSecretKey }}
session_keys = [{{ range $index, $key := .Values.sso.sessionKeys }}{{ if $index }}, {{ end }}{{ include "toolgate.secretRef" $key }}{{ end }}]
assertion_keys = [{{ range $index, $key := .Values.sso.assertionKeys }}{{ if $index }}, {{ end }}{{ include "toolgate.secretRef" $key }}{{ end }}]
{{- include "toolgate.tomlLines" .Values.sso.settings }}

[audit]
{{- with .Values.audit.keySecretKey }}
key = {{ include "toolgate.secretRef" . }}
{{- end }}
reader_groups = {{ include "toolgate.tomlValue" (.Values.audit.readerGroups | default list) }}

[store]
{{- if eq (include "toolgate.shared" .) "true" }}
# Shared by every replica; migrations run at start under an advisory lock.
url = {{ toJson $pg.url }}
password = {{ include "toolgate.secretRef" (ternary "db-password" $pg.passwordSecret.key (eq (include "toolgate.separateDbSecret" .) "true")) }}
tls = {{ toJson $pg.tls }}
{{- if $pg.caCert }}
ca_file = "/etc/toolgate/db-ca.pem"
{{- else if $pg.caFile }}
ca_file = {{ toJson $pg.caFile }}
{{- end }}
pool_size = {{ int $pg.poolSize }}
{{- else }}
# On the volume, in a directory of its own so a restore can move it aside.
path = "/var/lib/toolgate/store"
{{- with .Values.store.sled.cacheBytes }}
cache_bytes = {{ int64 . }}
{{- end }}
{{- end }}

[policy]
file = "policy.toml"
managed_by = {{ toJson .Values.policy.managedBy }}
{{- with .Values.dashboard }}

[dashboard]
{{- include "toolgate.tomlLines" . }}
{{- end }}
{{- if .Values.llm.baseUrl }}

[llm]
base_url = {{ toJson .Values.llm.baseUrl }}
model = {{ toJson .Values.llm.model }}
{{- with .Values.llm.apiKeySecretKey }}
api_key = {{ include "toolgate.secretRef" . }}
{{- end }}
{{- include "toolgate.tomlLines" .Values.llm.settings }}
{{- end }}

[timeouts]
# Below the pod's terminationGracePeriodSeconds, which the chart derives from it.
shutdown_grace = "{{ int .Values.shutdownGraceSeconds }}s"
{{- include "toolgate.tomlLines" (.Values.config.timeouts | default dict) }}
{{- range $section := list "limits" "compression" "agent" }}
{{- with get $.Values.config $section }}

[{{ $section }}]
{{- include "toolgate.tomlLines" . }}
{{- end }}
{{- end }}
{{- range .Values.sites }}

[sites.{{ include "toolgate.tomlKey" .id }}]
{{- include "toolgate.tomlLines" (omit . "id") }}
{{- end }}
{{- end -}}

{{/* A NetworkPolicy peer: its namespace and pod selectors, the empty ones left out. */}}
{{- define "toolgate.peer" -}}
{{- $peer := dict -}}
{{- range $selector := list "namespaceSelector" "podSelector" -}}
{{- with get $ $selector }}{{ $_ := set $peer $selector . }}{{ end -}}
{{- end -}}
{{- toYaml $peer -}}
{{- end -}}

{{/* The host names the route carries: publicUrl's, the dashboard's, every site's. */}}
{{- define "toolgate.hostnames" -}}
{{- $hosts := list (regexReplaceAll ":[0-9]+$" (urlParse .Values.publicUrl).host "") -}}
{{- with (.Values.dashboard | default dict).host }}{{ $hosts = append $hosts . }}{{ end -}}
{{- range .Values.sites }}{{ $hosts = append $hosts .host }}{{ end -}}
{{- $hosts = concat $hosts .Values.httpRoute.extraHostnames -}}
{{- toJson ($hosts | uniq) -}}
{{- end -}}
