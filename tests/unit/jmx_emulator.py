"""jmx_exporter 1.0.1's rule semantics in Python, enough to check kafka-broker.yml offline.

- includeObjectNames: JMX ObjectName patterns (key=value pairs, values may use * and ?, a trailing
  ",*" allows other keys);
- each attribute is matched as "domain<k1=v1, k2=v2><>Attribute: value" against
  ^.*(?:pattern).*$ (the agent wraps every pattern like that); the first matching rule wins;
- name and label templates expand $N (a group that did not take part expands to ""); names are
  lowercased with lowercaseOutputName; empty label values are dropped (as the agent does).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML


@dataclass(frozen=True)
class Output:
    name: str
    labels: tuple[tuple[str, str], ...]
    type: str
    rule: int  # index of the rule that produced it
    source: str  # the corpus line


@dataclass
class Rules:
    raw: dict[str, Any]
    patterns: list[re.Pattern[str]] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> Rules:
        raw = YAML(typ="safe").load(path.read_text())
        rules = cls(raw)
        rules.patterns = [re.compile(r"^.*(?:" + r["pattern"] + r").*$", re.S) for r in raw["rules"]]
        return rules

    @property
    def rules(self) -> list[dict[str, Any]]:
        return list(self.raw["rules"])

    def included(self, line: str) -> bool:
        patterns = self.raw.get("includeObjectNames")
        if not patterns:
            return True
        domain, props = parse_bean(line)
        return any(object_name_matches(p, domain, props) for p in patterns)

    def apply(self, line: str, value: str = "1.0") -> Output | None:
        subject = f"{line}: {value}"
        for index, (rule, pattern) in enumerate(zip(self.rules, self.patterns, strict=True)):
            m = pattern.fullmatch(subject)
            if m is None:
                continue
            name = expand(rule["name"], m)
            if self.raw.get("lowercaseOutputName"):
                name = name.lower()
            name = re.sub(r"[^a-zA-Z0-9:_]", "_", name)
            labels = []
            for key, template in (rule.get("labels") or {}).items():
                label = key.lower() if self.raw.get("lowercaseOutputLabelNames") else key
                val = expand(str(template), m)
                if val != "":
                    labels.append((label, val))
            return Output(name, tuple(sorted(labels)), str(rule.get("type", "UNTYPED")), index, line)
        return None


def expand(template: str, m: re.Match[str]) -> str:
    return re.sub(r"\$(\d)", lambda g: m.group(int(g.group(1))) or "", template)


def parse_bean(line: str) -> tuple[str, list[tuple[str, str]]]:
    domain, rest = line.split("<", 1)
    props_text = rest.split(">", 1)[0]
    props = [tuple(p.split("=", 1)) for p in props_text.split(", ") if "=" in p]
    return domain, [(k, v) for k, v in props]


def object_name_matches(pattern: str, domain: str, props: list[tuple[str, str]]) -> bool:
    pat_domain, pat_props = pattern.split(":", 1)
    if not fnmatch.fnmatchcase(domain, pat_domain):
        return False
    parts = pat_props.split(",")
    wildcard = parts[-1] == "*"
    wanted = dict(p.split("=", 1) for p in parts if p != "*")
    have = dict(props)
    for key, val in wanted.items():
        if key not in have or not fnmatch.fnmatchcase(have[key], val):
            return False
    return wildcard or set(have) == set(wanted)


def load_corpus(path: Path) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
