//! Scratch probe (temporary).
use policy::redact::{RedactionSet, Redactor};

#[test]
fn probe() {
    let r = Redactor::default();
    let set = RedactionSet::builtin();
    let input = std::fs::read_to_string("/tmp/helper_probe.txt").expect("probe file");
    for case in input.split("\n---\n") {
        let out = r.redact(case, &set);
        let mark = if out.text == case { "UNCHANGED" } else { "changed  " };
        println!("{mark} | {}\n          => {}", case.replace('\n', "⏎"), out.text.replace('\n', "⏎"));
    }
}
