"""What a chaos run did to the cluster and whether the outcome matched what the scenario expects.

Embedded in the RunRecord of a `kbt chaos` run (`RunRecord.fault`); sweep records have none.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from tuner.core.frozen import Frozen
from tuner.core.units import Entries, Seconds, Text

# no-loss:      0 acked records lost, 0 duplicates, per-partition order kept, no send failed
# detects-loss: a negative control; the verification MUST report loss or duplicates
# degraded:     the cluster cannot take every write; the record says degraded and 0 acked are lost
Expectation = Literal["no-loss", "detects-loss", "degraded"]


class FaultEvent(Frozen):
    at_s: Seconds  # seconds after the first record reached the topic
    what: Text


class FaultRun(Frozen):
    scenario: Text
    description: Text
    expect: Expectation
    events: Annotated[list[FaultEvent], Entries] = Field(default_factory=list)
    verdict: Literal["pass", "fail"]
    reasons: Annotated[list[Text], Entries] = Field(default_factory=list)  # why the verdict is what it is
