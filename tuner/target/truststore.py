"""A Java truststore (JKS or PKCS12) as the PEM CA file librdkafka, Filebeat and the collector read.

A Java shop's target file names `ssl.truststore.location`; kbt's own clients of a run (topic
config, read-back) are librdkafka, and two of its shippers read PEM only. Rather than refuse the
target, the store's trusted certificates are written once as PEM under kbt's cache, named by the
store's hash (certificates are public; the store password is used to open it and never written).
PKCS12 is read by cryptography in a child process (a store's key derivation runs as many rounds as
the store asks for, inside a library call no signal interrupts: a child is stopped by Ctrl-C,
SIGTERM or the time limit); the iteration counts of its MAC and of every bag's encryption are read
from the DER first and held to Java's own cap, each and together. Only derivations named inside an
encrypted bag (or in a store written in BER) reach the child unread, under its limit. JKS needs
the JDK's keytool. The password goes to either in its environment, never on a command line.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.inputs import read_bytes, shown_path
from tuner.core.paths import cache_dir
from tuner.core.writes import atomic_write

MAX_TRUSTSTORE_BYTES = 4 * 1024 * 1024  # a store of thousands of CAs is still well under this
KEYTOOL_TIMEOUT_S = 30.0
PKCS12_TIMEOUT_S = 30.0
# sun.security.pkcs12.PKCS12KeyStore's MAX_ITERATION_COUNT: a store Java would refuse is refused.
MAX_PKCS12_ITERATIONS = 5_000_000
# Rounds of every derivation a store asks for together (its MAC and each encrypted bag): a store of
# many bags each at Java's cap is still minutes of derivation; two at the cap take a few seconds.
MAX_PKCS12_TOTAL_ITERATIONS = 2 * MAX_PKCS12_ITERATIONS
# The DER walk that finds them: elements visited and nesting, far past any real store's.
_MAX_DER_ELEMENTS = 200_000
_MAX_DER_DEPTH = 32
# Algorithm identifiers (the OID's DER contents) of password-based encryption with a salt and an
# iteration count as the first two parameters: PKCS#12's own PBE schemes (1.2.840.113549.1.12.1.x),
# PKCS#5 v1.5 (1.2.840.113549.1.5.1-11) and PBKDF2 (1.2.840.113549.1.5.12, inside PBES2).
_PKCS12_PBE = bytes.fromhex("2a864886f70d010c01")  # and one byte more
_PKCS5 = bytes.fromhex("2a864886f70d0105")  # and one byte more
_PKCS5_WITH_ROUNDS = {1, 3, 4, 6, 10, 11, 12}
_SCRYPT = bytes.fromhex("2b06010401da47040b")  # 1.3.6.1.4.1.11591.4.11: Java's PKCS12 never uses it
_PEM_CERT = re.compile(rb"-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END CERTIFICATE-----")
_PASSWORD_ENV = "KBT_TRUSTSTORE_PASSWORD"


def truststore_ca_file(location: str, kind: str, password: str | None, where: str) -> str:
    """The path of a PEM file holding the trusted certificates of the store at `location`."""
    data = read_bytes(location, "truststore", MAX_TRUSTSTORE_BYTES)
    shown = shown_path(location)
    if kind == "PKCS12":
        pem = _pkcs12_certificates(data, password, f"{where}: {shown}")
    elif kind == "JKS":
        pem = _jks_certificates(location, password, f"{where}: {shown}")
    else:
        raise BadInput(f"{where}: ssl.truststore.type {kind!r}: kbt reads JKS, PKCS12 or PEM")
    digest = hashlib.sha256(kind.encode() + b"\0" + data).hexdigest()[:32]
    path = cache_dir() / "truststores" / f"{digest}.pem"
    if not path.is_file():
        atomic_write(path, pem, "CA file")
    return str(path)


def _der(data: bytes, at: int) -> tuple[int, int, int]:
    """(tag, start of the contents, end of the contents) of the DER element at `at`; ValueError
    when it runs past the data."""
    if at + 2 > len(data):
        raise ValueError("truncated")
    tag, length = data[at], data[at + 1]
    at += 2
    if length & 0x80:
        n = length & 0x7F
        if n == 0 or n > 4 or at + n > len(data):
            raise ValueError("bad length")
        length = int.from_bytes(data[at : at + n], "big")
        at += n
    if at + length > len(data):
        raise ValueError("truncated")
    return tag, at, at + length


def _children(data: bytes, at: int, end: int, most: int) -> list[tuple[int, int, int]]:
    """The first `most` elements of a constructed element's contents [at, end), as `_der` reads them."""
    out: list[tuple[int, int, int]] = []
    while at < end and len(out) < most:
        out.append(_der(data, at))
        at = out[-1][2]
    return out


def mac_iterations(data: bytes) -> int | None:
    """The MAC iteration count of a PKCS12 store (PFX: version, authSafe, macData {mac, salt,
    iterations DEFAULT 1}), read off its DER without deriving anything; None when it has no MAC or
    is not that shape."""
    try:
        tag, start, end = _der(data, 0)
        if tag != 0x30:
            return None
        parts = _children(data, start, end, 3)
        if len(parts) < 3 or parts[2][0] != 0x30:
            return None
        fields = _children(data, parts[2][1], parts[2][2], 3)
        if len(fields) < 3:
            return 1
        tag, inner, after = fields[2]
        if tag != 0x02 or after - inner > 8:
            return None if tag != 0x02 else 1 << 62
        return int.from_bytes(data[inner:after], "big", signed=True)
    except ValueError:
        return None


def key_derivations(data: bytes) -> list[tuple[str, int]] | None:
    """Every key derivation a PKCS12 store names outside its encrypted parts (the MAC's is
    mac_iterations'): the bags' PBE and PBKDF2 parameters, found by walking its DER, into every
    OCTET STRING that holds DER, without deriving anything. Each is (scheme, rounds): "pbe", or
    "scrypt" (whose cost is not rounds: 0). None when the store is not DER kbt can walk (BER's
    indefinite lengths, a truncated file): the child opens it then, under its time limit and
    interruptible."""
    found: list[tuple[str, int]] = []
    budget = [_MAX_DER_ELEMENTS]
    try:
        _walk_der(data, 0, len(data), 0, found, budget)
    except ValueError:
        return None
    return found


def _walk_der(
    data: bytes, at: int, end: int, depth: int, found: list[tuple[str, int]], budget: list[int]
) -> None:
    while at < end:
        budget[0] -= 1
        if budget[0] < 0 or depth > _MAX_DER_DEPTH:
            raise ValueError("too many elements")
        tag, inner, after = _der(data, at)
        if after > end:
            raise ValueError("overruns its parent")
        if tag == 0x30:
            _derivation(data, inner, after, found)
        if tag & 0x20:  # constructed: SEQUENCE, SET, [n] EXPLICIT
            _walk_der(data, inner, after, depth + 1, found, budget)
        elif tag == 0x04 and after > inner and data[inner] == 0x30:  # an OCTET STRING wrapping DER
            inside: list[tuple[str, int]] = []
            try:
                _walk_der(data, inner, after, depth + 1, inside, budget)
            except ValueError:
                inside = []  # opaque bytes that began like DER (ciphertext, a key)
            found += inside
        at = after


def _derivation(data: bytes, at: int, end: int, found: list[tuple[str, int]]) -> None:
    """An AlgorithmIdentifier {OID, params} of a password-based scheme: its iteration count."""
    tag, inner, after = _der(data, at)
    if tag != 0x06 or after >= end:
        return
    oid = data[inner:after]
    if oid == _SCRYPT:
        found.append(("scrypt", 0))
        return
    rounds = (oid[:-1] == _PKCS12_PBE and len(oid) == len(_PKCS12_PBE) + 1) or (
        oid[:-1] == _PKCS5 and len(oid) == len(_PKCS5) + 1 and oid[-1] in _PKCS5_WITH_ROUNDS
    )
    if not rounds:
        return
    tag, params, params_end = _der(data, after)
    if tag != 0x30:
        raise ValueError("PBE parameters are not a SEQUENCE")
    _, _, salt_end = _der(data, params)  # the salt (PBKDF2: its `specified` OCTET STRING)
    tag, count, count_end = _der(data, salt_end)
    if tag != 0x02 or count_end > params_end:
        raise ValueError("PBE parameters without an iteration count")
    wide = count_end - count > 8  # past any count a derivation could finish
    found.append(("pbe", 1 << 62 if wide else int.from_bytes(data[count:count_end], "big", signed=True)))


def check_derivations(data: bytes, shown: str) -> None:
    """Refuse at once a store whose key derivation would run for minutes: a MAC or bag iteration
    count past Java's cap, or all of them together past MAX_PKCS12_TOTAL_ITERATIONS."""
    mac = mac_iterations(data)
    if mac is not None and not 1 <= mac <= MAX_PKCS12_ITERATIONS:
        raise BadInput(
            f"{shown}: a MAC iteration count of {mac:,} (Java reads PKCS12 stores of 1 to"
            f" {MAX_PKCS12_ITERATIONS:,}): not a store kbt opens"
        )
    derivations = key_derivations(data) or []
    if any(scheme == "scrypt" for scheme, _ in derivations):
        raise BadInput(
            f"{shown}: a bag encrypted with an scrypt key (Java's PKCS12 uses PBKDF2): not a store kbt opens"
        )
    bags = [count for _, count in derivations]
    for count in bags:
        if not 1 <= count <= MAX_PKCS12_ITERATIONS:
            raise BadInput(
                f"{shown}: a bag's key derivation of {count:,} iterations (Java reads PKCS12 stores of 1"
                f" to {MAX_PKCS12_ITERATIONS:,}): not a store kbt opens"
            )
    total = (mac or 0) + sum(bags)
    if total > MAX_PKCS12_TOTAL_ITERATIONS:
        raise BadInput(
            f"{shown}: {len(bags) + (mac is not None)} key derivations of {total:,} iterations together"
            f" (kbt opens stores of at most {MAX_PKCS12_TOTAL_ITERATIONS:,}): not a store kbt opens"
        )


# The child: the store on stdin, its password in the environment, the certificates' PEM on stdout;
# exit 3: not a store this password opens, 4: no certificate in it.
_CHILD = """
import os, sys
from cryptography.hazmat.primitives.serialization import Encoding, pkcs12
password = os.environ.get("KBT_TRUSTSTORE_PASSWORD")
try:
    store = pkcs12.load_pkcs12(sys.stdin.buffer.read(), password.encode() if password else None)
except ValueError:
    sys.exit(3)
certificates = [c.certificate for c in store.additional_certs]
if store.cert is not None:
    certificates.append(store.cert.certificate)
if not certificates:
    sys.exit(4)
sys.stdout.buffer.write(b"".join(c.public_bytes(Encoding.PEM) for c in certificates))
"""


def _password_env(password: str | None) -> dict[str, str]:
    """This process's environment for a child that opens a store: the password in it, or none."""
    env = {k: v for k, v in os.environ.items() if k != _PASSWORD_ENV}
    return env | {_PASSWORD_ENV: password} if password else env


def _pkcs12_certificates(data: bytes, password: str | None, shown: str) -> bytes:
    check_derivations(data, shown)
    try:
        # subprocess.run kills the child on any exception, KeyboardInterrupt (Ctrl-C, and SIGTERM
        # as kbt's handler raises it) included.
        proc = subprocess.run(
            [sys.executable, "-I", "-c", _CHILD],
            input=data,
            env=_password_env(password),
            capture_output=True,
            timeout=PKCS12_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BadInput(
            f"{shown}: the PKCS12 store did not open within {PKCS12_TIMEOUT_S:.0f} s"
            " (its key derivation asks for too many rounds)"
        ) from None
    if proc.returncode == 4:
        raise BadInput(f"{shown}: the truststore holds no certificate")
    if proc.returncode != 0 or not proc.stdout:
        raise BadInput(
            f"{shown}: not a PKCS12 store this ssl.truststore.password opens (wrong password or not PKCS12)"
        )
    return proc.stdout


def _jks_certificates(location: str, password: str | None, shown: str) -> bytes:
    keytool = shutil.which("keytool")
    if keytool is None:
        raise BadInput(f"{shown}: a JKS truststore is read with the JDK's keytool, not found on PATH")
    command = [keytool, "-list", "-rfc", "-keystore", str(Path(location)), "-storetype", "JKS"]
    if password:
        command += ["-storepass:env", _PASSWORD_ENV]
    try:
        proc = subprocess.run(
            command,
            env=_password_env(password),
            capture_output=True,
            timeout=KEYTOOL_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BadInput(
            f"{shown}: keytool did not read the truststore within {KEYTOOL_TIMEOUT_S:.0f} s"
        ) from None
    certificates = _PEM_CERT.findall(proc.stdout)
    if proc.returncode != 0 or not certificates:
        raise BadInput(
            f"{shown}: not a JKS store this ssl.truststore.password opens (wrong password, not JKS,"
            " or no certificate in it)"
        )
    return b"\n".join(certificates) + b"\n"
