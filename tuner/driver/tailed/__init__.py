"""Pods that tail a log file, shared by the engines that run a real shipper per pod (real Filebeat,
the OpenTelemetry Collector): the `writer` processes that fill the files at the workload's rate,
the `pods` (ports, start, stop), and the `readback` that finds every written line in the topic."""
