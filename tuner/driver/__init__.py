"""driver layer: engines that produce a run's load and verify its delivery.

The interface every engine implements is `engine.Engine`; the engines by `EngineId` are in
`engines.ENGINES`: `librdkafka_engine.LIBRDKAFKA_ENGINE` (confluent-kafka), `java_engine.JAVA_ENGINE`
(Kafka's Java producer), `filebeat.engine.FILEBEAT_ENGINE` (real Filebeat, else the Sarama
emulation `filebeat.sarama.SARAMA_ENGINE`).
"""
