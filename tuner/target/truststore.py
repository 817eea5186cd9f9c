"""A Java truststore (JKS or PKCS12) as the PEM CA file librdkafka, Filebeat and the collector read.

A Java shop's target file names `ssl.truststore.location`; kbt's own clients of a run (topic
config, read-back) are librdkafka, and two of its shippers read PEM only. Rather than refuse the
target, the store's trusted certificates are written once as PEM under kbt's cache, named by the
store's hash (certificates are public; the store password is used to open it and never written).
PKCS12 is read by cryptography in a child process (a store's key derivation runs as many rounds as
the store asks for, inside a library call no signal interrupts: a child is stopped by Ctrl-C,
SIGTERM or the time limit); its MAC iteration count is read from the DER first and held to Java's
own cap. JKS needs the JDK's keytool. The password goes to either in its environment, never on a
command line.
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


def mac_iterations(data: bytes) -> int | None:
    """The MAC iteration count of a PKCS12 store (PFX: version, authSafe, macData {mac, salt,
    iterations DEFAULT 1}), read off its DER without deriving anything; None when it has no MAC or
    is not that shape."""
    try:
        tag, start, end = _der(data, 0)
        if tag != 0x30:
            return None
        parts: list[tuple[int, int, int]] = []
        at = start
        while at < end and len(parts) < 3:
            tag, inner, after = _der(data, at)
            parts.append((tag, inner, after))
            at = after
        if len(parts) < 3 or parts[2][0] != 0x30:
            return None
        _, at, mac_end = parts[2]
        fields: list[tuple[int, int, int]] = []
        while at < mac_end and len(fields) < 3:
            tag, inner, after = _der(data, at)
            fields.append((tag, inner, after))
            at = after
        if len(fields) < 3:
            return 1
        tag, inner, after = fields[2]
        if tag != 0x02 or after - inner > 8:
            return None if tag != 0x02 else 1 << 62
        return int.from_bytes(data[inner:after], "big", signed=True)
    except ValueError:
        return None


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


def _pkcs12_certificates(data: bytes, password: str | None, shown: str) -> bytes:
    iterations = mac_iterations(data)
    if iterations is not None and not 1 <= iterations <= MAX_PKCS12_ITERATIONS:
        raise BadInput(
            f"{shown}: a MAC iteration count of {iterations:,} (Java reads PKCS12 stores of 1 to"
            f" {MAX_PKCS12_ITERATIONS:,}): not a store kbt opens"
        )
    env = {k: v for k, v in os.environ.items() if k != _PASSWORD_ENV}
    if password:
        env[_PASSWORD_ENV] = password
    try:
        # subprocess.run kills the child on any exception, KeyboardInterrupt (Ctrl-C, and SIGTERM
        # as kbt's handler raises it) included.
        proc = subprocess.run(
            [sys.executable, "-I", "-c", _CHILD],
            input=data,
            env=env,
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
    env = {k: v for k, v in os.environ.items() if k != _PASSWORD_ENV}
    if password:
        command += ["-storepass:env", _PASSWORD_ENV]
        env[_PASSWORD_ENV] = password
    try:
        proc = subprocess.run(
            command,
            env=env,
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
