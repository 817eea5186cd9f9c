"""PKCS12 truststores for tests of kbt's truststore reading: a self-signed CA and a store holding
it, built by the `cryptography` package (imported where used: the bad-input catalog loads this
module lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePrivateKey
    from cryptography.x509 import Certificate


def self_signed_ca(common_name: str) -> tuple[EllipticCurvePrivateKey, Certificate]:
    """An EC P-256 key and a CA certificate it signs for itself, valid for a day."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    ca = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    return key, ca


def ca_truststore(password: bytes, common_name: str) -> bytes:
    """A PKCS12 truststore holding one self-signed CA, encrypted with the library's best choice."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    _, ca = self_signed_ca(common_name)
    encryption = serialization.BestAvailableEncryption(password)
    return pkcs12.serialize_key_and_certificates(None, None, None, [ca], encryption)
