// Command sarama-engine drives Filebeat-shaped load through Sarama: each pod is a Filebeat instance
// (memory queue + Kafka output) configured the way libbeat configures Sarama. It reads one JSON plan,
// runs for the planned duration, and prints one JSON result on stdout. See README.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"
)

// ResultSchema is the version of the result document (parsed by tuner/driver/filebeat/sarama.py).
const ResultSchema = 1

// How long closing the producers may take before the result is written anyway.
const closeGrace = 20 * time.Second

type latencyMs struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

type result struct {
	Schema        int     `json:"schema"`
	Engine        string  `json:"engine"`
	SaramaVersion string  `json:"sarama_version"`
	Pods          int     `json:"pods"`
	StartedAt     float64 `json:"started_at"`
	WindowStart   float64 `json:"window_start"`
	WindowEnd     float64 `json:"window_end"`
	FinishedAt    float64 `json:"finished_at"`
	Interrupted   bool    `json:"interrupted"`

	// Window (events whose intended send time lies in [window_start, window_end)).
	Offered    int64 `json:"offered"`
	Sent       int64 `json:"sent"`
	Acked      int64 `json:"acked"`
	BytesAcked int64 `json:"bytes_acked"`
	// Whole run.
	OfferedTotal  int64            `json:"offered_total"`
	AckedTotal    int64            `json:"acked_total"`
	Dropped       int64            `json:"dropped"`
	Failed        int64            `json:"failed"`
	Retried       int64            `json:"retried"`
	Indeterminate int64            `json:"indeterminate"`
	Errors        map[string]int64 `json:"errors"`

	Window snapshot `json:"window"`
	Total  snapshot `json:"total"`

	QueueBatches      int64     `json:"queue_batches"`
	QueueBatchEvents  float64   `json:"queue_batch_events"`
	RecordsPerRequest *float64  `json:"records_per_request"`
	BatchBytes        *float64  `json:"batch_bytes"`
	CompressionRatio  *float64  `json:"compression_ratio"`
	LatencyMs         latencyMs `json:"delivery_latency_ms"`
	// The latency histogram (microseconds), HdrHistogram V2 compressed and base64-encoded, so the
	// driver can merge processes exactly.
	LatencyHistogram string `json:"latency_histogram"`
	AckedFile        string `json:"acked_file"`
	AckedLines       int64  `json:"acked_lines"`
}

func main() {
	planPath := flag.String("plan", "", "the JSON plan written by the kbt driver")
	flag.Parse()
	if *planPath == "" {
		fail("usage: sarama-engine -plan PLAN.json")
	}
	plan, err := loadPlan(*planPath)
	if err != nil {
		fail(err.Error())
	}
	res, err := run(plan)
	if err != nil {
		fail(err.Error())
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "sarama-engine: "+msg)
	os.Exit(2)
}

func epoch(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func run(plan *Plan) (*result, error) {
	corpus, err := loadCorpus(plan.CorpusFile)
	if err != nil {
		return nil, err
	}
	acked, err := newAckWriter(plan.AckedFile)
	if err != nil {
		return nil, err
	}
	registry := newRegistry()
	hosts := strings.Split(plan.Bootstrap, ",")

	pods := make([]*pod, 0, plan.Pods)
	for i := 0; i < plan.Pods; i++ {
		cfg, err := saramaConfig(plan.Output, registry)
		if err != nil {
			return nil, err
		}
		producer, err := sarama.NewAsyncProducer(hosts, cfg)
		if err != nil {
			closeAll(pods)
			return nil, fmt.Errorf("pod %d: cannot connect to %s: %w", plan.PodOffset+i, plan.Bootstrap, err)
		}
		pods = append(pods, newPod(plan.PodOffset+i, plan, corpus, producer, acked))
	}

	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, syscall.SIGTERM, syscall.SIGINT)
	stopGen, cancelGen := context.WithCancel(context.Background())
	stopOut, cancelOut := context.WithCancel(context.Background())
	defer cancelGen()
	defer cancelOut()

	start := time.Now()
	if plan.StartAt > 0 {
		start = time.Unix(0, int64(plan.StartAt*1e9))
	}
	windowStart := start.Add(time.Duration(plan.WarmupS * float64(time.Second)))
	end := start.Add(time.Duration(plan.DurationS * float64(time.Second)))

	var gens, outs, workers sync.WaitGroup
	for _, p := range pods {
		gens.Add(1)
		go func(p *pod) { defer gens.Done(); p.generate(stopGen, start, windowStart, end) }(p)
		outs.Add(2)
		go func(p *pod) { defer outs.Done(); p.consume(stopOut) }(p)
		go func(p *pod) { defer outs.Done(); p.publish(stopOut) }(p)
		workers.Add(2)
		go p.onSuccesses(&workers)
		go p.onErrors(&workers)
	}

	res := &result{Schema: ResultSchema, Engine: "sarama", SaramaVersion: saramaVersion(), Pods: plan.Pods}
	res.StartedAt, res.WindowStart, res.WindowEnd = epoch(start), epoch(windowStart), epoch(end)
	drain := time.Duration(plan.DrainS * float64(time.Second))

	// Measured window: a snapshot at its start; the requests are counted through the drain (below).
	before := takeSnapshot(registry)
	if !sleepUntil(windowStart, interrupted) {
		res.Interrupted = true
	} else {
		before = takeSnapshot(registry)
		if !sleepUntil(end, interrupted) {
			res.Interrupted = true
		}
	}
	windowEnd := time.Now()
	if res.Interrupted {
		res.WindowEnd = epoch(windowEnd)
		drain = min(drain, 5*time.Second)
	}
	cancelGen()
	gens.Wait()

	// Drain: wait until every offered event has an outcome, bounded.
	deadline := time.Now().Add(drain)
	for time.Now().Before(deadline) && outstanding(pods) > 0 {
		select {
		case <-interrupted:
			res.Interrupted = true
			deadline = time.Now()
		case <-time.After(20 * time.Millisecond):
		}
	}
	for _, p := range pods {
		p.stopping.Store(true)
		p.queue.Close()
	}
	cancelOut()
	outs.Wait()
	closed := make(chan struct{})
	go func() {
		for _, p := range pods {
			p.producer.AsyncClose()
		}
		workers.Wait()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(closeGrace):
		fmt.Fprintln(os.Stderr, "sarama-engine: producers did not close in time; reporting anyway")
	}
	res.Total = takeSnapshot(registry)
	// The window's requests run through the final drain, like the other engines': production stops
	// at the window end, and the drain's requests carry the window's last events (with a 10 s
	// queue flush.timeout, most of them).
	res.Window = res.Total.minus(before)
	res.FinishedAt = epoch(time.Now())
	if err := acked.close(); err != nil {
		return nil, err
	}
	res.AckedFile, res.AckedLines = plan.AckedFile, acked.n
	summarise(res, pods, registry)
	return res, nil
}

func sleepUntil(t time.Time, interrupted <-chan os.Signal) bool {
	wait := time.Until(t)
	if wait <= 0 {
		return true
	}
	select {
	case <-time.After(wait):
		return true
	case <-interrupted:
		return false
	}
}

func outstanding(pods []*pod) int64 {
	var n int64
	for _, p := range pods {
		n += p.outstanding()
	}
	return n
}

func closeAll(pods []*pod) {
	for _, p := range pods {
		_ = p.producer.Close()
	}
}

func summarise(res *result, pods []*pod, registry metrics.Registry) {
	hist := hdrhistogram.New(1, 600_000_000, 3)
	res.Errors = map[string]int64{}
	var batchEvents int64
	for _, p := range pods {
		p.mu.Lock()
		s := &p.stats
		res.Offered += s.offered
		res.OfferedTotal += s.offeredTotal
		res.Sent += s.sent
		res.Acked += s.acked
		res.AckedTotal += s.ackedTotal
		res.BytesAcked += s.bytesAcked
		res.Dropped += s.dropped
		res.Failed += s.failed
		res.Retried += s.retried
		res.QueueBatches += s.batches
		batchEvents += s.batchEvents
		hist.Merge(s.latency)
		for k, v := range s.errors {
			res.Errors[k] += v
		}
		p.mu.Unlock()
		res.Indeterminate += p.outstanding()
	}
	if res.QueueBatches > 0 {
		res.QueueBatchEvents = float64(batchEvents) / float64(res.QueueBatches)
	}
	if n := res.Total.requests(); n > 0 {
		v := float64(res.Total.RecordsSent) / float64(n)
		res.RecordsPerRequest = &v
	}
	res.BatchBytes = histogramMean(registry, "batch-size", 1)
	res.CompressionRatio = histogramMean(registry, "compression-ratio", 100)
	q := func(p float64) float64 { return float64(hist.ValueAtQuantile(p)) / 1000 }
	res.LatencyMs = latencyMs{
		Count: hist.TotalCount(), Mean: hist.Mean() / 1000,
		P50: q(50), P90: q(90), P99: q(99), P999: q(99.9), Max: float64(hist.Max()) / 1000,
	}
	if encoded, err := hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		res.LatencyHistogram = string(encoded)
	}
}

// saramaVersion names the Sarama module this binary was built with.
func saramaVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/IBM/sarama" {
				return dep.Path + " " + dep.Version
			}
		}
	}
	return "github.com/IBM/sarama (unknown version)"
}
