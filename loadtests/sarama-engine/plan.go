package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// PlanSchema is the version of the plan format the Python driver writes (tuner/driver/filebeat/plan.py).
const PlanSchema = 1

// Plan is one engine process's share of a run: the Filebeat settings and the workload for its pods.
type Plan struct {
	Schema    int    `json:"schema"`
	RunID     string `json:"run_id"`
	Bootstrap string `json:"bootstrap"`
	Topic     string `json:"topic"`
	// Pods in this process; their global indexes are PodOffset .. PodOffset+Pods-1 (event ids use them).
	Pods      int `json:"pods"`
	PodOffset int `json:"pod_offset"`
	// Events per second per pod, open loop (latency from the intended send time); 0 = as fast as the
	// queue accepts (closed loop).
	RatePerPod float64 `json:"rate_per_pod"`
	DurationS  float64 `json:"duration_s"`
	WarmupS    float64 `json:"warmup_s"`
	// Bound on waiting for outstanding events after the last one was offered.
	DrainS float64 `json:"drain_s"`
	// Epoch seconds at which the schedule starts (all processes of a run share it); 0 = now.
	StartAt float64 `json:"start_at"`
	// Newline-separated JSON objects {"message": "...", "key": "..."|null}, used round-robin.
	CorpusFile string `json:"corpus_file"`
	// Keys generated per event when the corpus has none: "none" or "random" (over KeyCardinality).
	Keys           string `json:"keys"`
	KeyCardinality int    `json:"key_cardinality"`
	// Every acked event as "partition offset id" lines.
	AckedFile string `json:"acked_file"`
	Seed      int64  `json:"seed"`

	Output Output   `json:"output"`
	Queue  MemQueue `json:"queue"`
}

// Output holds `output.kafka` after Filebeat's defaults were applied (durations in milliseconds).
type Output struct {
	BulkMaxSize          int       `json:"bulk_max_size"`
	BulkFlushFrequencyMs float64   `json:"bulk_flush_frequency_ms"`
	Compression          string    `json:"compression"`
	CompressionLevel     int       `json:"compression_level"`
	RequiredAcks         int       `json:"required_acks"`
	MaxMessageBytes      int       `json:"max_message_bytes"`
	ChannelBufferSize    int       `json:"channel_buffer_size"`
	BrokerTimeoutMs      float64   `json:"broker_timeout_ms"`
	TimeoutMs            float64   `json:"timeout_ms"`
	KeepAliveMs          float64   `json:"keep_alive_ms"`
	ClientID             string    `json:"client_id"`
	Version              string    `json:"version"`
	MaxRetries           int       `json:"max_retries"`
	BackoffInitMs        float64   `json:"backoff_init_ms"`
	BackoffMaxMs         float64   `json:"backoff_max_ms"`
	Partition            Partition `json:"partition"`
	Metadata             Metadata  `json:"metadata"`
}

// Partition is `output.kafka.partition.*`.
type Partition struct {
	Strategy      string `json:"strategy"` // hash | random | round_robin
	GroupEvents   int    `json:"group_events"`
	ReachableOnly bool   `json:"reachable_only"`
}

// Metadata is `output.kafka.metadata.*`.
type Metadata struct {
	RetryMax           int     `json:"retry_max"`
	RetryBackoffMs     float64 `json:"retry_backoff_ms"`
	RefreshFrequencyMs float64 `json:"refresh_frequency_ms"`
	Full               bool    `json:"full"`
}

// MemQueue is `queue.mem` as configured (the engine applies libbeat's normalisation itself).
type MemQueue struct {
	Events         int     `json:"events"`
	FlushMinEvents int     `json:"flush_min_events"`
	FlushTimeoutMs float64 `json:"flush_timeout_ms"`
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func loadPlan(path string) (*Plan, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	return &p, p.validate()
}

func (p *Plan) validate() error {
	var problems []string
	check := func(ok bool, msg string) {
		if !ok {
			problems = append(problems, msg)
		}
	}
	check(p.Schema == PlanSchema, fmt.Sprintf("schema %d (this engine reads %d)", p.Schema, PlanSchema))
	check(p.Bootstrap != "", "bootstrap is empty")
	check(p.Topic != "", "topic is empty")
	check(p.Pods > 0, "pods must be > 0")
	check(p.RatePerPod >= 0, "rate_per_pod must be >= 0")
	check(p.DurationS > 0 && p.DurationS <= 24*3600, "duration_s must be in (0, 86400]")
	check(p.WarmupS >= 0 && p.WarmupS < p.DurationS, "warmup_s must be in [0, duration_s)")
	check(p.DrainS >= 0 && p.DrainS <= 600, "drain_s must be in [0, 600]")
	check(p.CorpusFile != "", "corpus_file is empty")
	check(p.Keys == "none" || p.Keys == "random" || p.Keys == "", "keys must be none or random")
	check(p.Keys != "random" || p.KeyCardinality > 0, "keys random needs key_cardinality > 0")
	o := p.Output
	check(o.BulkMaxSize >= 0, "bulk_max_size must be >= 0")
	check(o.BulkFlushFrequencyMs >= 0, "bulk_flush_frequency must be >= 0")
	_, okCodec := compressionCodecs[o.Compression]
	check(okCodec, "compression must be none, gzip, lz4 or snappy")
	check(o.RequiredAcks >= -1 && o.RequiredAcks <= 1, "required_acks must be -1, 0 or 1")
	check(o.MaxMessageBytes > 0, "max_message_bytes must be > 0")
	check(o.ChannelBufferSize > 0, "channel_buffer_size must be > 0")
	check(o.BrokerTimeoutMs > 0 && o.TimeoutMs > 0, "broker_timeout and timeout must be > 0")
	check(o.MaxRetries >= -1 && o.MaxRetries != 0, "max_retries must be -1 or > 0")
	check(o.BackoffInitMs > 0 && o.BackoffMaxMs >= o.BackoffInitMs, "backoff must be 0 < init <= max")
	switch o.Partition.Strategy {
	case "hash", "random", "round_robin":
	default:
		problems = append(problems, "partition strategy must be hash, random or round_robin")
	}
	check(o.Partition.GroupEvents >= 1, "partition group_events must be >= 1")
	q := p.Queue
	check(q.Events >= 32, "queue events must be >= 32")
	check(q.FlushMinEvents >= 0 && q.FlushMinEvents <= q.Events, "queue flush.min_events must be in [0, events]")
	check(q.FlushTimeoutMs >= 0, "queue flush.timeout must be >= 0")
	if len(problems) > 0 {
		return errors.New("bad plan: " + strings.Join(problems, "; "))
	}
	return nil
}
