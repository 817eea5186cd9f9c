"""Toxiproxy in the lab (`kbt lab up --via-toxiproxy`): one proxy per broker in front of its client
listener, the broker advertising the proxy, replication on a direct internal listener.

The server (`toxiproxy-server`, built by the install step into the cache) reads its proxies from a
JSON file at start; toxics are added and removed over its HTTP API while a run is going.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import requests

from tuner.core.errors import EnvironmentProblem, Unreachable
from tuner.core.paths import cache_dir
from tuner.lab.config import LOOPBACK, LabConfig
from tuner.lab.layout import LabLayout

COMPONENT_TOXIPROXY = "toxiproxy"
API_TIMEOUT_S = 5.0
STREAMS = ("upstream", "downstream")  # client -> broker, broker -> client


def find_toxiproxy() -> str:
    binary = cache_dir() / "bin" / "toxiproxy-server"
    if not binary.is_file():
        raise EnvironmentProblem(f"toxiproxy-server not found at {binary} (run 'make install')")
    return str(binary)


def proxy_name(node_id: int) -> str:
    return f"broker-{node_id}"


def proxies(cfg: LabConfig) -> list[dict[str, Any]]:
    """Proxy N listens where broker N advertises its client listener and forwards to that listener."""
    return [
        {
            "name": proxy_name(node),
            "listen": f"{LOOPBACK}:{cfg.proxy_port(node)}",
            "upstream": f"{LOOPBACK}:{cfg.broker_port(node)}",
            "enabled": True,
        }
        for node in cfg.node_ids
    ]


def config_file(layout: LabLayout) -> Path:
    return layout.root / COMPONENT_TOXIPROXY / "proxies.json"


def write_config(cfg: LabConfig, layout: LabLayout) -> Path:
    path = config_file(layout)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(proxies(cfg), indent=2) + "\n")
    return path


def toxiproxy_command(cfg: LabConfig, layout: LabLayout, binary: str) -> list[str]:
    return [
        binary,
        "-host",
        LOOPBACK,
        "-port",
        str(cfg.toxiproxy_api_port),
        "-config",
        str(config_file(layout)),
    ]


class Toxiproxy:
    """The lab's Toxiproxy API: add and remove toxics, enable and disable proxies."""

    def __init__(self, api_port: int) -> None:
        self.url = f"http://{LOOPBACK}:{api_port}"

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            resp = requests.request(method, self.url + path, json=body, timeout=API_TIMEOUT_S)
        except requests.RequestException as exc:
            raise Unreachable(f"toxiproxy API at {self.url} not answering ({type(exc).__name__})") from None
        if resp.status_code >= 300:
            raise Unreachable(f"toxiproxy {method} {path}: HTTP {resp.status_code} {resp.text.strip()[:200]}")
        return resp.json() if resp.content else None

    def version(self) -> str:
        try:
            resp = requests.get(self.url + "/version", timeout=API_TIMEOUT_S)
        except requests.RequestException:
            return ""
        return resp.text.strip() if resp.status_code == 200 else ""

    def add_toxic(self, proxy: str, name: str, kind: str, stream: str, attributes: dict[str, Any]) -> None:
        body = {"name": name, "type": kind, "stream": stream, "toxicity": 1.0, "attributes": attributes}
        self._call("POST", f"/proxies/{proxy}/toxics", body)

    def remove_toxic(self, proxy: str, name: str) -> None:
        self._call("DELETE", f"/proxies/{proxy}/toxics/{name}")

    def toxics(self, proxy: str) -> list[str]:
        return [t["name"] for t in self._call("GET", f"/proxies/{proxy}/toxics") or []]

    def reset(self) -> None:
        """Every proxy enabled, every toxic removed."""
        self._call("POST", "/reset")
