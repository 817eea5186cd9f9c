"""driver layer: engines that produce a run's load and verify its delivery.

The interface every engine implements is `engine.Engine`; the engines by `EngineId` are in
`engines.ENGINES`: `librdkafka_engine.LibrdkafkaEngine` (confluent-kafka), `java_engine.JAVA_ENGINE`
(Kafka's Java producer), `filebeat_dispatch.FilebeatEngine` (real Filebeat, else the Sarama
emulation `filebeat_engine.SARAMA_ENGINE`).
"""
