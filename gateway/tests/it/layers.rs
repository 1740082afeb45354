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
    &["approvals", "dashboard_state", "llm", "outcomes", "policy_store", "sso"],
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
    let graph = ModuleGraph::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(layer, names)| names.iter().map(move |name| (*name, layer)))
        .collect();
    let unplaced: BTreeSet<&String> = graph
        .modules
        .keys()
        .filter_map(|module| module.first())
        .filter(|name| !layer_of.contains_key(name.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules without a layer (add them to LAYERS and ARCHITECTURE.md): {unplaced:?}"
    );

    let mut violations = Vec::new();
    for module in graph.modules.keys() {
        let Some(own_name) = module.first() else { continue };
        let own = layer_of[own_name.as_str()];
        for used in graph.imports(module) {
            let Some(used_name) = used.first() else { continue };
            let layer = layer_of[used_name.as_str()];
            if used_name != own_name && layer >= own {
                violations.push(format!(
                    "{} imports {} (layer {layer} >= {own})",
                    module.join("::"),
                    used.join("::")
                ));
            }
        }
    }
    assert!(violations.is_empty(), "imports against the layers:\n{}", violations.join("\n"));
}

#[test]
fn the_reader_sees_plain_and_grouped_imports_and_skips_tests() {
    let mut graph = ModuleGraph { modules: BTreeMap::new() };
    for module in ["http", "audit", "sso", "state", "routes"] {
        graph.insert(vec![module.to_owned()], "");
    }
    graph.insert(
        vec!["a".to_owned()],
        "use crate::http::body;\nuse crate::{audit::{self, event}, sso};\n// crate::routes in a comment\n\
         fn f() { crate::state::x(); }\n#[cfg(test)]\nmod tests { use crate::routes; }",
    );
    let found: BTreeSet<String> =
        graph.imports(&["a".to_owned()]).into_iter().map(|path| path.join("::")).collect();
    assert_eq!(found, ["audit", "http", "sso", "state"].map(String::from).into_iter().collect());
}

/// The text before the first `#[cfg(test)]`: test modules sit at the end of a file and may use
/// anything.
fn without_tests(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or(text)
}

fn leading_name(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
        .collect()
}

/// No crate of the workspace has a module cycle, at the level of single files: a module never
/// imports (through `crate::`, `super::` or `self::` paths outside its tests) a module that
/// imports it back, directly or through others. A parent naming its own children by their bare
/// names is how Rust's module tree works and is not counted.
#[test]
fn no_module_cycles_in_any_crate() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for krate in ["gateway", "policy", "injector", "dashboard"] {
        let graph = ModuleGraph::read(&workspace.join(krate).join("src"));
        assert!(graph.modules.len() > 5, "{krate}: modules were read");
        if let Some(cycle) = graph.cycle() {
            panic!("{krate}: module cycle {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle_through_super_paths() {
    let mut graph = ModuleGraph { modules: BTreeMap::new() };
    for (module, text) in [
        ("a", "use crate::b::Thing;"),
        ("b", "use super::c::{self, Other};"),
        ("c", "fn f() { crate::a::go(); }"),
        ("d", "use crate::a;"),
    ] {
        graph.modules.insert(vec![module.to_owned()], text.to_owned());
    }
    assert_eq!(graph.cycle().map(|cycle| cycle.len()), Some(4), "a -> b -> c -> a");
    graph.modules.insert(vec!["c".to_owned()], String::new());
    assert_eq!(graph.cycle(), None);
}

/// Modules by path (`["redact", "phone", "metadata"]`), each with its source outside tests and
/// comments.
struct ModuleGraph {
    modules: BTreeMap<Vec<String>, String>,
}

impl ModuleGraph {
    fn read(src: &Path) -> Self {
        let mut graph = Self { modules: BTreeMap::new() };
        let mut pending = vec![src.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).expect("a readable folder") {
                let path = entry.expect("a directory entry").path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
                // Test-only modules (`tests.rs`, `*_tests.rs`, `tests/`) may use anything.
                if path.is_dir() {
                    if name != "tests" {
                        pending.push(path);
                    }
                    continue;
                }
                if !name.ends_with(".rs") || name.ends_with("tests.rs") {
                    continue;
                }
                let relative = path.strip_prefix(src).expect("below src").with_extension("");
                let mut module: Vec<String> =
                    relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                if module.last().is_some_and(|last| last == "mod") || module == ["lib"] || module == ["main"]
                {
                    module.pop();
                }
                graph.insert(module, &std::fs::read_to_string(&path).expect("a readable source file"));
            }
        }
        graph
    }

    /// Adds a module's source, keeping only code outside tests and comments.
    fn insert(&mut self, module: Vec<String>, text: &str) {
        let code: Vec<&str> =
            without_tests(text).lines().filter(|line| !line.trim_start().starts_with("//")).collect();
        self.modules.insert(module, code.join("\n"));
    }

    /// The modules `module` imports (never itself).
    fn imports(&self, module: &[String]) -> BTreeSet<Vec<String>> {
        let text = &self.modules[module];
        let mut found = BTreeSet::new();
        for (at, _) in text.match_indices("::") {
            // Only paths that start here: `crate::`, `self::`, `super::` (not `a::super::`).
            let head_start =
                text[..at].rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
            let head = &text[head_start..at];
            if text[..head_start].ends_with("::") {
                continue;
            }
            let mut base: Vec<String> = match head {
                "crate" => Vec::new(),
                "self" => module.to_vec(),
                "super" => module[..module.len().saturating_sub(1)].to_vec(),
                _ => continue,
            };
            let mut rest = &text[at + 2..];
            while let Some(more) = rest.strip_prefix("super::") {
                base.pop();
                rest = more;
            }
            for path in expand(rest) {
                let mut full = base.clone();
                full.extend(path.into_iter().filter(|segment| segment != "self"));
                while !full.is_empty() && !self.modules.contains_key(&full) {
                    full.pop();
                }
                if full != module && self.modules.contains_key(&full) {
                    found.insert(full);
                }
            }
        }
        found
    }

    /// One cycle, as module paths, if there is any.
    fn cycle(&self) -> Option<Vec<String>> {
        let edges: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> =
            self.modules.keys().map(|module| (module, self.imports(module))).collect();
        // Depth-first search with colours: an edge to a module on the stack closes a cycle.
        let mut state: BTreeMap<&Vec<String>, bool> = BTreeMap::new(); // false: on stack, true: done
        for start in self.modules.keys() {
            if state.contains_key(start) {
                continue;
            }
            let mut stack: Vec<(&Vec<String>, Vec<&Vec<String>>)> =
                vec![(start, edges[start].iter().collect())];
            state.insert(start, false);
            while let Some((module, next)) = stack.last_mut() {
                let module = *module;
                match next.pop() {
                    Some(target) => {
                        let target = self.modules.get_key_value(target).map(|(key, _)| key).expect("known");
                        match state.get(target) {
                            Some(false) => {
                                let from = stack.iter().position(|(m, _)| *m == target).unwrap_or(0);
                                let mut cycle: Vec<String> =
                                    stack[from..].iter().map(|(m, _)| m.join("::")).collect();
                                cycle.push(target.join("::"));
                                return Some(cycle);
                            }
                            Some(true) => {}
                            None => {
                                state.insert(target, false);
                                stack.push((target, edges[target].iter().collect()));
                            }
                        }
                    }
                    None => {
                        state.insert(module, true);
                        stack.pop();
                    }
                }
            }
        }
        None
    }
}

/// The paths a `use` tail names: `a::b::C` is one, `a::{b, c::{D, E}}` several.
fn expand(tail: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut rest = tail;
    loop {
        let name = leading_name(rest);
        if name.is_empty() {
            break;
        }
        rest = &rest[rest.find(name.as_str()).map_or(rest.len(), |i| i + name.len())..];
        segments.push(name);
        match rest.strip_prefix("::") {
            Some(more) => rest = more,
            None => return vec![segments],
        }
    }
    let Some(group) = rest.strip_prefix('{') else { return vec![segments] };
    let mut depth = 1;
    let mut start = 0;
    let mut paths = Vec::new();
    for (index, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 1 => {
                for inner in expand(&group[start..index]) {
                    paths.push(segments.iter().cloned().chain(inner).collect());
                }
                start = index + 1;
                if c == '}' {
                    return paths;
                }
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    paths
}
