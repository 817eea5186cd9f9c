"""driver layer: engines that produce a run's load and verify its delivery.

`run_load(plan, topics, bootstrap_servers, run_id, exporter_ports) -> DriverResult` is the
librdkafka engine (confluent-kafka); `filebeat_engine.run_filebeat_load` is the Filebeat (Sarama) one.
"""

from tuner.driver.librdkafka_engine import run_load

__all__ = ["run_load"]
