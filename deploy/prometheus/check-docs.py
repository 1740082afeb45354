#!/usr/bin/env python3
"""Checks that the alerts documented in docs/operations.md ("Metrics to alert on"), the rules in
deploy/prometheus/alerts.yml and their tests in deploy/prometheus/alerts.test.yml agree:

- every expression in the table is the `expr` of a rule, character for character (`\\|` in the
  table is `|`), with the `for` the row names ("for 1 m") or none; a row "(same for `a`, `b`)"
  stands for the same expression on each of those metrics too;
- every rule's `expr` is in the table;
- every rule has a test in which it fires and one in which it stays quiet.

Whether those tests pass is for `promtool test rules`. Needs PyYAML (Debian: python3-yaml).
"""

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs/operations.md"
RULES = ROOT / "deploy/prometheus/alerts.yml"
TESTS = ROOT / "deploy/prometheus/alerts.test.yml"
SECTION = "## Metrics to alert on"


def documented_alerts():
    """(row, expression, for) for each alert in the table; `for` is "" when the row has none."""
    text = DOCS.read_text(encoding="utf-8")
    if "\n" + SECTION + "\n" not in text:
        sys.exit(f"check-docs: {DOCS.relative_to(ROOT)} has no section {SECTION!r}")
    section = text.split("\n" + SECTION + "\n", 1)[1].split("\n## ", 1)[0]
    alerts = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 3 or cells[0] == "alert" or set(cells[0]) <= {"-"}:
            continue
        row, expression_cell = cells[0], cells[1]
        spans = [span.replace("\\|", "|") for span in re.findall(r"`([^`]*)`", expression_cell)]
        prose = re.sub(r"`[^`]*`", "", expression_cell)
        if not spans:
            sys.exit(f"check-docs: row {row!r} has no `expression`")
        duration = re.search(r"\bfor (\d+) ?([smhd])\b", prose)
        duration = duration.group(1) + duration.group(2) if duration else ""
        expression = spans[0]
        alerts.append((row, expression, duration))
        if len(spans) > 1:
            if "same for" not in prose:
                sys.exit(f"check-docs: row {row!r} has several code spans and no '(same for …)'")
            metric = re.search(r"toolgate_\w+", expression).group(0)
            alerts += [(row, expression.replace(metric, other), duration) for other in spans[1:]]
    return alerts


def main():
    problems = []
    documented = documented_alerts()
    rules = [
        rule
        for group in yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]
    by_expression = {}
    for rule in rules:
        by_expression.setdefault(str(rule["expr"]).strip(), []).append(rule)

    for row, expression, duration in documented:
        matching = by_expression.get(expression, [])
        if not matching:
            problems.append(f"docs row {row!r}: no rule in alerts.yml has the expr\n    {expression}")
        for rule in matching:
            if str(rule.get("for", "")) != duration:
                problems.append(
                    f"rule {rule['alert']}: for is {rule.get('for', 'not set')!r}, the docs row "
                    f"{row!r} says {duration or 'none'!r}"
                )
    documented_expressions = {expression for _, expression, _ in documented}
    for rule in rules:
        if str(rule["expr"]).strip() not in documented_expressions:
            problems.append(
                f"rule {rule['alert']}: its expr is not in the table of {DOCS.relative_to(ROOT)}\n"
                f"    {str(rule['expr']).strip()}"
            )

    fires, quiet = set(), set()
    for test in yaml.safe_load(TESTS.read_text(encoding="utf-8"))["tests"]:
        for check in test.get("alert_rule_test", []):
            (fires if check.get("exp_alerts") else quiet).add(check["alertname"])
    for rule in rules:
        if rule["alert"] not in fires:
            problems.append(f"rule {rule['alert']}: no test in alerts.test.yml expects it to fire")
        if rule["alert"] not in quiet:
            problems.append(f"rule {rule['alert']}: no test in alerts.test.yml expects it to stay quiet")

    if problems:
        print("check-docs: the alerts in docs/operations.md, alerts.yml and alerts.test.yml disagree:",
              file=sys.stderr)
        for problem in problems:
            print("  - " + problem, file=sys.stderr)
        sys.exit(1)
    print(f"ok: {len(documented)} documented alerts, {len(rules)} rules, each with a test where it "
          "fires and one where it stays quiet")


if __name__ == "__main__":
    main()
