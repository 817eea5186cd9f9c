"""A Java truststore (JKS or PKCS12) as the PEM CA file librdkafka, Filebeat and the collector read.

A Java shop's target file names `ssl.truststore.location`; kbt's own clients of a run (topic
config, read-back) are librdkafka, and two of its shippers read PEM only. Rather than refuse the
target, the store's trusted certificates are written once as PEM under kbt's cache, named by the
store's hash (certificates are public; the store password is used to open it and never written).
PKCS12 is read in-process (cryptography); JKS needs the JDK's keytool, the password handed over in
its environment, never on its command line.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from tuner.core.errors import BadInput
from tuner.core.inputs import read_bytes, shown_path
from tuner.core.paths import cache_dir
from tuner.core.writes import atomic_write

MAX_TRUSTSTORE_BYTES = 4 * 1024 * 1024  # a store of thousands of CAs is still well under this
KEYTOOL_TIMEOUT_S = 30.0
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


def _pkcs12_certificates(data: bytes, password: str | None, shown: str) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, pkcs12

    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError:
        raise BadInput(
            f"{shown}: not a PKCS12 store this ssl.truststore.password opens (wrong password or not PKCS12)"
        ) from None
    certificates = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certificates.append(store.cert.certificate)
    if not certificates:
        raise BadInput(f"{shown}: the truststore holds no certificate")
    return b"".join(c.public_bytes(Encoding.PEM) for c in certificates)


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
