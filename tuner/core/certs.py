"""A fresh self-signed CA: the lab's TLS listener signs its broker certificate with one, and a
Filebeat configuration check writes one where the configuration names its TLS files."""

from __future__ import annotations

import datetime
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
