"""ProfileBase: what every client kind's settings model shares.

A profile names one producer configuration after its intent (`batched-zstd`, `low-latency`). Each
client kind owns its settings model (tuner/spec/clients/<kind>.py, a subclass of this one with
`client` narrowed to its name); `tuner.spec.clients.ClientProfile` is their union keyed on `client`.
This module knows no kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from tuner.spec.base import StrictModel
from tuner.spec.limits import TOPIC_NAME_PATTERN


class ProfileBase(StrictModel):
    """The fields every client kind takes."""

    name: str = Field(pattern=TOPIC_NAME_PATTERN)
    description: str = ""
    client: str  # the kind's name (tuner.spec.clients.KINDS); each kind narrows it to a Literal
    # Which listener the client uses: the lab's SASL_SSL one (SCRAM-SHA-512 over TLS, credentials
    # from the lab's files or the environment, never from the profile) or plain text.
    security: Literal["plaintext", "sasl_ssl"] = "plaintext"

    @property
    def raw_properties(self) -> Mapping[str, str]:
        """Client properties the profile gives verbatim (they may hold ${VAR} references); none
        unless the kind takes raw properties."""
        return {}

    @model_validator(mode="before")
    @classmethod
    def _other_kinds_fields(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or cls is ProfileBase:
            return data
        from tuner.spec.clients import without_other_kinds_fields

        return without_other_kinds_fields(cls, data)

    def client_settings(self) -> dict[str, str]:
        """The client's own settings for this profile (properties, config file paths), by its kind."""
        from tuner.spec.clients import kind_named

        return kind_named(self.client).client_settings(self)
