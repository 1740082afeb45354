"""Checks the Helm chart (deploy/helm/toolgate) and both kustomizations (deploy/kubernetes, three
replicas on PostgreSQL; deploy/kubernetes-embedded, one replica on the embedded store) without a
cluster. Run through check.sh, which installs what this needs.

Helm here is Helm's own Go SDK (the helm-python-sdk package bundles it as a library): `helm lint
--strict` and `helm template` for a set of value files, including the ones the chart must refuse.
kustomize is `kubectl kustomize`. Every rendered object is then checked the way
gateway/tests/it/deploy/kubernetes.rs checks the static manifests: it parses, what it references
exists (ConfigMap keys, Secret keys, volumes, ports, the Service behind the route), the pod keeps
its hardening, toolgate.toml parses as TOML and agrees with the pod (ports, secret files, store),
and the store decides the shape: sled is one replica replaced with Recreate on a volume,
PostgreSQL several replicas rolled one at a time with no volume and no session affinity. The two
kustomizations must agree on everything but the store.

`check.py --write-configs DIR` only renders the chart's accepted value sets and writes, per set,
the files the pod sees in /etc/toolgate (toolgate.toml, policy.toml, a CA) into DIR/<set>/:
gateway/tests/it/deploy.rs runs `toolgate check-config` on each.
"""

import argparse
import copy
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import helm_python as helm
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy/helm/toolgate"
KUBE_VERSION = "v1.30.0"  # Chart.yaml's kubeVersion floor
SECRETS = "/run/secrets/toolgate"
CONFIG = "/etc/toolgate/toolgate.toml"
# The top-level tables of toolgate.toml (gateway/src/config/raw.rs, RawConfig).
CONFIG_KEYS = {
    "public_url",
    "server",
    "store",
    "sso",
    "policy",
    "audit",
    "timeouts",
    "limits",
    "compression",
    "sites",
    "llm",
    "agent",
    "dashboard",
}
SLED_STORE_KEYS = {"path", "cache_bytes"}
POSTGRES_STORE_KEYS = {"url", "password", "tls", "ca_file", "pool_size"}
KINDS = {
    "ConfigMap": "v1",
    "Secret": "v1",
    "Service": "v1",
    "PersistentVolumeClaim": "v1",
    "Namespace": "v1",
    "Deployment": "apps/v1",
    "PodDisruptionBudget": "policy/v1",
    "NetworkPolicy": "networking.k8s.io/v1",
    "HTTPRoute": "gateway.networking.k8s.io/v1",
}

passed = 0
failed = 0


class Problem(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Problem(message)


def case(name, run):
    """One named check: counted, and its failure printed without stopping the others."""
    global passed, failed
    try:
        detail = run()
    except (
        Problem,
        helm.HelmError,
        yaml.YAMLError,
        tomllib.TOMLDecodeError,
        KeyError,
        TypeError,
        subprocess.CalledProcessError,
    ) as error:
        failed += 1
        print(f"FAILED {name}: {type(error).__name__}: {error}")
    else:
        passed += 1
        print(f"ok {name}" + (f": {detail}" if detail else ""))


# ---- the objects, whoever rendered them ----


class Objects:
    def __init__(self, documents, what):
        self.what = what
        self.all = [doc for doc in documents if doc]
        for obj in self.all:
            kind = obj.get("kind")
            expect(kind in KINDS, f"{what}: unexpected kind {kind}")
            expect(obj.get("apiVersion") == KINDS[kind], f"{what}: {kind} apiVersion {obj.get('apiVersion')}")
            name = obj.get("metadata", {}).get("name", "")
            expect(
                re.fullmatch(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", name), f"{what}: {kind} name {name!r}"
            )
        keys = [(o["kind"], o["metadata"]["name"]) for o in self.all]
        expect(len(keys) == len(set(keys)), f"{what}: duplicate objects {keys}")

    def of(self, kind):
        return [obj for obj in self.all if obj["kind"] == kind]

    def one(self, kind):
        found = self.of(kind)
        expect(len(found) == 1, f"{self.what}: {len(found)} {kind} objects, expected one")
        return found[0]

    def named(self, kind, name):
        for obj in self.of(kind):
            if obj["metadata"]["name"] == name:
                return obj
        return None


def selects(selector, labels, what):
    expect(selector, f"{what}: empty selector")
    for key, value in selector.items():
        expect(labels.get(key) == value, f"{what} does not select the pods ({key}={value})")


def host_of(url):
    """The host of a URL, without user and port."""
    return re.sub(r":\d+$", "", re.match(r"^[a-z]+://(?:[^@/]*@)?([^/?]+)", url).group(1))


def volume_sources(objects, volume, what):
    """(kind, {file name in the mount: (object name, key)}) for one pod volume; None for
    a Secret or ConfigMap that is not among the objects (one the operator creates)."""
    if "persistentVolumeClaim" in volume:
        return "data", {}
    if "configMap" in volume:
        sources = [{"configMap": volume["configMap"]}]
    elif "secret" in volume:
        sources = [{"secret": {"name": volume["secret"]["secretName"], **volume["secret"]}}]
    elif "projected" in volume:
        sources = volume["projected"]["sources"]
    else:
        raise Problem(f"{what}: volume {volume['name']} of an unexpected type")
    kinds = {next(iter(source)) for source in sources}
    expect(len(kinds) == 1, f"{what}: volume {volume['name']} mixes {kinds}")
    kind = kinds.pop()
    files = {}
    for source in sources:
        spec = source[kind]
        obj = objects.named("ConfigMap" if kind == "configMap" else "Secret", spec["name"])
        if spec.get("items"):
            for item in spec["items"]:
                if obj is not None:
                    expect(
                        item["key"] in obj.get("data", {}), f"{what}: {spec['name']} has no key {item['key']}"
                    )
                files[item["path"]] = (spec["name"], item["key"])
        elif obj is not None:
            for key in obj.get("data", {}):
                files[key] = (spec["name"], key)
        else:
            files[None] = (spec["name"], None)  # any key: a Secret the operator provides
    return kind, files


def check_objects(objects, store, replicas):
    """The checks every rendering must pass; returns the parsed toolgate.toml."""
    what = objects.what
    deployment = objects.one("Deployment")
    spec = deployment["spec"]
    template = spec["template"]
    pod = template["spec"]
    labels = template["metadata"]["labels"]
    selects(spec["selector"]["matchLabels"], labels, f"{what}: Deployment")
    expect(spec["replicas"] == replicas, f"{what}: replicas {spec['replicas']}, expected {replicas}")

    # Hardening (deploy/kubernetes/deployment.yaml).
    security = pod["securityContext"]
    expect(
        security.get("runAsNonRoot") is True and security.get("runAsUser") == 65532, f"{what}: non-root 65532"
    )
    expect(security.get("seccompProfile", {}).get("type") == "RuntimeDefault", f"{what}: seccomp")
    expect(pod.get("automountServiceAccountToken") is False, f"{what}: service-account token mounted")
    expect(pod.get("enableServiceLinks") is False, f"{what}: service links")
    [container] = pod["containers"]
    c_security = container["securityContext"]
    expect(c_security.get("readOnlyRootFilesystem") is True, f"{what}: read-only root")
    expect(c_security.get("allowPrivilegeEscalation") is False, f"{what}: privilege escalation")
    expect(c_security.get("capabilities", {}).get("drop") == ["ALL"], f"{what}: capabilities")
    expect(container["lifecycle"]["preStop"]["sleep"]["seconds"] >= 1, f"{what}: preStop pause")
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    expect(ports == {"http": 8080, "admin": 9090}, f"{what}: container ports {ports}")
    for probe, path in [
        ("startupProbe", "/healthz"),
        ("livenessProbe", "/healthz"),
        ("readinessProbe", "/readyz"),
    ]:
        get = container[probe]["httpGet"]
        expect(get["path"] == path and get["port"] == "admin", f"{what}: {probe} asks {get}")

    # Volumes and what they hold.
    volumes = {volume["name"]: volume_sources(objects, volume, what) for volume in pod["volumes"]}
    mounts = {mount["mountPath"]: mount["name"] for mount in container["volumeMounts"]}
    for path, name in mounts.items():
        expect(name in volumes, f"{what}: mount {path} names no volume")

    def mounted(file, kind):
        parent, name = file.rsplit("/", 1)
        volume = mounts.get(parent)
        if volume is None or volumes[volume][0] != kind:
            return None
        files = volumes[volume][1]
        return files.get(name) or files.get(None)

    args = container["args"]
    expect(args[:2] == ["run", "--config"] and args[2] == CONFIG, f"{what}: args {args}")
    config_source = mounted(CONFIG, "configMap")
    expect(config_source and config_source[1], f"{what}: {CONFIG} is not in a mounted ConfigMap")
    config_map = objects.named("ConfigMap", config_source[0])
    config = tomllib.loads(config_map["data"][config_source[1]])
    expect(set(config) <= CONFIG_KEYS, f"{what}: unknown tables {set(config) - CONFIG_KEYS}")
    policy_source = mounted("/etc/toolgate/" + config["policy"]["file"], "configMap")
    expect(policy_source, f"{what}: the policy file is not mounted")
    policy_map = objects.named("ConfigMap", policy_source[0])
    if policy_map is not None:  # else a ConfigMap of the operator's
        tomllib.loads(policy_map["data"][policy_source[1]])
    expect(config["server"]["listen"].endswith(f":{ports['http']}"), f"{what}: server.listen vs http port")
    expect(
        config["server"]["admin_listen"].endswith(f":{ports['admin']}"), f"{what}: admin_listen vs admin port"
    )

    # Every secret the configuration names is a file of a mounted Secret.
    references = re.findall(r'"file:([^"]+)"', config_map["data"][config_source[1]])
    for file in references:
        expect(file.startswith(SECRETS + "/"), f"{what}: secret {file} outside {SECRETS}")
        expect(mounted(file, "secret"), f"{what}: {file} is not a key of a mounted Secret")
    sso = config["sso"]

    # Grace: SIGKILL never cuts the drain.
    grace = int(config["timeouts"]["shutdown_grace"].rstrip("s"))
    expect(
        pod["terminationGracePeriodSeconds"] > grace + container["lifecycle"]["preStop"]["sleep"]["seconds"],
        f"{what}: terminationGracePeriodSeconds too short",
    )

    # The store decides the shape.
    budget = objects.one("PodDisruptionBudget")
    selects(budget["spec"]["selector"]["matchLabels"], labels, f"{what}: PodDisruptionBudget")
    claims = objects.of("PersistentVolumeClaim")
    if store == "sled":
        expect(
            set(config["store"]) <= SLED_STORE_KEYS and "path" in config["store"],
            f"{what}: [store] {config['store']}",
        )
        expect(replicas == 1, f"{what}: sled with {replicas} replicas")
        expect(spec["strategy"] == {"type": "Recreate"}, f"{what}: strategy {spec['strategy']}")
        data = [path for path, name in mounts.items() if volumes[name][0] == "data"]
        expect(
            any(config["store"]["path"].startswith(path + "/") for path in data),
            f"{what}: store.path not on the volume",
        )
        expect(
            budget["spec"] == {"maxUnavailable": 0, "selector": budget["spec"]["selector"]},
            f"{what}: budget {budget['spec']}",
        )
    else:
        store_keys = set(config["store"])
        expect(
            store_keys <= POSTGRES_STORE_KEYS and {"url", "password"} <= store_keys,
            f"{what}: [store] {store_keys}",
        )
        url = config["store"]["url"]
        expect(re.match(r"^postgres(ql)?://[^:@/]+@", url), f"{what}: store.url {url} (user, no password)")
        loopback = re.fullmatch(r"localhost|127\.[0-9.]+|\[::1\]", host_of(url))
        expect(
            config["store"].get("tls", "verify-full") == "verify-full" or loopback,
            f"{what}: store.tls off the loopback",
        )
        expect(
            sso.get("session_keys") and sso.get("assertion_keys"),
            f"{what}: a shared store needs configured keys",
        )
        unavailable = 0 if replicas == 1 else 1  # a lone replica goes only once its successor is ready
        expect(
            spec["strategy"]
            == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": unavailable, "maxSurge": 1}},
            f"{what}: strategy {spec['strategy']}",
        )
        expect(
            not claims and all(kind != "data" for kind, _ in volumes.values()),
            f"{what}: a volume with a shared store",
        )
        expected = 2 if replicas >= 3 else 1
        if replicas > 1:
            expect(
                budget["spec"].get("minAvailable") == expected and "maxUnavailable" not in budget["spec"],
                f"{what}: budget {budget['spec']}",
            )
        else:
            expect(budget["spec"].get("maxUnavailable") == 0, f"{what}: budget {budget['spec']}")
        if "ca_file" in config["store"] and config["store"]["ca_file"].startswith("/etc/toolgate/"):
            expect(mounted(config["store"]["ca_file"], "configMap"), f"{what}: ca_file not in the ConfigMap")

    # The Service, the NetworkPolicy and the route reach the pods.
    service = objects.one("Service")
    selects(service["spec"]["selector"], labels, f"{what}: Service")
    service_ports = {port["port"] for port in service["spec"]["ports"]}
    for port in service["spec"]["ports"]:
        expect(port["targetPort"] in ports, f"{what}: Service targets {port['targetPort']}")
    policy = objects.one("NetworkPolicy")
    selects(policy["spec"]["podSelector"]["matchLabels"], labels, f"{what}: NetworkPolicy")
    opened = [port["port"] for rule in policy["spec"]["ingress"] for port in rule["ports"]]
    expect(opened == ["http", "admin"], f"{what}: NetworkPolicy opens {opened}")
    for rule in policy["spec"]["ingress"]:
        for peer in rule["from"]:
            expect(isinstance(peer, dict) and peer, f"{what}: an empty NetworkPolicy peer admits everyone")
    for route in objects.of("HTTPRoute"):
        for rule in route["spec"]["rules"]:
            # Any replica serves any request: affinity would only pin users to a replica that
            # may go away.
            expect("sessionPersistence" not in rule, f"{what}: the route pins sessions to a replica")
        for backend in [b for rule in route["spec"]["rules"] for b in rule["backendRefs"]]:
            expect(
                backend["name"] == service["metadata"]["name"] and backend["port"] in service_ports,
                f"{what}: route backend {backend}",
            )
        hosts = {host_of(config["public_url"])} | {site["host"] for site in config.get("sites", {}).values()}
        if "dashboard" in config:
            hosts.add(config["dashboard"]["host"])
        missing = hosts - set(route["spec"]["hostnames"])
        expect(not missing, f"{what}: the route misses {sorted(missing)}")
    return config


# ---- Helm ----


def values(**changes):
    """The chart's defaults with `changes` merged in (dotted keys)."""
    result = {}
    for dotted, value in changes.items():
        target = result
        *parents, last = dotted.split(".")
        for parent in parents:
            target = target.setdefault(parent, {})
        target[last] = value
    return result


def render(overrides):
    with helm.Chart.load(CHART) as chart:
        merged = chart.merge_values(overrides)
        chart.validate_schema(merged)
        manifests = chart.render(overrides, name="toolgate", namespace="toolgate")
    documents = []
    for path, text in sorted(manifests.items()):
        if path.endswith("NOTES.txt"):
            expect("rollout status deployment/toolgate" in text, "NOTES.txt renders")
            continue
        documents.extend(yaml.safe_load_all(text))
    return Objects(documents, "chart"), merged


def renders(overrides, store, replicas, then=None):
    def run():
        objects, merged = render(overrides)
        config = check_objects(objects, store, replicas)
        if then:
            then(objects, config, merged)
        kinds = sorted(obj["kind"] for obj in objects.all)
        return ", ".join(kinds)

    return run


def refuses(overrides, reason, schema=False):
    """The chart refuses these values: `fail` in a template, or the schema with `schema`."""

    def run():
        try:
            with helm.Chart.load(CHART) as chart:
                if schema:
                    chart.validate_schema(chart.merge_values(overrides))
                else:
                    chart.render(overrides, name="toolgate", namespace="toolgate")
        except helm.HelmError as error:
            expect(re.search(reason, str(error)), f"refused, but not for {reason!r}: {error}")
            return " ".join(re.sub(r"^execution error at \([^)]*\): ", "", str(error)).split())
        raise Problem("rendered, must be refused")

    return run


def lint(overrides):
    def run():
        report = helm.lint(CHART, overrides, strict=True, kube_version=KUBE_VERSION)
        problems = report["errors"] + [m for m in report["messages"] if m["severity"] >= 2]
        expect(not problems, json.dumps(problems, indent=1))
        return f"{len(report['messages'])} info message(s)"

    return run


def no_secret_values():
    with open(CHART / "values.yaml") as file:
        defaults = yaml.safe_load(file)
    expect(defaults["secrets"]["files"] == {}, "values.yaml holds secret values")
    expect(defaults["secrets"]["existingSecret"], "the default is a Secret the operator creates")
    expect(
        ":" not in defaults["store"]["postgres"]["url"].split("@")[0].split("//")[1], "a password in the URL"
    )


SLED = values(**{"replicas": 1, "store.type": "sled"})
with open(CHART / "values.yaml") as _file:
    DEFAULT_POLICY = yaml.safe_load(_file)["policy"]["inline"]
# A public, self-signed CA certificate (its key was thrown away): the database's extra root in
# the value sets below, real enough for `toolgate check-config` to load it.
TEST_CA = """-----BEGIN CERTIFICATE-----
MIIBrDCCAVGgAwIBAgIUbF323t8nY259d+YONFPAL8MUJmAwCgYIKoZIzj0EAwIw
IjEgMB4GA1UEAwwXVG9vbGdhdGUgY2hhcnQgY2hlY2sgQ0EwIBcNMjYxMTI2MTMw
NDEyWhgPMjEyNjExMDIxMzA0MTJaMCIxIDAeBgNVBAMMF1Rvb2xnYXRlIGNoYXJ0
IGNoZWNrIENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE4Q7kYVrpU5GZBSqB
bAPyU5oOxK9wEjivM8RhEjCGRTZrle5t+vUvox3d1ypLAd/CyLbviC+zUfIDFaoz
BseDRqNjMGEwHQYDVR0OBBYEFNKWcmsFdD2Des28AAJ6CUrRrzMgMB8GA1UdIwQY
MBaAFNKWcmsFdD2Des28AAJ6CUrRrzMgMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0P
AQH/BAQDAgIEMAoGCCqGSM49BAMCA0kAMEYCIQCF097bGVwbAomzS7+c4SR1tjFG
Rev1aP6sRD+TbUVBpwIhAJ4kLb3j1uyTfM2eLiepiIKtXuKoVZ1HTSffcanRbMn5
-----END CERTIFICATE-----
"""
FULL_SECRETS = {
    key: "x"
    for key in [
        "oidc-client-secret",
        "session-key",
        "assertion-key.pem",
        "audit-key",
        "llm-api-key",
        "db-password",
    ]
}


def defaults_then(objects, config, merged):
    expect(not objects.of("Secret") and not objects.of("HTTPRoute"), "defaults: no Secret, no route")
    expect(config["store"]["pool_size"] == 16, "pool_size 16")


def sled_then(objects, config, merged):
    [claim] = objects.of("PersistentVolumeClaim")
    expect(
        claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep",
        "the volume outlives an uninstall",
    )
    expect(config["store"] == {"path": "/var/lib/toolgate/store"}, f"[store] {config['store']}")


EVERYTHING = values(
    **{
        "replicas": 2,
        "httpRoute.enabled": True,
        "store.postgres.passwordSecret": {"name": "toolgate-db-app", "key": "password"},
        "store.postgres.caCert": TEST_CA,
        "store.postgres.poolSize": 8,
        "policy.existingConfigMap": {"name": "corp-policy", "key": "toolgate-policy.toml"},
        "policy.managedBy": "dashboard",
        "sso.sessionKeys": ["session-key", "session-key.previous"],
        "llm.settings": {"max_tokens": 2048, "model_aliases": ["gpt-4o"]},
        "config": {
            "limits": {"rewrite_memory": 4194304},
            "agent": {"max_rounds": 8},
            "timeouts": {"body_idle": "90s"},
        },
        "sites": [
            {
                "id": "tasks",
                "host": "tasks.corp.example",
                "upstream": "http://tasks:8080",
                "allow_groups": ["engineering"],
                "page_tools": True,
            },
            {
                "id": "expenses",
                "host": "expenses.corp.example",
                "upstream": "https://expenses.internal",
                "tls": {"ca_file": "/etc/toolgate/internal-ca.pem"},
                "forms": {
                    "auto": False,
                    "rule": [
                        {
                            "selector": "form#expense",
                            "name": "submit_expense",
                            "description": 'Submit "an" expense',
                            "path": ["/claims/new", "/claims/new/*"],
                            "params": {
                                "amount": "Amount spent",
                                "date": {"description": "Day", "format": "date"},
                            },
                        }
                    ],
                },
            },
        ],
    }
)


def everything_then(objects, config, merged):
    route = objects.one("HTTPRoute")
    expect("tasks.corp.example" in route["spec"]["hostnames"], "the route carries the sites")
    expect(objects.one("ConfigMap")["data"]["db-ca.pem"] == TEST_CA, "the CA in the ConfigMap")
    expect(config["store"]["password"] == f"file:{SECRETS}/db-password", "password file")
    expect(config["store"]["ca_file"] == "/etc/toolgate/db-ca.pem", "ca_file")
    expect(config["store"]["pool_size"] == 8, "pool_size")
    expect(len(config["sso"]["session_keys"]) == 2, "two session keys")
    rule = config["sites"]["expenses"]["forms"]["rule"][0]
    expect(
        rule["description"] == 'Submit "an" expense' and rule["params"]["date"]["format"] == "date",
        f"form rule {rule}",
    )
    expect(config["llm"]["max_tokens"] == 2048 and config["agent"]["max_rounds"] == 8, "settings")
    expect(
        config["timeouts"] == {"shutdown_grace": "30s", "body_idle": "90s"}, f"timeouts {config['timeouts']}"
    )
    expect(config["policy"]["managed_by"] == "dashboard", "managed_by")
    expect(
        "policy.toml" not in objects.one("ConfigMap")["data"], "the operator's policy replaces the inline one"
    )


def chart_secret_then(objects, config, merged):
    [secret] = objects.of("Secret")
    expect(set(secret["data"]) == set(FULL_SECRETS), f"Secret keys {sorted(secret['data'])}")
    annotations = objects.one("Deployment")["spec"]["template"]["metadata"]["annotations"]
    expect("checksum/secrets" in annotations, "a changed Secret rolls the pods")


# The value sets the chart must accept: (directory name for --write-configs, title, values,
# store, replicas, further checks, files the operator mounts beside the ConfigMap's).
ACCEPTED = [
    (
        "defaults",
        "(a) helm template, defaults: PostgreSQL, 3 replicas",
        None,
        "postgres",
        3,
        defaults_then,
        {},
    ),
    ("sled", "(b) helm template, sled with one replica", SLED, "sled", 1, sled_then, {}),
    (
        "everything",
        "PostgreSQL, 2 replicas, route, own policy and DB secret, CA, forms",
        EVERYTHING,
        "postgres",
        2,
        everything_then,
        # The operator's policy ConfigMap (mounted as policy.toml) and the site's CA (extraVolumes).
        {"policy.toml": DEFAULT_POLICY, "internal-ca.pem": TEST_CA},
    ),
    (
        "chart-secret",
        "the chart's own Secret from --set-file values",
        values(**{"secrets.existingSecret": "", "secrets.files": FULL_SECRETS}),
        "postgres",
        3,
        chart_secret_then,
        {},
    ),
    (
        "one-postgres-replica",
        "PostgreSQL with one replica: rolled surge first, drains wait",
        values(replicas=1),
        "postgres",
        1,
        None,
        {},
    ),
    (
        "loopback-plain",
        "tls disable on loopback renders",
        values(
            **{"store.postgres.tls": "disable", "store.postgres.url": "postgres://toolgate@127.0.0.1:5432/t"}
        ),
        "postgres",
        3,
        None,
        {},
    ),
]


def helm_cases():
    case("values.yaml holds no secret value", no_secret_values)
    case("helm lint --strict (defaults)", lint(None))
    case("helm lint --strict (sled, one replica)", lint(SLED))
    for _, title, overrides, store, replicas, then, _ in ACCEPTED:
        case(title, renders(overrides, store, replicas, then))
    case(
        "(c) sled with 3 replicas is refused",
        refuses(values(**{"store.type": "sled", "replicas": 3}), "serves exactly one replica"),
    )
    case(
        "sled with the default replicas (3) is refused",
        refuses(values(**{"store.type": "sled"}), "serves exactly one replica"),
    )
    missing = dict(FULL_SECRETS)
    del missing["session-key"]
    case(
        "the chart's own Secret without a key it needs is refused",
        refuses(
            values(**{"secrets.existingSecret": "", "secrets.files": missing}), "secrets.files.session-key"
        ),
    )
    case(
        "a password in the database URL is refused",
        refuses(
            values(**{"store.postgres.url": "postgres://toolgate:hunter2@db:5432/toolgate"}),
            "holds a password",
        ),
    )
    case(
        "a password in the database URL's parameters is refused",
        refuses(
            values(**{"store.postgres.url": "postgres://toolgate@db/toolgate?password=hunter2"}),
            "holds a password",
        ),
    )
    case(
        "tls disable to a remote database is refused",
        refuses(values(**{"store.postgres.tls": "disable"}), "loopback only"),
    )
    case(
        "a shared store without session keys is refused",
        refuses(values(**{"sso.sessionKeys": []}), "needs sso.sessionKeys"),
    )
    case(
        "a shared store without assertion keys is refused",
        refuses(values(**{"sso.assertionKeys": []}), "needs sso.sessionKeys and sso.assertionKeys"),
    )
    case(
        "caCert and caFile together are refused",
        refuses(values(**{"store.postgres.caCert": "x", "store.postgres.caFile": "/x.pem"}), "set one"),
    )
    case(
        "a CA with tls disable is refused",
        refuses(
            values(
                **{
                    "store.postgres.tls": "disable",
                    "store.postgres.url": "postgres://toolgate@localhost/t",
                    "store.postgres.caCert": TEST_CA,
                }
            ),
            "only with store.postgres.tls",
        ),
    )
    case(
        "schema: session affinity on the route is refused (any replica serves any request)",
        refuses(
            values(**{"httpRoute.sessionPersistence": {"type": "Cookie"}}), "sessionPersistence", schema=True
        ),
    )
    case("schema: an unknown value is refused", refuses(values(replica=3), "replica", schema=True))
    case(
        "schema: an unknown store type is refused",
        refuses(values(**{"store.type": "mysql"}), "mysql|type", schema=True),
    )
    case(
        "schema: pool size 0 is refused",
        refuses(values(**{"store.postgres.poolSize": 0}), "poolSize|minimum", schema=True),
    )
    case(
        "schema: a misspelt site key is refused",
        refuses(
            values(sites=[{"id": "a", "host": "a.example", "upstream": "http://a", "uptream": "x"}]),
            "uptream",
            schema=True,
        ),
    )


def write_configs(directory):
    """Renders every accepted value set and writes what its pod sees in /etc/toolgate into
    directory/<set>/: the ConfigMap's keys, and the operator's files the set names."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, title, overrides, _, _, _, operator_files in ACCEPTED:
        objects, _ = render(overrides)
        target = directory / name
        target.mkdir()
        for key, text in objects.one("ConfigMap")["data"].items():
            (target / key).write_text(text)
        for key, text in operator_files.items():
            (target / key).write_text(text)
        print(f"{name}: {title}")


# ---- kustomize ----


def placeholders(directory):
    """Every file a secretGenerator of `directory` reads, made here with a placeholder (the
    operator provides the real ones; never committed)."""
    with open(directory / "kustomization.yaml") as file:
        document = yaml.safe_load(file)
    for generator in document.get("secretGenerator", []):
        for entry in generator.get("files", []):
            target = directory / entry.split("=")[-1]
            if not target.exists():
                target.write_text("placeholder\n")


def kustomize(directory):
    output = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True, text=True)
    if output.returncode != 0:
        raise Problem(f"kubectl kustomize {directory.name}: {output.stderr.strip()}")
    return Objects(list(yaml.safe_load_all(output.stdout)), directory.name)


def kustomize_cases():
    work = Path(tempfile.mkdtemp(prefix="toolgate-kustomize-"))
    try:
        for name in ["kubernetes", "kubernetes-embedded"]:
            shutil.copytree(ROOT / "deploy" / name, work / name)
            placeholders(work / name)
        rendered = {}

        def replicas():
            objects = kustomize(work / "kubernetes")
            rendered["replicas"] = (objects, check_objects(objects, "postgres", 3))
            secret = objects.one("Secret")
            expect("db-password" in secret["data"], "the Secret holds db-password")
            return ", ".join(sorted(obj["kind"] for obj in objects.all))

        def embedded():
            objects = kustomize(work / "kubernetes-embedded")
            rendered["embedded"] = (objects, check_objects(objects, "sled", 1))
            expect(objects.of("PersistentVolumeClaim"), "the embedded store has its volume")
            expect("db-password" not in objects.one("Secret")["data"], "no database, no password")
            return ", ".join(sorted(obj["kind"] for obj in objects.all))

        def in_step():
            expect(rendered.keys() == {"replicas", "embedded"}, "both kustomizations rendered")
            (replicas_objects, replicas_config), (embedded_objects, embedded_config) = (
                rendered["replicas"],
                rendered["embedded"],
            )
            replicas_config, embedded_config = copy.deepcopy(replicas_config), copy.deepcopy(embedded_config)
            replicas_config.pop("store")
            embedded_config.pop("store")
            expect(
                replicas_config == embedded_config,
                "deploy/kubernetes/configmap.yaml and deploy/kubernetes-embedded/configmap.yaml differ "
                "outside [store]: keep them in step",
            )
            policies = [
                objects.one("ConfigMap")["data"]["policy.toml"] for objects in (replicas_objects, embedded_objects)
            ]
            expect(policies[0] == policies[1], "the two kustomizations' policy.toml differ")
            for kind in ["Namespace", "Service", "NetworkPolicy", "HTTPRoute"]:
                expect(
                    replicas_objects.one(kind) == embedded_objects.one(kind),
                    f"the two kustomizations' {kind} objects differ: keep them in step",
                )

        case("kubectl kustomize deploy/kubernetes (PostgreSQL, 3 replicas)", replicas)
        case("kubectl kustomize deploy/kubernetes-embedded (sled, one replica)", embedded)
        case("the two kustomizations differ only in the store and what follows from it", in_step)
    finally:
        shutil.rmtree(work)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write-configs", type=Path, metavar="DIR", help="only render the accepted value sets into DIR"
    )
    arguments = parser.parse_args()
    if arguments.write_configs:
        write_configs(arguments.write_configs)
        return 0
    kubectl = subprocess.run(["kubectl", "version", "--client"], capture_output=True, text=True).stdout
    print(
        f"Helm SDK {helm.helm_sdk_version()} (helm-python-sdk {helm.__version__}); kubectl: "
        + "; ".join(kubectl.strip().splitlines())
    )
    helm_cases()
    kustomize_cases()
    print(f"\ndeploy checks: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
