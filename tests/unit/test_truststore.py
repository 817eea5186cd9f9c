"""A JKS or PKCS12 truststore read as the PEM CA file librdkafka, Filebeat and the collector take:
stores made by the JDK's keytool and by cryptography, the certificates come out unchanged, and a
wrong password or a file that is not a store is one clear line (no process, no network)."""

from __future__ import annotations

import datetime
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.caps import SUBPROCESS_CAP_S
from tuner.core.errors import BadInput
from tuner.target.engine_security import SecretEnv, filebeat_security, otelcol_security
from tuner.target.security import ClientSecurity, librdkafka_config

STORE_PASSWORD = "kbt-unit-store-pw"  # planted: must not reach the PEM file


def _ca(name: str) -> x509.Certificate:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(key, hashes.SHA256())
    )


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBT_CACHE", str(tmp_path / "cache"))


def _pem_certificates(path: str) -> list[x509.Certificate]:
    data = Path(path).read_bytes()
    assert STORE_PASSWORD.encode() not in data
    return x509.load_pem_x509_certificates(data)


@settings(max_examples=5, deadline=None)
@given(st.integers(min_value=1, max_value=3))
def test_a_pkcs12_truststore_becomes_the_same_certificates_in_pem(count: int) -> None:
    import tempfile

    cas = [_ca(f"kbt unit CA {i}") for i in range(count)]
    store = pkcs12.serialize_key_and_certificates(
        None, None, None, cas, serialization.BestAvailableEncryption(STORE_PASSWORD.encode())
    )
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "trust.p12"
        path.write_bytes(store)
        sec = ClientSecurity("SSL", truststore=(str(path), "PKCS12", STORE_PASSWORD))
        ca_file = librdkafka_config(sec)["ssl.ca.location"]
        assert sorted(c.subject.rfc4514_string() for c in _pem_certificates(ca_file)) == sorted(
            c.subject.rfc4514_string() for c in cas
        )
        env = SecretEnv()
        assert filebeat_security(sec, env)["ssl"]["certificate_authorities"] == [ca_file]
        assert otelcol_security(sec, env)["tls"]["ca_file"] == ca_file
        wrong = ClientSecurity("SSL", truststore=(str(path), "PKCS12", "not-it"))
        with pytest.raises(
            BadInput, match=r"trust\.p12: not a PKCS12 store this ssl\.truststore\.password opens"
        ):
            librdkafka_config(wrong)


@pytest.mark.skipif(shutil.which("keytool") is None, reason="the JDK's keytool is installed by make install")
@pytest.mark.parametrize("kind", ["JKS", "PKCS12"])
def test_a_truststore_made_by_keytool_is_read(tmp_path: Path, kind: str) -> None:
    """What a Java shop has: a store made with `keytool -importcert` (JKS is read with keytool,
    PKCS12 in-process)."""
    ca = _ca(f"kbt unit {kind} CA")
    (tmp_path / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    store = tmp_path / f"trust.{kind.lower()}"
    subprocess.run(
        ["keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", str(tmp_path / "ca.pem"),
         "-keystore", str(store), "-storetype", kind, "-storepass", STORE_PASSWORD],
        check=True, capture_output=True, timeout=SUBPROCESS_CAP_S,
    )  # fmt: skip
    sec = ClientSecurity("SSL", truststore=(str(store), kind, STORE_PASSWORD))
    (certificate,) = _pem_certificates(librdkafka_config(sec)["ssl.ca.location"])
    assert certificate == ca
    with pytest.raises(BadInput, match=f"not a {kind} store this ssl.truststore.password opens"):
        librdkafka_config(ClientSecurity("SSL", truststore=(str(store), kind, "not-it")))


def test_a_file_that_is_not_a_store_is_one_line(tmp_path: Path) -> None:
    bogus = tmp_path / "trust.p12"
    bogus.write_bytes(b"not a store")
    with pytest.raises(BadInput, match="not a PKCS12 store"):
        librdkafka_config(ClientSecurity("SSL", truststore=(str(bogus), "PKCS12", None)))
    with pytest.raises(BadInput, match="kbt reads JKS, PKCS12 or PEM"):
        librdkafka_config(ClientSecurity("SSL", truststore=(str(bogus), "BCFKS", None)))
