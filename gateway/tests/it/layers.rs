//! The gateway crate's layers (ARCHITECTURE.md, "Layers"): every top-level module of
//! `gateway/src` imports only modules of lower layers, so the modules form no cycle and the
//! shared state never imports a handler. Read from the source, as `crate::…` paths outside
//! tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Bottom to top. A module may import the modules of the layers below its own, none above and
/// none beside it.
const LAYERS: [&[&str]; 11] = [
    &["config", "metrics", "store", "support"],
    &["http"],
    &["audit", "inventory", "net"],
    &["approvals", "dashboard_state", "llm", "policy_store", "sso"],
    &["state"],
    &["admin", "agent", "approvals_http", "page"],
    &["dashboard_http", "openai", "proxy"],
    &["routes"],
    &["app"],
    &["demo"],
    &["cli"],
];

#[test]
fn every_module_imports_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(layer, names)| names.iter().map(move |name| (*name, layer)))
        .collect();
    let mut modules = BTreeSet::new();
    for entry in std::fs::read_dir(&src).expect("gateway/src is readable") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_stem().and_then(|stem| stem.to_str()).expect("a UTF-8 name").to_owned();
        if name != "lib" && name != "main" && (path.is_dir() || path.extension().is_some_and(|e| e == "rs")) {
            modules.insert(name);
        }
    }
    let unplaced: Vec<&String> =
        modules.iter().filter(|name| !layer_of.contains_key(name.as_str())).collect();
    assert!(
        unplaced.is_empty(),
        "modules without a layer (add them to LAYERS and ARCHITECTURE.md): {unplaced:?}"
    );

    let mut violations = Vec::new();
    for module in &modules {
        let own = layer_of[module.as_str()];
        for file in rust_files(&src.join(module), &src.join(format!("{module}.rs"))) {
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            for used in imported_modules(without_tests(&text)) {
                let Some(&layer) = layer_of.get(used.as_str()) else { continue };
                if used != *module && layer >= own {
                    violations.push(format!("{} imports {used} (layer {layer} >= {own})", file.display()));
                }
            }
        }
    }
    assert!(violations.is_empty(), "imports against the layers:\n{}", violations.join("\n"));
}

#[test]
fn the_reader_sees_plain_and_grouped_imports_and_skips_tests() {
    let text = "use crate::http::body;\nuse crate::{audit::{self, event}, sso};\nfn f() { crate::state::x(); }\n\
                #[cfg(test)]\nmod tests { use crate::routes; }";
    let found: BTreeSet<String> = imported_modules(without_tests(text)).into_iter().collect();
    assert_eq!(found, ["audit", "http", "sso", "state"].map(String::from).into_iter().collect());
}

/// The module's files: the folder's, or the single file.
fn rust_files(folder: &Path, file: &Path) -> Vec<std::path::PathBuf> {
    if !folder.is_dir() {
        return vec![file.to_path_buf()];
    }
    let mut files = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("a readable folder") {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
            if path.is_dir() {
                if name != "tests" {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") && !name.ends_with("tests.rs") {
                files.push(path);
            }
        }
    }
    files
}

/// The text before the first `#[cfg(test)]`: test modules sit at the end of a file and may use
/// anything.
fn without_tests(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or(text)
}

/// The top-level modules named by `crate::name` and by the items of `crate::{…}` groups.
fn imported_modules(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(index, _)| index);
            let mut item_depth = 0;
            let mut start = 0;
            for (index, c) in group[..end].char_indices().chain([(end, ',')]) {
                match c {
                    '{' => item_depth += 1,
                    '}' => item_depth -= 1,
                    ',' if item_depth == 0 => {
                        found.push(leading_name(&group[start..index]));
                        start = index + 1;
                    }
                    _ => {}
                }
            }
        } else {
            found.push(leading_name(rest));
        }
    }
    found.retain(|name| !name.is_empty());
    found
}

fn leading_name(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
        .collect()
}
