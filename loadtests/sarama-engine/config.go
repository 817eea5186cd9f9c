package main

// Filebeat output.kafka -> Sarama configuration, option by option as libbeat does it
// (libbeat/outputs/kafka/config.go, newSaramaConfig; docs/architecture.md).

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"
)

var compressionCodecs = map[string]sarama.CompressionCodec{
	"none":   sarama.CompressionNone,
	"gzip":   sarama.CompressionGZIP,
	"lz4":    sarama.CompressionLZ4,
	"snappy": sarama.CompressionSnappy,
}

func saramaConfig(o Output, registry metrics.Registry) (*sarama.Config, error) {
	k := sarama.NewConfig()

	// Network: `timeout` is the dial, read and write timeout; `keep_alive` the TCP keep-alive.
	k.Net.DialTimeout = ms(o.TimeoutMs)
	k.Net.ReadTimeout = ms(o.TimeoutMs)
	k.Net.WriteTimeout = ms(o.TimeoutMs)
	k.Net.KeepAlive = ms(o.KeepAliveMs)
	// Net.MaxOpenRequests is not exposed by Filebeat: Sarama's default (5) stays.

	// `broker_timeout`: how long the broker may wait for `required_acks`.
	k.Producer.Timeout = ms(o.BrokerTimeoutMs)
	// libbeat sets the level whatever the codec; Sarama applies it to gzip only (lz4 and snappy
	// ignore it).
	k.Producer.CompressionLevel = o.CompressionLevel

	k.Metadata.Retry.Max = o.Metadata.RetryMax
	k.Metadata.Retry.Backoff = ms(o.Metadata.RetryBackoffMs)
	k.Metadata.RefreshFrequency = ms(o.Metadata.RefreshFrequencyMs)
	k.Metadata.Full = o.Metadata.Full

	// `max_message_bytes` (the plan always carries it: Filebeat documents 1000000 as its default)
	// and `required_acks`.
	k.Producer.MaxMessageBytes = o.MaxMessageBytes
	k.Producer.RequiredAcks = sarama.RequiredAcks(o.RequiredAcks)
	k.Producer.Compression = compressionCodecs[o.Compression]

	k.Producer.Return.Successes = true
	k.Producer.Return.Errors = true

	// `max_retries` (negative: practically forever) with libbeat's exponential backoff with jitter
	// between `backoff.init` and `backoff.max`.
	retryMax := o.MaxRetries
	if retryMax < 0 {
		retryMax = 1000
	}
	k.Producer.Retry.Max = retryMax
	k.Producer.Retry.BackoffFunc = backoffFunc(ms(o.BackoffInitMs), ms(o.BackoffMaxMs))

	// `channel_buffer_size`: Sarama's per-stage channel buffers.
	k.ChannelBufferSize = o.ChannelBufferSize

	// `bulk_max_size` is the hard cap of messages per broker request; `bulk_flush_frequency` sets
	// Flush.Frequency only when > 0 (0 = flush as fast as possible). Flush.Messages and Flush.Bytes
	// are not exposed by Filebeat and stay 0.
	k.Producer.Flush.MaxMessages = o.BulkMaxSize
	if o.BulkFlushFrequencyMs > 0 {
		k.Producer.Flush.Frequency = ms(o.BulkFlushFrequencyMs)
	}

	k.ClientID = o.ClientID
	version, err := parseVersion(o.Version)
	if err != nil {
		return nil, err
	}
	k.Version = version
	k.Producer.Partitioner = makePartitioner(o.Partition)
	k.MetricRegistry = registry

	if err := k.Validate(); err != nil {
		return nil, fmt.Errorf("invalid Sarama configuration: %w", err)
	}
	return k, nil
}

// parseVersion accepts Filebeat's spellings ("2.1.0", "2.1", "0.10.2.0").
func parseVersion(text string) (sarama.KafkaVersion, error) {
	parts := strings.Split(text, ".")
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	if parts[0] == "0" && len(parts) < 4 {
		parts = append(parts, "0")
	}
	v, err := sarama.ParseKafkaVersion(strings.Join(parts, "."))
	if err != nil {
		return v, fmt.Errorf("unknown Kafka version %q: %w", text, err)
	}
	return v, nil
}

// backoffFunc is libbeat's stateless exponential backoff: the base doubles from init up to max, and
// the wait is drawn uniformly from [base/2, base] (config.go, makeBackoffFunc).
func backoffFunc(initial, maxWait time.Duration) func(retries, maxRetries int) time.Duration {
	maxBackoffRetries := int(math.Ceil(math.Log2(float64(maxWait) / float64(initial))))
	return func(retries, _ int) time.Duration {
		base := maxWait
		if retries < maxBackoffRetries {
			base = time.Duration(uint64(initial) * uint64(1<<retries))
		}
		half := int64(base / 2)
		return time.Duration(half + rand.Int63n(half+1))
	}
}
