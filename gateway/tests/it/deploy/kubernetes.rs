//! The Kubernetes manifests of both kustomizations, `deploy/kubernetes` (three replicas on
//! PostgreSQL) and `deploy/kubernetes-embedded` (one replica on the embedded store): they parse,
//! everything they reference exists (ConfigMap and Secret keys, the Secret's being the files the
//! operator provides; volumes, ports named by probes, the Service, the NetworkPolicy and the
//! route; the configuration's own secret files, store and listen ports inside the pod), the store
//! decides the shape (replicas, rollout strategy, disruption budget, volume), and the two agree
//! on everything else.

use super::{deploy, list, read, secret_files, text};
use gateway::config::{Config, DatabaseSettings, DatabaseTls, StoreLocation};
use serde_yaml_ng::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The PostgreSQL kustomization and the embedded one.
pub const REPLICAS: &str = "kubernetes";
pub const EMBEDDED: &str = "kubernetes-embedded";

/// The Kubernetes objects of one kustomization: what kustomization.yaml applies, and the
/// maintenance pods beside it.
pub struct Cluster {
    /// The directory under deploy/.
    pub name: &'static str,
    pub objects: Vec<Value>,
    maintenance: Vec<Value>,
    /// Secret name → keys (the secretGenerator's files, provided by the operator).
    secrets: BTreeMap<String, BTreeSet<String>>,
    kustomization: Value,
}

fn documents(path: &Path) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(&read(path))
        .map(|document| {
            serde::Deserialize::deserialize(document)
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        })
        .collect()
}

impl Cluster {
    pub fn load(name: &'static str) -> Self {
        let directory = deploy().join(name);
        let kustomization = documents(&directory.join("kustomization.yaml")).remove(0);
        let objects = list(&kustomization["resources"])
            .iter()
            .flat_map(|resource| {
                let path = directory.join(text(resource));
                assert!(
                    path.is_file(),
                    "{name}: resource {} is not a file of this directory",
                    text(resource)
                );
                documents(&path)
            })
            .collect();
        let maintenance = match std::fs::read_dir(directory.join("maintenance")) {
            Ok(entries) => entries.flat_map(|entry| documents(&entry.expect("entry").path())).collect(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => panic!("{name}/maintenance: {error}"),
        };
        let mut secrets = BTreeMap::new();
        let readme = read(&directory.join("secrets/README.md"));
        for generator in list(&kustomization["secretGenerator"]) {
            let keys: BTreeSet<String> = list(&generator["files"])
                .iter()
                .map(|file| {
                    let file = text(file);
                    assert!(file.starts_with("secrets/"), "{name}: {file}: operator files live in secrets/");
                    let key =
                        file.split_once('=').map_or(file.rsplit('/').next().unwrap_or(file), |(key, _)| key);
                    assert!(
                        readme.contains(&format!("`{key}`")),
                        "{name}/secrets/README.md must explain `{key}`"
                    );
                    key.to_owned()
                })
                .collect();
            secrets.insert(text(&generator["name"]).to_owned(), keys);
        }
        Self { name, objects, maintenance, secrets, kustomization }
    }

    pub fn named<'a>(&'a self, kind: &str, name: &str) -> &'a Value {
        self.objects
            .iter()
            .find(|object| text(&object["kind"]) == kind && text(&object["metadata"]["name"]) == name)
            .unwrap_or_else(|| panic!("{}: no {kind} {name}", self.name))
    }

    fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> {
        self.objects.iter().filter(move |object| text(&object["kind"]) == kind)
    }

    fn config_map_keys(&self, name: &str) -> BTreeSet<String> {
        let data = self.named("ConfigMap", name)["data"].as_mapping().expect("data");
        data.keys().map(|key| text(key).to_owned()).collect()
    }

    /// The Deployment's pod spec.
    pub fn pod(&self) -> &Value {
        &self.named("Deployment", "toolgate")["spec"]["template"]["spec"]
    }

    /// The gateway's configuration as the pod reads it (the ConfigMap's `toolgate.toml`).
    pub fn config_text(&self) -> String {
        read_config_map(self, Path::new("toolgate.toml"))
    }

    pub fn config(&self) -> Config {
        Config::parse(&self.config_text(), "configmap")
            .unwrap_or_else(|error| panic!("{}: the ConfigMap's config: {error}", self.name))
    }
}

/// Checks one pod spec; returns its container ports by name.
fn check_pod(cluster: &Cluster, pod: &Value, what: &str) -> BTreeMap<String, u64> {
    let what = format!("{}: {what}", cluster.name);
    let security = &pod["securityContext"];
    assert_eq!(security["runAsNonRoot"].as_bool(), Some(true), "{what}: runAsNonRoot");
    assert_eq!(text(&security["seccompProfile"]["type"]), "RuntimeDefault", "{what}: seccomp");
    let mut volumes = BTreeMap::new();
    for volume in list(&pod["volumes"]) {
        let name = text(&volume["name"]).to_owned();
        if let Some(map) = volume["configMap"]["name"].as_str() {
            let keys = cluster.config_map_keys(map);
            volumes.insert(name, ("configMap", keys));
        } else if let Some(secret) = volume["secret"]["secretName"].as_str() {
            let keys =
                cluster.secrets.get(secret).cloned().unwrap_or_else(|| panic!("{what}: no Secret {secret}"));
            volumes.insert(name, ("secret", keys));
        } else if let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() {
            cluster.named("PersistentVolumeClaim", claim);
            volumes.insert(name, ("data", BTreeSet::new()));
        } else {
            panic!("{what}: volume {name} of an unexpected type");
        }
    }
    let mut ports = BTreeMap::new();
    for container in list(&pod["containers"]) {
        let security = &container["securityContext"];
        assert_eq!(security["readOnlyRootFilesystem"].as_bool(), Some(true), "{what}: read-only root");
        assert_eq!(security["allowPrivilegeEscalation"].as_bool(), Some(false), "{what}: no escalation");
        assert_eq!(list(&security["capabilities"]["drop"]), [Value::from("ALL")], "{what}: drop ALL");
        for port in list(&container["ports"]) {
            ports.insert(text(&port["name"]).to_owned(), port["containerPort"].as_u64().expect("port"));
        }
        for (probe, path) in
            [("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")]
        {
            let get = &container[probe]["httpGet"];
            // The gateway's own pods have all three; a maintenance pod has none.
            if get.is_mapping() || what.ends_with("Deployment") {
                assert_eq!(text(&get["path"]), path, "{what}: {probe}");
                assert!(ports.contains_key(text(&get["port"])), "{what}: {probe} names an unknown port");
            }
        }
        // Every mount names a volume; every `file:` secret in the configuration is a mounted key;
        // the embedded store lives on the data volume, a database store has none.
        let mounts: Vec<(&str, &str)> = list(&container["volumeMounts"])
            .iter()
            .map(|mount| (text(&mount["name"]), text(&mount["mountPath"])))
            .collect();
        let mounted = |file: &Path, kind: &str| {
            mounts.iter().any(|(volume, mount_path)| {
                let (volume_kind, keys) =
                    volumes.get(*volume).unwrap_or_else(|| panic!("{what}: no volume {volume}"));
                *volume_kind == kind
                    && file.parent() == Some(Path::new(mount_path))
                    && file.file_name().is_some_and(|name| keys.contains(name.to_str().unwrap_or_default()))
            })
        };
        let arguments: Vec<&str> = list(&container["args"]).iter().map(text).collect();
        let config = arguments.windows(2).find(|pair| pair[0] == "--config").map(|pair| Path::new(pair[1]));
        let config = config.unwrap_or_else(|| panic!("{what}: no --config argument"));
        assert!(mounted(config, "configMap"), "{what}: {} is not in a mounted ConfigMap", config.display());
        let toml = read_config_map(cluster, config);
        for file in secret_files(&toml) {
            assert!(mounted(&file, "secret"), "{what}: {} is not a key of a mounted Secret", file.display());
        }
        let parsed = Config::parse(&toml, "configmap").expect("the ConfigMap's config parses");
        let policy = parsed.policy_file.as_deref().unwrap_or_else(|| panic!("{what}: no policy file"));
        assert!(
            mounted(&config.parent().unwrap_or(config).join(policy), "configMap"),
            "{what}: the policy file {} is not in the mounted ConfigMap",
            policy.display()
        );
        match &parsed.store {
            StoreLocation::Directory(store) => assert!(
                mounts.iter().any(|(volume, path)| volumes[*volume].0 == "data" && store.starts_with(path)),
                "{what}: store.path {} is not on the data volume",
                store.display()
            ),
            StoreLocation::Database(DatabaseSettings { password, tls, .. }) => {
                assert!(
                    volumes.values().all(|(kind, _)| *kind != "data"),
                    "{what}: a volume beside a database store"
                );
                assert!(password.is_some(), "{what}: store.password is not set");
                if let DatabaseTls::VerifyFull { ca_file: Some(ca_file) } = tls
                    && ca_file.starts_with(config.parent().unwrap_or(config))
                {
                    assert!(mounted(ca_file, "configMap"), "{what}: store.ca_file is not a ConfigMap key");
                }
            }
            StoreLocation::Memory => panic!("{what}: store in memory"),
        }
        if what.ends_with("Deployment") {
            assert_eq!(
                ports.get("http"),
                Some(&u64::from(parsed.server.listen.port())),
                "{what}: http port = server.listen"
            );
            assert_eq!(
                ports.get("admin"),
                Some(&u64::from(parsed.server.admin_listen.port())),
                "{what}: admin port"
            );
        }
    }
    ports
}

/// The text of the ConfigMap key mounted as `file` (`/etc/toolgate/toolgate.toml`).
pub fn read_config_map(cluster: &Cluster, file: &Path) -> String {
    let key = file.file_name().and_then(|name| name.to_str()).unwrap_or_default();
    let map = cluster.of_kind("ConfigMap").find(|map| map["data"][key].is_string()).expect("ConfigMap");
    text(&map["data"][key]).to_owned()
}

/// Checks one kustomization: references, hardening, and the shape its store demands.
fn check_kustomization(cluster: &Cluster) {
    let name = cluster.name;
    let deployment = cluster.named("Deployment", "toolgate");
    let template = &deployment["spec"]["template"];
    let labels = &template["metadata"]["labels"];
    let ports = check_pod(cluster, &template["spec"], "Deployment");
    let grace = template["spec"]["terminationGracePeriodSeconds"].as_u64().expect("grace period");
    assert!(
        grace > 30 + 5,
        "{name}: the pod's grace period must exceed shutdown_grace plus the preStop pause"
    );
    for pod in &cluster.maintenance {
        check_pod(cluster, &pod["spec"], &format!("Pod {}", text(&pod["metadata"]["name"])));
    }
    let selects = |selector: &Value, what: &str| {
        let selector = selector.as_mapping().unwrap_or_else(|| panic!("{name}: {what}: no selector"));
        assert!(!selector.is_empty(), "{name}: {what}: empty selector");
        for (key, value) in selector {
            assert_eq!(&labels[text(key)], value, "{name}: {what} does not select the Deployment's pods");
        }
    };
    selects(&deployment["spec"]["selector"]["matchLabels"], "Deployment");

    // The store decides the shape.
    let config = cluster.config();
    let spec = &deployment["spec"];
    let strategy = &spec["strategy"];
    let budgets: Vec<&Value> = cluster.of_kind("PodDisruptionBudget").collect();
    assert_eq!(budgets.len(), 1, "{name}: one PodDisruptionBudget");
    let budget = &budgets[0]["spec"];
    selects(&budget["selector"]["matchLabels"], "PodDisruptionBudget");
    let claims = cluster.of_kind("PersistentVolumeClaim").count();
    if config.store.is_shared() {
        // Any replica serves any request: three, replaced one at a time, two kept through drains,
        // nothing written locally.
        assert_eq!(spec["replicas"].as_u64(), Some(3), "{name}: three replicas on the database");
        assert_eq!(text(&strategy["type"]), "RollingUpdate", "{name}: strategy");
        assert_eq!(strategy["rollingUpdate"]["maxUnavailable"].as_u64(), Some(1), "{name}: maxUnavailable");
        assert_eq!(strategy["rollingUpdate"]["maxSurge"].as_u64(), Some(1), "{name}: maxSurge");
        assert_eq!(budget["minAvailable"].as_u64(), Some(2), "{name}: minAvailable");
        assert!(budget["maxUnavailable"].is_null(), "{name}: minAvailable and maxUnavailable both set");
        assert_eq!(claims, 0, "{name}: a PersistentVolumeClaim beside a database store");
        let spread = list(&template["spec"]["topologySpreadConstraints"]);
        assert!(
            spread.iter().any(|constraint| text(&constraint["topologyKey"]) == "kubernetes.io/hostname"),
            "{name}: replicas spread over nodes"
        );
    } else {
        // The embedded store serves exactly one replica, replaced, never rolled.
        assert_eq!(spec["replicas"].as_u64(), Some(1), "{name}: one replica with the embedded store");
        assert_eq!(text(&strategy["type"]), "Recreate", "{name}: strategy");
        assert_eq!(budget["maxUnavailable"].as_u64(), Some(0), "{name}: drains wait for a person");
        assert_eq!(claims, 1, "{name}: the store's volume");
    }

    let service = cluster.named("Service", "toolgate");
    selects(&service["spec"]["selector"], "Service");
    let mut service_ports = BTreeSet::new();
    for port in list(&service["spec"]["ports"]) {
        assert!(ports.contains_key(text(&port["targetPort"])), "{name}: Service targets an unknown port");
        service_ports.insert(port["port"].as_u64().expect("port"));
    }
    // Exactly two ways in: the data plane to `http`, Prometheus to `admin`.
    let policy = cluster.named("NetworkPolicy", "toolgate");
    selects(&policy["spec"]["podSelector"]["matchLabels"], "NetworkPolicy");
    let opened: Vec<&str> = list(&policy["spec"]["ingress"])
        .iter()
        .flat_map(|rule| list(&rule["ports"]))
        .map(|port| text(&port["port"]))
        .collect();
    assert_eq!(opened, ["http", "admin"], "{name}: NetworkPolicy ports");

    // The route reaches the Service and carries every host the gateway answers for; it pins no
    // user to a replica.
    let route = cluster.named("HTTPRoute", "toolgate");
    for rule in list(&route["spec"]["rules"]) {
        assert!(rule["sessionPersistence"].is_null(), "{name}: the route pins sessions to a replica");
        for backend in list(&rule["backendRefs"]) {
            assert_eq!(text(&backend["name"]), "toolgate");
            assert!(
                service_ports.contains(&backend["port"].as_u64().expect("port")),
                "{name}: route to an unknown port"
            );
        }
    }
    let hostnames: BTreeSet<&str> = list(&route["spec"]["hostnames"]).iter().map(text).collect();
    let dashboard = config.dashboard.iter().map(|dashboard| dashboard.host.clone());
    for host in
        config.sites.iter().map(|site| site.host.clone()).chain([config.gateway_host()]).chain(dashboard)
    {
        assert!(hostnames.contains(host.as_str()), "{name}: HTTPRoute misses {host}");
    }
    let image = text(&template["spec"]["containers"][0]["image"]);
    assert!(
        list(&cluster.kustomization["images"]).iter().any(|entry| text(&entry["name"]) == image),
        "{name}: the image is not in kustomization.yaml's images"
    );
}

#[test]
fn kubernetes_replicas_on_postgres_reference_only_what_exists_and_roll_one_at_a_time() {
    let cluster = Cluster::load(REPLICAS);
    assert!(cluster.config().store.is_shared(), "deploy/kubernetes runs on the shared database");
    check_kustomization(&cluster);
}

#[test]
fn kubernetes_embedded_references_only_what_exists_and_runs_one_replica() {
    let cluster = Cluster::load(EMBEDDED);
    assert!(
        matches!(cluster.config().store, StoreLocation::Directory(_)),
        "deploy/kubernetes-embedded runs on the embedded store"
    );
    check_kustomization(&cluster);
}

/// The parts of a pod spec that follow from the store: replicas' spread and the data volume.
fn without_store_parts(pod: &Value) -> Value {
    let mut pod = pod.clone();
    let spec = pod.as_mapping_mut().expect("pod spec");
    spec.remove("topologySpreadConstraints");
    let security = spec.get_mut("securityContext").and_then(Value::as_mapping_mut).expect("securityContext");
    security.remove("fsGroupChangePolicy");
    let volumes = spec.get_mut("volumes").and_then(Value::as_sequence_mut).expect("volumes");
    volumes.retain(|volume| volume["persistentVolumeClaim"].is_null());
    for container in spec.get_mut("containers").and_then(Value::as_sequence_mut).expect("containers") {
        let mounts = container.get_mut("volumeMounts").and_then(Value::as_sequence_mut).expect("mounts");
        mounts.retain(|mount| text(&mount["name"]) != "data");
    }
    pod
}

#[test]
fn the_two_kustomizations_differ_only_in_the_store() {
    let (replicas, embedded) = (Cluster::load(REPLICAS), Cluster::load(EMBEDDED));
    // The same configuration but for [store], the same policy.
    let strip_store = |cluster: &Cluster| -> toml::Table {
        let mut table: toml::Table = cluster.config_text().parse().expect("toolgate.toml");
        assert!(table.remove("store").is_some(), "{}: no [store]", cluster.name);
        table
    };
    assert_eq!(
        strip_store(&replicas),
        strip_store(&embedded),
        "deploy/kubernetes/configmap.yaml and deploy/kubernetes-embedded/configmap.yaml differ \
         outside [store]"
    );
    assert_eq!(
        read_config_map(&replicas, Path::new("policy.toml")),
        read_config_map(&embedded, Path::new("policy.toml")),
        "the two kustomizations' policy.toml differ"
    );
    // The objects that do not depend on the store are the same.
    for kind in ["Namespace", "Service", "NetworkPolicy", "HTTPRoute"] {
        let one = |cluster: &Cluster| {
            let found: Vec<&Value> = cluster.of_kind(kind).collect();
            assert_eq!(found.len(), 1, "{}: one {kind}", cluster.name);
            found[0].clone()
        };
        assert_eq!(one(&replicas), one(&embedded), "the two kustomizations' {kind} objects differ");
    }
    // The same pod, but for the store's volume and the replicas' spread.
    assert_eq!(
        without_store_parts(replicas.pod()),
        without_store_parts(embedded.pod()),
        "the two Deployments' pods differ in more than the store's volume and the spread"
    );
    assert_eq!(
        replicas.secrets["toolgate-secrets"]
            .difference(&embedded.secrets["toolgate-secrets"])
            .collect::<Vec<_>>(),
        ["db-password"]
    );
    assert!(embedded.secrets["toolgate-secrets"].is_subset(&replicas.secrets["toolgate-secrets"]));
    for key in ["images", "namespace", "labels", "generatorOptions"] {
        assert_eq!(replicas.kustomization[key], embedded.kustomization[key], "kustomization.yaml: {key}");
    }
}
