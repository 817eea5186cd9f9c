"""A PKCS12 store whose key derivation would run for minutes is refused at once; one whose rounds
are within Java's caps but still long stops on SIGTERM.

The stores are real: cryptography writes them, then the iteration count of a bag's PBKDF2 is set in
the DER and the MAC computed again (RFC 7292's key derivation and HMAC, written out below and
checked against the MAC cryptography wrote), so the MAC is valid and only the rounds are hostile.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.hazmat.primitives.serialization.pkcs12 import PBES
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.pkcs12_stores import self_signed_ca
from tuner.core.errors import BadInput
from tuner.target.truststore import (
    MAX_PKCS12_ITERATIONS,
    MAX_PKCS12_TOTAL_ITERATIONS,
    key_derivations,
    mac_iterations,
    truststore_ca_file,
)

pytestmark = pytest.mark.wall_clock

PASSWORD = "rounds-S3cret"
_PBKDF2 = bytes.fromhex("2a864886f70d01050c")
_SHA256 = bytes.fromhex("608648016503040201")


def _tlv(tag: int, body: bytes) -> bytes:
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + body


def _parse(data: bytes) -> list[tuple[int, bytes]]:
    out, at = [], 0
    while at < len(data):
        tag, length = data[at], data[at + 1]
        at += 2
        if length & 0x80:
            size = length & 0x7F
            length = int.from_bytes(data[at : at + size], "big")
            at += size
        if at + length > len(data):
            raise ValueError("truncated")
        out.append((tag, data[at : at + length]))
        at += length
    return out


def _integer(n: int) -> bytes:
    return _tlv(0x02, n.to_bytes((n.bit_length() + 8) // 8, "big", signed=True))


def _with_rounds(data: bytes, rounds: list[int], password: str = PASSWORD) -> bytes:
    """`data` with its PBKDF2 iteration counts set to `rounds`, in the order they appear, and its
    MAC computed again with `password` (tests/e2e/bad_inputs.py builds its case with it too)."""
    left = list(rounds)

    def walk(buf: bytes) -> bytes:
        out = b""
        for tag, body in _parse(buf):
            kids = _parse(body) if tag & 0x20 else []
            if tag == 0x30 and len(kids) > 1 and kids[0] == (0x06, _PBKDF2) and left:
                params = _parse(kids[1][1])
                fields = [_tlv(t, b) for t, b in params]
                fields[1] = _integer(left.pop(0))
                body = _tlv(0x06, _PBKDF2) + _tlv(0x30, b"".join(fields))
            elif tag & 0x20:
                body = walk(body)
            elif tag == 0x04 and body[:1] == b"\x30":
                with contextlib.suppress(ValueError, IndexError):  # ciphertext that began like DER
                    body = walk(body)
            out += _tlv(tag, body)
        return out

    patched = walk(data)
    assert not left, "the store has fewer PBKDF2 derivations than rounds given"
    return _with_valid_mac(patched, password)


def _pkcs12_kdf(password: str, salt: bytes, purpose: int, iterations: int, size: int) -> bytes:
    """RFC 7292 appendix B.2 with SHA-256 (u = 32, v = 64)."""
    u, v = 32, 64

    def fill(raw: bytes) -> bytes:
        return (raw * (v * math.ceil(len(raw) / v) // max(len(raw), 1) + 1))[: v * math.ceil(len(raw) / v)]

    block = fill(salt) + fill(password.encode("utf-16-be") + b"\0\0")
    out = b""
    while len(out) < size:
        a = bytes([purpose]) * v + block
        for _ in range(iterations):
            a = hashlib.sha256(a).digest()
        out += a
        b = int.from_bytes((a * (v // u + 1))[:v], "big")
        block = b"".join(
            ((int.from_bytes(block[j : j + v], "big") + b + 1) % (1 << (v * 8))).to_bytes(v, "big")
            for j in range(0, len(block), v)
        )
    return out[:size]


def _with_valid_mac(pfx: bytes, password: str = PASSWORD) -> bytes:
    """The store's MAC computed again over its (changed) contents, at its own salt and count."""
    [(_, top)] = _parse(pfx)
    version, auth_safe, mac_data = _parse(top)
    _, explicit = _parse(auth_safe[1])[1]
    [(_, content)] = _parse(explicit)
    digest_info, salt, count = _parse(mac_data[1])
    algorithm, _ = _parse(digest_info[1])
    assert _parse(algorithm[1])[0] == (0x06, _SHA256), "the test store's MAC is HMAC-SHA256"
    iterations = int.from_bytes(count[1], "big")
    key = _pkcs12_kdf(password, salt[1], 3, iterations, 32)
    mac = hmac.new(key, content, hashlib.sha256).digest()
    new_digest = _tlv(0x30, _tlv(0x30, algorithm[1]) + _tlv(0x04, mac))
    new_mac = _tlv(0x30, new_digest + _tlv(0x04, salt[1]) + _tlv(0x02, count[1]))
    return _tlv(0x30, _tlv(*version) + _tlv(*auth_safe) + new_mac)


def _store(with_key: bool = False, password: str = PASSWORD) -> bytes:
    key, ca = self_signed_ca("kbt rounds CA")
    encryption = (
        serialization.PrivateFormat.PKCS12.encryption_builder()
        .kdf_rounds(2048)
        .key_cert_algorithm(PBES.PBESv2SHA256AndAES256CBC)
        .hmac_hash(hashes.SHA256())
        .build(password.encode())
    )
    if with_key:
        return pkcs12.serialize_key_and_certificates(b"k", key, ca, [ca], encryption)
    return pkcs12.serialize_key_and_certificates(None, None, None, [ca], encryption)


@pytest.fixture(scope="module")
def store() -> bytes:
    return _store()


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBT_CACHE", str(tmp_path / "cache"))


def test_the_mac_is_computed_as_cryptography_computes_it(store: bytes) -> None:
    """The helper's MAC is byte for byte the one cryptography wrote: a patched store's MAC is valid."""
    assert _with_valid_mac(store) == store
    assert key_derivations(store) == [("pbe", 2048)] and mac_iterations(store) == 2048
    assert key_derivations(_with_rounds(store, [2**31 - 1])) == [("pbe", 2**31 - 1)]


def _read(data: bytes, where: Path) -> str:
    path = where / "trust.p12"
    path.write_bytes(data)
    return truststore_ca_file(str(path), "PKCS12", PASSWORD, "--command-config c.properties")


def test_a_readable_store_still_opens(store: bytes, tmp_path: Path) -> None:
    pem = Path(_read(_with_rounds(store, [2048]), tmp_path)).read_text()  # rounds as written
    assert pem.count("BEGIN CERTIFICATE") == 1


@settings(max_examples=12, deadline=None)
@given(rounds=st.sampled_from([2**31 - 1, MAX_PKCS12_ITERATIONS + 1, 2**62, 2**80, 0, -1]))
def test_a_bag_of_hostile_rounds_is_refused_at_once(
    store: bytes, tmp_path_factory: pytest.TempPathFactory, rounds: int
) -> None:
    data = _with_rounds(store, [rounds])
    started = time.monotonic()
    with pytest.raises(BadInput) as err:
        _read(data, tmp_path_factory.mktemp("p"))
    took = time.monotonic() - started
    text = str(err.value)
    assert took < 1.0, took
    assert "\n" not in text and PASSWORD not in text, text
    assert "bag's key derivation of" in text and f"{MAX_PKCS12_ITERATIONS:,}" in text, text


def test_rounds_together_past_the_total_are_refused_at_once(tmp_path: Path) -> None:
    """Two bags (the certificate's and the key's) each at Java's cap: each is allowed, together
    with the MAC they are past the total."""
    data = _with_rounds(_store(with_key=True), [MAX_PKCS12_ITERATIONS, MAX_PKCS12_ITERATIONS])
    started = time.monotonic()
    with pytest.raises(BadInput) as err:
        _read(data, tmp_path)
    assert time.monotonic() - started < 1.0
    assert f"at most {MAX_PKCS12_TOTAL_ITERATIONS:,}" in str(err.value), str(err.value)


_READER = """
import sys
from tuner.cli import signals
from tuner.target.truststore import truststore_ca_file
signals.install()
try:
    truststore_ca_file(sys.argv[1], "PKCS12", sys.argv[2], "--command-config c.properties")
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
print("finished", flush=True)
"""


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed child waits for init to reap it once kbt is gone)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_long_derivation_within_the_caps_stops_on_sigterm(store: bytes, tmp_path: Path) -> None:
    """Java's cap on a bag (seconds of PBKDF2) is let through: its derivation runs in a child, and
    SIGTERM stops kbt at once, the child with it."""
    path = tmp_path / "slow.p12"
    path.write_bytes(_with_rounds(store, [MAX_PKCS12_ITERATIONS]))
    env = {**os.environ, "KBT_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [sys.executable, "-c", _READER, str(path), PASSWORD], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 20
        while not (children := _children(proc.pid)) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert children, "the store was not opened in a child process"
        time.sleep(0.3)
        assert proc.poll() is None, "the derivation ended before SIGTERM: too short to test"
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
        assert time.monotonic() - sent < 1.5
        assert proc.returncode == 130 and out.strip() == "interrupted", (proc.returncode, out)
        assert not any(_running(c) for c in children), "the child outlived kbt"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
