"""Lab security (`kbt lab up --security sasl_ssl`): a CA made per lab, a broker certificate for
127.0.0.1/localhost, and a SCRAM-SHA-512 user, served on a second listener per broker.

Brokers keep their PLAINTEXT listener for inter-broker traffic and for side-by-side plaintext runs;
clients choose per run (`security: sasl_ssl` in a client profile). Secrets live only in files under
`<lab>/security/` (mode 0600): the SCRAM password (or `KBT_LAB_SASL_PASSWORD` when set) and the
keystore password. They are passed to clients in memory and registered with the redaction layer;
they never appear on a command line, in `kbt lab status`, in run records or in logs.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from tuner.core.certs import new_ca
from tuner.core.errors import BadInput, EnvironmentProblem
from tuner.core.redact import register_secret
from tuner.lab.config import LOOPBACK

SCRAM_MECHANISM = "SCRAM-SHA-512"
SCRAM_ITERATIONS = 8192
USERNAME = "kbt"
LISTENER = "SECURE"
PASSWORD_ENV = "KBT_LAB_SASL_PASSWORD"
CERT_DAYS = 30
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


@dataclass(frozen=True)
class SecurityFiles:
    """Where a lab keeps its security material."""

    root: Path

    @property
    def ca_cert(self) -> Path:
        return self.root / "ca.pem"

    @property
    def keystore(self) -> Path:
        return self.root / "broker.p12"

    @property
    def keystore_password_file(self) -> Path:
        return self.root / "keystore-password"

    @property
    def sasl_password_file(self) -> Path:
        return self.root / "sasl-password"


def _write_private(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def read_secret(path: Path) -> str:
    """A secret from a file (first line, stripped), registered for redaction."""
    try:
        value = path.read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, IndexError, UnicodeDecodeError):
        raise EnvironmentProblem(
            f"cannot read the lab secret file {path.name}: run 'kbt lab up' again"
        ) from None
    return register_secret(value)


def sasl_password_from_env() -> str | None:
    value = os.environ.get(PASSWORD_ENV)
    if value is None:
        return None
    if len(value) < 8:
        raise BadInput(f"{PASSWORD_ENV} must be at least 8 characters")
    return register_secret(value)


def create_material(files: SecurityFiles) -> None:
    """A fresh CA, a broker key and certificate in a PKCS#12 keystore, and the passwords."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_key, ca_cert = new_ca("kbt lab CA", CERT_DAYS)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(ca_cert.not_valid_before_utc)
        .not_valid_after(ca_cert.not_valid_after_utc)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address(LOOPBACK))]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    keystore_password = secrets.token_urlsafe(18)
    store = pkcs12.serialize_key_and_certificates(
        b"broker",
        key,
        cert,
        [ca_cert],
        serialization.BestAvailableEncryption(keystore_password.encode()),
    )
    files.root.mkdir(parents=True, exist_ok=True, mode=0o700)
    files.ca_cert.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    _write_private(files.keystore, store)
    _write_private(files.keystore_password_file, keystore_password.encode())
    sasl_password = sasl_password_from_env() or secrets.token_urlsafe(18)
    _write_private(files.sasl_password_file, sasl_password.encode())
    register_secret(keystore_password)
    register_secret(sasl_password)


def broker_listener_properties(files: SecurityFiles) -> dict[str, str]:
    """server.properties entries for the SASL_SSL listener (the listener itself is added by the
    caller to `listeners`)."""
    prefix = f"listener.name.{LISTENER.lower()}"
    mech = SCRAM_MECHANISM.lower()
    return {
        "sasl.enabled.mechanisms": SCRAM_MECHANISM,
        f"{prefix}.sasl.enabled.mechanisms": SCRAM_MECHANISM,
        f"{prefix}.{mech}.sasl.jaas.config": SCRAM_LOGIN_MODULE,
        f"{prefix}.ssl.keystore.type": "PKCS12",
        f"{prefix}.ssl.keystore.location": str(files.keystore),
        f"{prefix}.ssl.keystore.password": read_secret(files.keystore_password_file),
        f"{prefix}.ssl.client.auth": "none",
    }


def create_user(plain_bootstrap: str, files: SecurityFiles, timeout_s: float = 30.0) -> None:
    """Create the SCRAM user through the PLAINTEXT listener (no password on any command line)."""
    from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    from tuner.core.errors import KbtError
    from tuner.core.kafka_clients import Connection, admin_client, outcome

    admin = admin_client(Connection(plain_bootstrap))
    upsert = UserScramCredentialUpsertion(
        USERNAME,
        ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS),
        read_secret(files.sasl_password_file).encode(),
    )
    futures = admin.alter_user_scram_credentials([upsert], request_timeout=timeout_s)
    for future in futures.values():
        try:  # no answer in `timeout_s` was a TimeoutError traceback, a refusal the KafkaError's repr
            outcome(future, timeout_s, "create the lab's SCRAM user")
        except KbtError as exc:
            raise EnvironmentProblem(exc.message) from None


def client_properties(files: SecurityFiles) -> dict[str, str]:
    """librdkafka properties for the SASL_SSL listener (the password is read from its file)."""
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanisms": SCRAM_MECHANISM,
        "sasl.username": USERNAME,
        "sasl.password": read_secret(files.sasl_password_file),
        "ssl.ca.location": str(files.ca_cert),
        "ssl.endpoint.identification.algorithm": "https",
    }


def wait_until_secure(secure_bootstrap: str, files: SecurityFiles, timeout_s: float) -> None:
    """Wait until a SCRAM login over TLS works on every broker's SASL_SSL listener (the user's
    credentials take a moment to reach every broker)."""
    import time

    from tuner.core.errors import Unreachable
    from tuner.core.kafka_clients import Connection, admin_client, metadata

    deadline = time.monotonic() + timeout_s
    for address in secure_bootstrap.split(","):
        conn = Connection(address, client_properties(files))
        last = ""
        while True:
            try:  # librdkafka's words (the KafkaError's repr was said)
                meta = metadata(admin_client(conn, {"socket.timeout.ms": 5000}), 5)
                if meta.brokers:
                    break
            except Unreachable as exc:
                last = exc.message
            if time.monotonic() > deadline:
                raise EnvironmentProblem(f"the SASL_SSL listener {address} refused the lab user: {last}")
            time.sleep(0.5)
