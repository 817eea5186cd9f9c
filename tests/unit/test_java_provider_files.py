"""A Java client file reads its secrets through Kafka's file config provider from the pod's secret
mount: absent on the machine that checks it, those references are checked as placeholder values."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tuner.driver.java_plan import PLACEHOLDER, absent_provider_files

FILE = "org.apache.kafka.common.config.provider.FileConfigProvider"
JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="app" password="{}";'


def test_only_a_file_providers_absent_files_are_replaced(tmp_path: Path) -> None:
    here = tmp_path / "secrets.properties"
    here.write_text("pw=x\n")
    props = {
        "config.providers": "secrets, env",
        "config.providers.secrets.class": FILE,
        "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
        "sasl.jaas.config": JAAS.format("${secrets:/run/secrets/kafka.properties:password}"),
        "ssl.truststore.password": f"${{secrets:{here}:pw}}",
        "ssl.keystore.password": "${env:KEYSTORE_PW}",
        "linger.ms": "50",
    }
    swapped, absent = absent_provider_files(props)
    assert absent == ["/run/secrets/kafka.properties"]
    assert swapped["sasl.jaas.config"] == JAAS.format(PLACEHOLDER)
    # a file that is here, another provider's reference and plain values are the file's own
    assert {k: v for k, v in swapped.items() if k != "sasl.jaas.config"} == {
        k: v for k, v in props.items() if k != "sasl.jaas.config"
    }
    # without the provider configured the reference is the client's to refuse
    del props["config.providers.secrets.class"]
    assert absent_provider_files(props) == (props, [])


@given(st.dictionaries(st.text(max_size=40), st.text(max_size=80), max_size=6))
def test_any_properties_keep_their_keys(props: dict[str, str]) -> None:
    swapped, absent = absent_provider_files(props)
    assert set(swapped) == set(props) and len(absent) == len(set(absent))
