"""A librdkafka profile's properties as librdkafka reads them, before anything runs: a name it does
not know or a consumer's is refused against its own committed table ("did you mean"), a value or a
conflict by the installed librdkafka itself (a producer built without brokers), each naming the
file's line of the property; no secret reaches the client or the message."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.unit.team_files import sweep_naming
from tuner.core.errors import BadInput
from tuner.core.kafka_clients import producer_refusal
from tuner.core.properties import properties_with_lines
from tuner.driver.rdkafka_config import config_names_json, parse_table
from tuner.spec.clients import KINDS, kind_of, profile_of
from tuner.spec.librdkafka_client import unknown_property
from tuner.spec.loader import load_profile, load_sweep

COMMITTED = Path(__file__).resolve().parents[2] / "tuner" / "spec" / "librdkafka_config.json"
VERSION = json.loads(COMMITTED.read_text())["librdkafka"]
IN = f"(librdkafka {VERSION})"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # messages name files as the user gave them: relative here


def test_the_committed_table_is_the_installed_librdkafkas() -> None:
    """tuner/spec/librdkafka_config.json is what the library confluent-kafka loads prints (make
    check-generated fails otherwise)."""
    import confluent_kafka

    committed = json.loads(COMMITTED.read_text())
    assert json.loads(config_names_json()) == committed
    assert committed["librdkafka"] == confluent_kafka.libversion()[0]


def test_the_table_keeps_scopes_and_aliases() -> None:
    text = "\n".join(
        [
            "## Global configuration properties",
            "Property | C/P | Range | Default | Importance | Description",
            "-----------------------------------------|-----|----|---|---|---",
            "linger.ms | P | 0 .. 900000 | 5 | high | Alias for `queue.buffering.max.ms`: Delay."
            " <br>*Type: float*",
            "group.id | C | | | high | Client group id string.",
            "enable.auto.commit | C | true, false | true | high | Commit.",
            "## Topic configuration properties",
            "enable.auto.commit | C | true, false | | low | **DEPRECATED** Alias for `auto.commit.enable`",
            "compression.codec | P | none, gzip | none | medium | codec",
            "compression.codec | * | none, gzip | none | medium | codec <br>*Type: enum value*",
        ]
    )
    table = parse_table(text)
    assert table["types"] == {"linger.ms": "float", "compression.codec": "enum value"}
    assert table["aliases"] == {"linger.ms": "queue.buffering.max.ms"}  # a global name is no alias
    assert table["scopes"] == {
        "linger.ms": "P", "group.id": "C", "enable.auto.commit": "C", "compression.codec": "*",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("linger.ms", None),
        ("queue.buffering.max.ms", None),
        ("lingr.ms", f'unknown librdkafka property "lingr.ms" {IN} (did you mean "linger.ms"?)'),
        ("bogus.prop", f'unknown librdkafka property "bogus.prop" (librdkafka {VERSION})'),
        ("group.id", f'"group.id" is a consumer property: a librdkafka producer ignores it {IN}'),
    ],
)  # fmt: skip
def test_a_name_is_read_by_a_producer_or_named(name: str, problem: str | None) -> None:
    assert unknown_property(name) == problem


def test_the_installed_librdkafka_judges_values_without_a_broker() -> None:
    assert producer_refusal({"linger.ms": "5", "compression.type": "zstd"}) is None
    assert producer_refusal({"compression.type": "lz5"}) == (
        'Invalid value "lz5" for configuration property "compression.codec"'
    )
    assert producer_refusal({"bogus.prop": "1"}) == 'No such configuration property: "bogus.prop"'


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("# team defaults\n\nlinger.ms=5\\\n  0\nlingr.ms=5\n",
         f'p.properties:5: unknown librdkafka property "lingr.ms" {IN} (did you mean "linger.ms"?)'),
        ("acks=all\ncompression.type=lz5\n",
         'p.properties:2: librdkafka refuses compression.type: Invalid value "lz5" for configuration property'
         ' "compression.codec"'),
        ("linger.ms=abc\n",
         'p.properties:1: librdkafka refuses linger.ms: Invalid value for configuration property'
         ' "queue.buffering.max.ms"'),
        ("enable.idempotence=true\n# durability\nacks=1\n",
         "p.properties:3: librdkafka refuses acks: `acks` must be set to `all` when `enable.idempotence`"
         " is true"),
        ("group.id=orders\n",
         f'p.properties:1: "group.id" is a consumer property: a librdkafka producer ignores it {IN}'),
        ("ssl.ca.locaton=/etc/ca.pem\n",
         f'p.properties:1: unknown librdkafka property "ssl.ca.locaton" (librdkafka {VERSION})'
         ' (did you mean "ssl.ca.location"?)'),
        # librdkafka takes retries=1e3 and reads 1 (it passed: Kafka's rule has no whole "retries")
        ("acks=all\nlinger.ms=0.5\nretries=1e3\n",
         "p.properties:3: \"retries\": must be a whole number in ASCII digits (got '1e3')"),
        # what the deployment sets is judged too, its secrets never shown
        ("acks=all\nsecurity.protocol=plaintextt\n",
         'p.properties:2: librdkafka refuses security.protocol: Invalid value "plaintextt" for configuration'
         ' property "security.protocol"'),
        # read by librdkafka only with SASL on: judged as the deployment that sets SASL reads it
        ("sasl.mechanism=BOGUS\nsasl.password=hunter2-secret\n",
         "p.properties:1: librdkafka refuses sasl.mechanism: Unsupported SASL mechanism: BOGUS"),
        ("security.protocol=SSL\nssl.key.password=hunter2-secret\nssl.endpoint.identification.algorithm=dns\n",
         'p.properties:3: librdkafka refuses ssl.endpoint.identification.algorithm: Invalid value "dns" for'
         ' configuration property "ssl.endpoint.identification.algorithm"'),
    ],
)  # fmt: skip
def test_a_refused_property_is_the_files_line(tmp_path: Path, text: str, line: str) -> None:
    spec = sweep_naming(tmp_path, "librdkafka:p.properties", {"p.properties": text})
    with pytest.raises(BadInput) as err:
        load_sweep(spec)
    assert err.value.message == line


def test_a_secret_never_reaches_librdkafka_or_the_message(tmp_path: Path) -> None:
    # a bad secret-named value is the deployment's: left out, and never quoted
    text = "sasl.password=hunter2\nssl.key.password=hunter2\nlinger.ms=abc\n"
    with pytest.raises(BadInput) as err:
        KINDS["librdkafka"].read_file(text, "p.properties")  # type: ignore[attr-defined]
    assert "hunter2" not in err.value.message and err.value.message.startswith("p.properties:3: ")


def test_what_kbt_sets_itself_keeps_working(tmp_path: Path) -> None:
    text = (
        "bootstrap.servers=k1:9092\nsecurity.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.username=app\nssl.ca.location=/etc/kafka/ca.pem\nclient.id=orders\nlinger.ms=20\n"
    )
    [run] = load_sweep(sweep_naming(tmp_path, "librdkafka:p.properties", {"p.properties": text})).runs
    assert kind_of(run.profile).client_settings(run.profile)["linger.ms"] == "20"


def test_a_yaml_file_named_as_properties_is_one_line(tmp_path: Path) -> None:
    spec = sweep_naming(tmp_path, "librdkafka:fb.yml", {"fb.yml": "output.kafka:\n  hosts: [k1]\n"})
    with pytest.raises(BadInput) as err:
        load_sweep(spec)
    assert err.value.message == (
        "fb.yml: a YAML file, not librdkafka properties: name a Filebeat or collector config without a kind"
    )


def test_a_profile_files_override_is_its_line(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "name: p\nlinger_ms: 5\noverrides:\n  queue.buffering.max.kbytes: '1024'\n  compression.type: lz5\n"
    )
    with pytest.raises(BadInput) as err:
        load_profile(tmp_path / "p.yaml")
    assert err.value.message.startswith("p.yaml:5: librdkafka refuses compression.type: ")


def test_a_specs_misspelled_override_is_refused(tmp_path: Path) -> None:
    spec = sweep_naming(tmp_path, "{name: b, linger_ms: 50, overrides: {compresion.type: lz4}}", {})
    with pytest.raises(BadInput) as err:
        load_sweep(spec)
    assert err.value.message == (
        f'spec.yaml:11: profiles[0]: unknown librdkafka property "compresion.type" {IN}'
        ' (did you mean "compression.type"?)'
    )


def test_a_profile_the_model_builds_asks_no_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside a file (the model's candidates, a record's profile) only the names are checked: no
    client is built, so a value stays the client's to judge at run time."""
    import tuner.spec.librdkafka_client as client

    asked: list[object] = []
    monkeypatch.setattr(client, "producer_refusal", lambda settings: asked.append(settings))
    profile = profile_of({"name": "p", "overrides": {"compression.type": "lz5"}})
    assert profile.overrides == {"compression.type": "lz5"} and asked == []
    with pytest.raises(ValueError, match=r'unknown librdkafka property "lingr\.ms"'):
        profile_of({"name": "p", "overrides": {"lingr.ms": "5"}})


def test_the_reader_numbers_each_propertys_line() -> None:
    text = "# c\n\na=1\nb=2\\\n  3\n! c\nc 4\na=5\n"
    assert properties_with_lines(text, "f") == {"a": ("5", 8), "b": ("23", 4), "c": ("4", 7)}


@pytest.mark.parametrize(
    ("overrides", "rendered"),
    [
        ({"linger.ms": "0.5"}, "linger.ms=0.5"),
        ({"queue.buffering.max.ms": "1e3"}, "queue.buffering.max.ms=1e3"),
        ({"linger.ms": 0.25}, "linger.ms=0.25"),  # YAML's float
        ({"acks": "all"}, "acks=all"),  # an integer to librdkafka, with a word of its own
        ({"batch.num.messages": "-1"}, "batch.num.messages=-1"),  # the range is librdkafka's to judge
    ],
)
def test_a_librdkafka_value_is_judged_by_librdkafkas_own_type(
    overrides: dict[str, object], rendered: str
) -> None:
    """linger.ms is a float to librdkafka (its table), a long to the Java client: 0.5 and 1e3 are
    librdkafka's to take, and the file holds them as written."""
    profile = profile_of({"name": "p", "overrides": overrides})
    assert rendered in KINDS["librdkafka"].artifact(profile).text.splitlines()


@pytest.mark.parametrize(
    ("client", "key", "value", "says"),
    [
        # librdkafka reads "1e3" as 1 and "0.5" as 0 where it takes an integer: refused, not misread
        ("librdkafka", "batch.num.messages", "1e3", '"batch.num.messages": must be a whole number'),
        ("librdkafka", "retries", "0.5", '"retries": must be a whole number'),
        ("librdkafka", "linger.ms", "0x10", '"linger.ms": must be a number in ASCII digits'),
        ("librdkafka", "linger.ms", "inf", '"linger.ms": must be a number in ASCII digits'),
        ("java", "linger.ms", "0.5", '"linger.ms": must be a whole number'),  # a long in the Java client
    ],
)
def test_a_number_the_reading_client_would_misread_is_refused(
    client: str, key: str, value: str, says: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        profile_of({"name": "p", "client": client, "overrides": {key: value}})


def test_a_librdkafka_sweep_varies_a_fraction_of_a_millisecond(tmp_path: Path) -> None:
    spec = sweep_naming(tmp_path, "{name: p, overrides: {queue.buffering.max.kbytes: 1024}}", {})
    spec.write_text(spec.read_text() + "vary:\n  profile.linger_ms: [0.5, 5]\n")
    lingers = [KINDS["librdkafka"].artifact(run.profile).text for run in load_sweep(spec).runs]
    assert ["linger.ms=0.5" in t for t in lingers] == [True, False]
    assert "linger.ms=5" in lingers[1].splitlines()


def test_a_sweep_varies_a_librdkafka_override_by_its_type(tmp_path: Path) -> None:
    spec = sweep_naming(tmp_path, "{name: p}", {})
    spec.write_text(spec.read_text() + "vary:\n  profile.overrides.linger.ms: [0.5, 1e3]\n")
    files = [KINDS["librdkafka"].artifact(run.profile).text.splitlines() for run in load_sweep(spec).runs]
    assert ["linger.ms=0.5" in f for f in files] == [True, False]
    assert "linger.ms=1000.0" in files[1]  # YAML's 1e3 is the float 1000.0, which librdkafka reads


def test_a_team_files_fraction_of_a_millisecond_runs_as_written(tmp_path: Path) -> None:
    text = "linger.ms=0.5\nacks=all\n"
    [run] = load_sweep(sweep_naming(tmp_path, "librdkafka:p.properties", {"p.properties": text})).runs
    assert kind_of(run.profile).client_settings(run.profile)["linger.ms"] == "0.5"


@pytest.mark.parametrize(
    "text",
    [
        # the pod's certificate paths, absent here: the deployment's host holds them
        "security.protocol=SSL\nssl.ca.location=/pod/certs/ca.pem\nssl.key.location=/pod/certs/key.pem\n"
        "ssl.key.password=${KEY_PW}\n",
        # credentials the deployment adds, as references or not at all
        "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n",
        "sasl.mechanism=SCRAM-SHA-512\nsasl.username=${KAFKA_USER}\nsasl.password=${KAFKA_PW}\n",
        # a mechanism this librdkafka build lacks is the deployed build's (kinit is never run by a check)
        "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.kerberos.kinit.cmd=touch kinit-ran\n",
        # a key's PEM and the host's OpenSSL providers are the deployment's host's
        "security.protocol=SSL\nssl.key.pem=-----BEGIN PRIVATE KEY-----\nssl.providers=fips\n",
        # a secret the client requires is present to it, as a placeholder
        "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.method=oidc\n"
        "sasl.oauthbearer.client.id=orders\nsasl.oauthbearer.client.secret=${OIDC_SECRET}\n"
        "sasl.oauthbearer.token.endpoint.url=https://idp.example/token\n",
    ],
)
def test_a_deployments_own_security_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.chdir(tmp_path)
    [run] = load_sweep(sweep_naming(tmp_path, "librdkafka:p.properties", {"p.properties": text})).runs
    assert "security.protocol" not in kind_of(run.profile).client_settings(run.profile)  # the target's
    assert not (tmp_path / "kinit-ran").exists()
