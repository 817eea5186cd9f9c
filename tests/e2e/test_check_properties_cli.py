"""`kbt check librdkafka` and `kbt check java` as a subprocess: the rendered file of every librdkafka
and Java profile under loadtests/profiles/ (as `kbt recommend` writes one: a header over the
artifact) passes the client's own parser, each line naming the durability the client runs with;
a file the client refuses is one line on stderr, exit 2, no traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.kbt_process import kbt, user_env
from tuner.core.envref import ENV_CONFIG_PROVIDER as ENV_PROVIDER
from tuner.core.paths import repo_root
from tuner.driver.java_plan import engine_dir
from tuner.spec.clients import kind_of
from tuner.spec.loader import load_profile

pytestmark = pytest.mark.e2e


def _kbt(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return kbt(*args, cwd=cwd, env=user_env())


def _rendered(client: str, tmp_path: Path) -> dict[str, str]:
    """File name -> the durability its profile states, for every profile of `client`."""
    out = {}
    for path in sorted((repo_root() / "loadtests" / "profiles").glob("*.yaml")):
        profile = load_profile(path)
        if profile.client != client:
            continue
        kind = kind_of(profile)
        name = f"{path.stem}.properties"
        (tmp_path / name).write_text(kind.render(profile, ["Recommended by kbt", ""]).text)
        out[name] = ", ".join(f"{k} {v}" for k, v in kind.durability(profile).items())
    return out


@pytest.mark.parametrize("client", ["librdkafka", "java"])
def test_every_rendered_profile_passes_and_says_its_durability(client: str, tmp_path: Path) -> None:
    if client == "java" and not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.fail("the Java engine is not built: run 'make install'")
    files = _rendered(client, tmp_path)
    assert len(files) >= 3
    proc = _kbt("check", client, *files, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    said = dict(line.split(": ok (", 1) for line in proc.stdout.splitlines())
    assert set(said) == set(files)
    for name, durability in files.items():
        # the client's own words: Java spells acks all -1, as librdkafka does
        assert said[name].rstrip(")") == durability.replace("acks all", "acks -1"), name


@pytest.mark.parametrize(
    ("client", "text", "line"),
    [
        (
            "librdkafka",
            "acks=1\nenable.idempotence=true\n",
            "kbt: error: bad.properties:1: librdkafka refuses acks: `acks` must be set to `all` when"
            " `enable.idempotence` is true",
        ),
        (  # librdkafka names its own alias of the property: the file's name and line are given
            "librdkafka",
            "# batching\nlinger.ms=soon\n",
            "kbt: error: bad.properties:2: librdkafka refuses linger.ms: Invalid value for configuration"
            ' property "queue.buffering.max.ms"',
        ),
        (
            "java",
            "linger.ms=soon\n",
            "kbt: error: bad.properties: the Java producer refuses it: Invalid value soon for configuration"
            " linger.ms: Not a number of type LONG",
        ),
    ],
)
def test_a_file_the_client_refuses_is_one_line(client: str, text: str, line: str, tmp_path: Path) -> None:
    (tmp_path / "bad.properties").write_text(text)
    proc = _kbt("check", client, "bad.properties", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [line]


@pytest.mark.parametrize(
    ("client", "text", "key", "hint"),
    [
        (
            "librdkafka",
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanisms=PLAIN\nsasl.username=app\nsasl.password=s3cr3t-pw\n",
            "sasl.password",
            "librdkafka expands no variables",
        ),
        (
            "java",
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
            "org.apache.kafka.common.security.plain.PlainLoginModule required"
            ' username="app" password="s3cr3t-pw";\n',
            "sasl.jaas.config",
            "${env:VAR}",
        ),
    ],
)
def test_a_secret_written_in_the_file_passes_with_a_warning_that_never_shows_it(
    client: str, text: str, key: str, hint: str, tmp_path: Path
) -> None:
    """The client takes the file; the check says the secret should come from elsewhere, without it.
    The same file with the secret from the environment (Java's provider) or left to the
    application (librdkafka) has no warning."""
    if client == "java" and not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.fail("the Java engine is not built: run 'make install'")
    (tmp_path / "own.properties").write_text(text)
    proc = _kbt("check", client, "own.properties", "--json", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (warning,) = [line for line in proc.stderr.splitlines() if line.startswith("kbt: warning:")]
    (checked,) = json.loads(proc.stdout)["files"]
    assert checked["ok"] and checked["warnings"] == [warning.removeprefix("kbt: warning: ")]
    assert (
        warning.startswith(f"kbt: warning: own.properties: {key} holds a secret as written: ")
        and hint in warning
    )
    assert "s3cr3t-pw" not in proc.stdout + proc.stderr
    if client == "java":
        clean = text.replace('password="s3cr3t-pw"', 'password="${env:APP_PASSWORD}"')
        clean = "config.providers=env\nconfig.providers.env.class=" + ENV_PROVIDER + "\n" + clean
    else:
        clean = text.replace("sasl.password=s3cr3t-pw\n", "")
    (tmp_path / "clean.properties").write_text(clean)
    proc = kbt("check", client, "clean.properties", cwd=tmp_path, env={**user_env(), "APP_PASSWORD": "x-pw"})
    assert proc.returncode == 0 and "holds a secret" not in proc.stderr, proc.stderr


def test_tls_files_at_the_pods_paths_are_checked_as_placeholders(tmp_path: Path) -> None:
    """librdkafka opens its PEM files when the producer is built: the pod's paths, absent here, are
    checked with placeholder files and said in notes; a file that is here and broken is refused."""
    text = (
        "security.protocol=SSL\n"
        "ssl.ca.location=/run/secrets/kafka/ca.pem\n"
        "ssl.certificate.location=/run/secrets/kafka/client.pem\n"
        "ssl.key.location=/run/secrets/kafka/client.key\n"
        "linger.ms=50\n"
    )
    (tmp_path / "tls.properties").write_text(text)
    proc = _kbt("check", "librdkafka", "tls.properties", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    notes = proc.stderr.splitlines()
    assert [n.split(": ")[3] for n in notes] == [
        "ssl.ca.location",
        "ssl.certificate.location",
        "ssl.key.location",
    ]
    assert all(n.startswith("kbt: note: tls.properties: ") and "is not on this machine" in n for n in notes)
    (tmp_path / "ca.pem").write_text("not a certificate\n")
    (tmp_path / "tls.properties").write_text(
        text.replace("/run/secrets/kafka/ca.pem", str(tmp_path / "ca.pem"))
    )
    proc = _kbt("check", "librdkafka", "tls.properties", cwd=tmp_path)
    assert proc.returncode == 2 and "ssl.ca.location failed" in proc.stderr, proc.stderr


def test_a_java_file_providers_secret_mount_absent_here_is_a_note(tmp_path: Path) -> None:
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.fail("the Java engine is not built: run 'make install'")
    (tmp_path / "app.properties").write_text(
        "config.providers=file\n"
        "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n"
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required"
        ' username="app" password="${file:/run/secrets/kafka/client.properties:password}";\n'
        "linger.ms=${file:/run/secrets/kafka/client.properties:linger}\n"
    )
    proc = _kbt("check", "java", "app.properties", cwd=tmp_path)
    # the placeholder reaches linger.ms, which takes a number: the client says so, after the note
    assert proc.returncode == 2
    note, error = proc.stderr.splitlines()
    assert note == (
        "kbt: note: app.properties: /run/secrets/kafka/client.properties is not on this machine: its"
        " config provider's values were checked as placeholders (it must exist where the client runs)"
    )
    assert "kbt-placeholder" in error and "linger.ms" in error
    (tmp_path / "app.properties").write_text(
        (tmp_path / "app.properties")
        .read_text()
        .replace("linger.ms=${file:/run/secrets/kafka/client.properties:linger}", "linger.ms=50")
    )
    proc = _kbt("check", "java", "app.properties", cwd=tmp_path)
    assert proc.returncode == 0 and "app.properties: ok (" in proc.stdout, proc.stderr


def test_an_unset_java_reference_is_named_and_a_set_one_is_quiet(tmp_path: Path) -> None:
    """The warning names the variable the client asks its EnvVarConfigProvider for (a dotted name is
    one to Java), never its value; set in the environment, the reference resolves and nothing is said."""
    if not (engine_dir() / "kbt-java-engine.jar").is_file():
        pytest.fail("the Java engine is not built: run 'make install'")
    jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required"
        ' username="app" password="${env:KBT_E2E.PW}";'
    )
    text = f"config.providers=env\nconfig.providers.env.class={ENV_PROVIDER}\nsasl.jaas.config={jaas}\n"
    (tmp_path / "own.properties").write_text(text)
    proc = _kbt("check", "java", "own.properties", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "kbt: warning: own.properties: sasl.jaas.config: ${env:KBT_E2E.PW} is not set here" in proc.stderr
    proc = kbt("check", "java", "own.properties", cwd=tmp_path, env={**user_env(), "KBT_E2E.PW": "s3cr3t-pw"})
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    assert "s3cr3t-pw" not in proc.stdout + proc.stderr
