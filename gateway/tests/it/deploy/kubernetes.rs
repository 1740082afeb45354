//! The Kubernetes manifests: they parse, and everything they reference exists: ConfigMap and
//! Secret keys (the Secret's are the files the operator provides), volumes, ports named by probes,
//! the Service, the NetworkPolicy and the route, and the configuration's own secret files, store
//! path and listen ports inside the pod.

use super::{deploy, list, read, secret_files, text};
use serde_yaml_ng::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The Kubernetes objects: what kustomization.yaml applies, and the maintenance pods.
pub struct Cluster {
    pub objects: Vec<Value>,
    maintenance: Vec<Value>,
    /// Secret name → keys (the secretGenerator's files, provided by the operator).
    secrets: BTreeMap<String, BTreeSet<String>>,
    kustomization: Value,
}

impl Cluster {
    pub fn load() -> Self {
        let directory = deploy().join("kubernetes");
        let documents = |path: &Path| -> Vec<Value> {
            serde_yaml_ng::Deserializer::from_str(&read(path))
                .map(|document| {
                    serde::Deserialize::deserialize(document)
                        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
                })
                .collect()
        };
        let kustomization = documents(&directory.join("kustomization.yaml")).remove(0);
        let objects = list(&kustomization["resources"])
            .iter()
            .flat_map(|resource| documents(&directory.join(text(resource))))
            .collect();
        let maintenance = std::fs::read_dir(directory.join("maintenance"))
            .expect("maintenance/")
            .flat_map(|entry| documents(&entry.expect("entry").path()))
            .collect();
        let mut secrets = BTreeMap::new();
        let readme = read(&directory.join("secrets/README.md"));
        for generator in list(&kustomization["secretGenerator"]) {
            let keys: BTreeSet<String> = list(&generator["files"])
                .iter()
                .map(|file| {
                    let file = text(file);
                    assert!(file.starts_with("secrets/"), "{file}: operator files live in secrets/");
                    let key =
                        file.split_once('=').map_or(file.rsplit('/').next().unwrap_or(file), |(key, _)| key);
                    assert!(readme.contains(&format!("`{key}`")), "secrets/README.md must explain `{key}`");
                    key.to_owned()
                })
                .collect();
            secrets.insert(text(&generator["name"]).to_owned(), keys);
        }
        Self { objects, maintenance, secrets, kustomization }
    }

    pub fn named<'a>(&'a self, kind: &str, name: &str) -> &'a Value {
        self.objects
            .iter()
            .find(|object| text(&object["kind"]) == kind && text(&object["metadata"]["name"]) == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    }

    fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> {
        self.objects.iter().filter(move |object| text(&object["kind"]) == kind)
    }

    fn config_map_keys(&self, name: &str) -> BTreeSet<String> {
        let data = self.named("ConfigMap", name)["data"].as_mapping().expect("data");
        data.keys().map(|key| text(key).to_owned()).collect()
    }
}

/// Checks one pod spec; returns its container ports by name.
fn check_pod(cluster: &Cluster, pod: &Value, what: &str) -> BTreeMap<String, u64> {
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
            if get.is_mapping() {
                assert_eq!(text(&get["path"]), path, "{what}: {probe}");
                assert!(ports.contains_key(text(&get["port"])), "{what}: {probe} names an unknown port");
            }
        }
        // Every mount names a volume; every `file:` secret in the configuration is a mounted key;
        // the store lives on the data volume.
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
        let parsed =
            gateway::config::Config::parse(&toml, "configmap").expect("the ConfigMap's config parses");
        let gateway::config::StoreLocation::Directory(store) = &parsed.store else {
            panic!("{what}: store in memory")
        };
        assert!(
            mounts.iter().any(|(volume, path)| volumes[*volume].0 == "data" && store.starts_with(path)),
            "{what}: store.path {} is not on the data volume",
            store.display()
        );
        if what == "Deployment" {
            assert_eq!(
                ports.get("http"),
                Some(&u64::from(parsed.server.listen.port())),
                "http port = server.listen"
            );
            assert_eq!(ports.get("admin"), Some(&u64::from(parsed.server.admin_listen.port())), "admin port");
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

#[test]
fn kubernetes_manifests_reference_only_what_exists() {
    let cluster = Cluster::load();
    let deployment = cluster.named("Deployment", "toolgate");
    // The embedded store serves exactly one replica, replaced, never rolled.
    assert_eq!(deployment["spec"]["replicas"].as_u64(), Some(1), "one replica with the embedded store");
    assert_eq!(text(&deployment["spec"]["strategy"]["type"]), "Recreate");
    let template = &deployment["spec"]["template"];
    let labels = &template["metadata"]["labels"];
    let ports = check_pod(&cluster, &template["spec"], "Deployment");
    let grace = template["spec"]["terminationGracePeriodSeconds"].as_u64().expect("grace period");
    assert!(grace > 30 + 5, "the pod's grace period must exceed shutdown_grace plus the preStop pause");
    for pod in &cluster.maintenance {
        check_pod(&cluster, &pod["spec"], &format!("Pod {}", text(&pod["metadata"]["name"])));
    }
    let selects = |selector: &Value, what: &str| {
        let selector = selector.as_mapping().unwrap_or_else(|| panic!("{what}: no selector"));
        assert!(!selector.is_empty(), "{what}: empty selector");
        for (key, value) in selector {
            assert_eq!(&labels[text(key)], value, "{what} does not select the Deployment's pods");
        }
    };
    selects(&deployment["spec"]["selector"]["matchLabels"], "Deployment");

    let service = cluster.named("Service", "toolgate");
    selects(&service["spec"]["selector"], "Service");
    let mut service_ports = BTreeSet::new();
    for port in list(&service["spec"]["ports"]) {
        assert!(ports.contains_key(text(&port["targetPort"])), "Service targets an unknown port");
        service_ports.insert(port["port"].as_u64().expect("port"));
    }
    for budget in cluster.of_kind("PodDisruptionBudget") {
        selects(&budget["spec"]["selector"]["matchLabels"], "PodDisruptionBudget");
    }
    // Exactly two ways in: the data plane to `http`, Prometheus to `admin`.
    let policy = cluster.named("NetworkPolicy", "toolgate");
    selects(&policy["spec"]["podSelector"]["matchLabels"], "NetworkPolicy");
    let opened: Vec<&str> = list(&policy["spec"]["ingress"])
        .iter()
        .flat_map(|rule| list(&rule["ports"]))
        .map(|port| text(&port["port"]))
        .collect();
    assert_eq!(opened, ["http", "admin"], "NetworkPolicy ports");

    // The route reaches the Service and carries every host the gateway answers for.
    let route = cluster.named("HTTPRoute", "toolgate");
    for backend in list(&route["spec"]["rules"]).iter().flat_map(|rule| list(&rule["backendRefs"])) {
        assert_eq!(text(&backend["name"]), "toolgate");
        assert!(service_ports.contains(&backend["port"].as_u64().expect("port")), "route to an unknown port");
    }
    let config =
        gateway::config::Config::parse(&read_config_map(&cluster, Path::new("toolgate.toml")), "configmap")
            .expect("config");
    let hostnames: BTreeSet<&str> = list(&route["spec"]["hostnames"]).iter().map(text).collect();
    let dashboard = config.dashboard.iter().map(|dashboard| dashboard.host.clone());
    for host in
        config.sites.iter().map(|site| site.host.clone()).chain([config.gateway_host()]).chain(dashboard)
    {
        assert!(hostnames.contains(host.as_str()), "HTTPRoute misses {host}");
    }
    let image = text(&template["spec"]["containers"][0]["image"]);
    assert!(list(&cluster.kustomization["images"]).iter().any(|entry| text(&entry["name"]) == image));
}
