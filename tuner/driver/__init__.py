"""driver layer: engines that produce a run's load and verify its delivery.

The engines by id are in `engines.ENGINES`: `librdkafka_engine.run_load` is the librdkafka engine
(confluent-kafka), `filebeat_engine.run_filebeat_load` the Filebeat (Sarama) one.
"""
