"""Which properties of a team's own client file hold a secret as written (kbt check warns of them)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tuner.target.security import literal_secret_keys

JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="app" password={}'


def test_written_secrets_are_found_and_references_are_not() -> None:
    props = {
        "sasl.password": "pw-1",
        "ssl.key.password": "${env:KEY_PW}",
        "ssl.truststore.password": "${TS_PW}",
        "sasl.jaas.config": JAAS.format('"pw-2";'),
        "linger.ms": "50",
        "ssl.keystore.location": "/etc/kafka/ks.p12",
    }
    assert literal_secret_keys(props) == ["sasl.password", "sasl.jaas.config"]
    assert literal_secret_keys({"sasl.jaas.config": JAAS.format('"${env:APP_PW}";')}) == []
    assert literal_secret_keys({"sasl.jaas.config": JAAS.format("'pw-3';")}) == ["sasl.jaas.config"]
    assert literal_secret_keys({"sasl.password": "  "}) == []  # nothing written: the client says so


@given(st.dictionaries(st.text(max_size=30), st.text(max_size=60), max_size=8))
def test_any_properties_give_a_subset_of_their_keys(props: dict[str, str]) -> None:
    found = literal_secret_keys(props)
    assert set(found) <= set(props) and len(found) == len(set(found))
