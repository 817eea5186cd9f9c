"""Lab security material and the broker/client properties of a `--security sasl_ssl` lab."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import pkcs12

from tuner.core.errors import BadInput
from tuner.lab.config import LabConfig
from tuner.lab.layout import LabLayout
from tuner.lab.node_config import broker_properties
from tuner.lab.security import PASSWORD_ENV, SecurityFiles, client_properties, create_material, read_secret


def _lab(tmp_path: Path) -> tuple[LabConfig, LabLayout, SecurityFiles]:
    cfg = LabConfig.parse({"lab_dir": tmp_path, "base_port": 30000, "security": "sasl_ssl"})
    layout = LabLayout(cfg.lab_dir)
    files = SecurityFiles(layout.security_dir)
    create_material(files)
    return cfg, layout, files


def test_material_is_private_and_verifiable(tmp_path: Path) -> None:
    _, _, files = _lab(tmp_path)
    for secret in (files.keystore, files.keystore_password_file, files.sasl_password_file):
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600, secret
    ca = x509.load_pem_x509_certificate(files.ca_cert.read_bytes())
    key, cert, _chain = pkcs12.load_key_and_certificates(
        files.keystore.read_bytes(), read_secret(files.keystore_password_file).encode()
    )
    assert key is not None and cert is not None
    assert cert.issuer == ca.subject
    cert.verify_directly_issued_by(ca)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "127.0.0.1" in [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)]


def test_broker_gets_a_sasl_ssl_listener_next_to_plaintext(tmp_path: Path) -> None:
    cfg, layout, files = _lab(tmp_path)
    props = broker_properties(cfg, layout, 2)
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:30002,SECURE://127.0.0.1:30032"
    assert props["advertised.listeners"] == props["listeners"]
    assert props["inter.broker.listener.name"] == "PLAINTEXT"
    assert props["listener.security.protocol.map"].endswith(",SECURE:SASL_SSL")
    assert props["listener.name.secure.sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert props["listener.name.secure.ssl.keystore.location"] == str(files.keystore)
    assert ("broker 2 SASL_SSL listener", 30032) in cfg.named_ports()


def test_plaintext_lab_has_no_secure_listener(tmp_path: Path) -> None:
    cfg = LabConfig.parse({"lab_dir": tmp_path, "base_port": 30000})
    props = broker_properties(cfg, LabLayout(cfg.lab_dir), 1)
    assert "SECURE" not in props["listeners"]
    assert not any("SASL_SSL" in what for what, _ in cfg.named_ports())


def test_client_properties_read_the_password_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PASSWORD_ENV, "from-the-env-0123")
    _, _, files = _lab(tmp_path)
    props = client_properties(files)
    assert props["security.protocol"] == "SASL_SSL"
    assert props["sasl.mechanisms"] == "SCRAM-SHA-512"
    assert props["sasl.password"] == "from-the-env-0123"
    assert props["ssl.ca.location"] == str(files.ca_cert)


def test_short_env_password_is_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PASSWORD_ENV, "short")
    with pytest.raises(BadInput, match="at least 8 characters"):
        create_material(SecurityFiles(tmp_path / "security"))


def test_unknown_security_mode_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="security"):
        LabConfig.parse({"lab_dir": tmp_path, "security": "ssl_only"})
