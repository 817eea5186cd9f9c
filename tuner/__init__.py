"""kafka-batch-tuner: measure and tune Kafka producer batching.

Packages follow the data, one way: ``spec`` -> ``lab`` -> ``driver`` -> ``measure`` -> ``store``
-> ``model`` -> ``render`` -> ``cli``. ``core`` holds what every layer shares (errors, paths).
"""

__version__ = "0.1.0"
