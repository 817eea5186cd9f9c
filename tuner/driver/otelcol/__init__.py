"""The `otelcol` engine: real OpenTelemetry Collector pods (loadtests/otelcol-engine), each tailing
its own log file into Kafka, with the Filebeat pods' corpus, record ids and delivery read-back."""
