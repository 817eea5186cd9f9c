"""A fresh self-signed CA: the lab's TLS listener signs its broker certificate with one, and the
client configuration checks write one where a configuration names TLS files this machine lacks."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def new_ca(common_name: str, days: int) -> tuple[Any, Any]:
    """An EC key and its CA certificate (cryptography objects), valid from five minutes ago (clock
    skew between the processes that read it) for `days`."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .sign(key, hashes.SHA256())
    )
    return key, cert


@dataclass(frozen=True)
class PemFiles:
    ca: Path
    cert: Path
    key: Path


def placeholder_pems(directory: Path) -> PemFiles:
    """A self-signed certificate (as CA and as client certificate) and its unencrypted key as PEM
    files in `directory`, written once: what a check hands a client for the TLS files it reads
    when it is built."""
    files = PemFiles(directory / "ca.pem", directory / "cert.pem", directory / "key.pem")
    if files.key.exists():
        return files
    from cryptography.hazmat.primitives import serialization

    key, cert = new_ca("kbt check", days=1)
    pem = cert.public_bytes(serialization.Encoding.PEM)
    files.ca.write_bytes(pem)
    files.cert.write_bytes(pem)
    files.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return files
