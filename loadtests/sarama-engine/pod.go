package main

// One "pod": a Filebeat instance with its own memory queue, pipeline consumer and Kafka output
// (one Sarama AsyncProducer, like libbeat's kafka client).
//
//   generator --Push--> memQueue --Get(bulk_max_size)--> consumer --(unbuffered)--> publisher --> Sarama
//
// The consumer/publisher split follows libbeat/publisher/pipeline: the event consumer asks the queue
// for a batch of the output's batch size and hands it over an unbuffered work queue to the output
// worker, whose Publish pushes every event into the producer's input channel
// (libbeat/outputs/kafka/client.go). A batch is acknowledged to the queue once every event in it has
// an outcome (msgRef.dec); failed events are published again (Filebeat retries until delivered),
// events over the size limit are dropped, not retried (msgRef.fail).

import (
	"context"
	"errors"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/IBM/sarama"
)

// outBatch is libbeat's msgRef: the outstanding events of one queue batch.
type outBatch struct {
	qb      *queueBatch
	pending atomic.Int32
	mu      sync.Mutex
	failed  []*event
}

type podStats struct {
	offered, offeredTotal int64 // scheduled (window / whole run)
	sent                  int64 // pushed into the queue (window)
	acked, ackedTotal     int64
	bytesAcked            int64
	dropped, failed       int64
	retried               int64
	batches, batchEvents  int64
	latency               *hdrhistogram.Histogram // microseconds, window events
	errors                map[string]int64
}

type pod struct {
	index    int
	plan     *Plan
	corpus   []corpusEntry
	queue    *memQueue
	producer sarama.AsyncProducer
	acked    *ackWriter
	rng      *rand.Rand

	work      chan *outBatch
	retries   chan []*event
	stopping  atomic.Bool
	outcomes  atomic.Int64 // events with a final outcome (acked, dropped)
	published atomic.Int64 // events handed to the queue

	mu    sync.Mutex
	stats podStats
}

func newPod(index int, plan *Plan, corpus []corpusEntry, producer sarama.AsyncProducer, acked *ackWriter) *pod {
	return &pod{
		index:    index,
		plan:     plan,
		corpus:   corpus,
		queue:    newMemQueue(plan.Queue),
		producer: producer,
		acked:    acked,
		rng:      rand.New(rand.NewSource(plan.Seed + int64(index)*7919)),
		work:     make(chan *outBatch),
		retries:  make(chan []*event, 64),
		stats: podStats{
			latency: hdrhistogram.New(1, 600_000_000, 3),
			errors:  map[string]int64{},
		},
	}
}

// generate offers events on the open-loop schedule between start and end (closed loop at rate 0).
func (p *pod) generate(ctx context.Context, start, windowStart, end time.Time) {
	rate := p.plan.RatePerPod
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) / rate)
		// Pods are not synchronised: each starts at a random phase of its interval.
		start = start.Add(time.Duration(p.rng.Int63n(int64(interval) + 1)))
	}
	var offset int64
	for seq := int64(0); ; seq++ {
		intended := time.Now()
		if interval > 0 {
			intended = start.Add(time.Duration(seq) * interval)
			if !intended.Before(end) {
				return
			}
			if wait := time.Until(intended); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return
				}
			}
		} else if !intended.Before(end) || ctx.Err() != nil {
			return
		}
		if ctx.Err() != nil {
			return
		}
		entry := p.corpus[(int(seq)+p.index*131)%len(p.corpus)]
		ev := &event{
			id:        strconv.Itoa(p.index) + "-" + strconv.FormatInt(seq, 10),
			pod:       p.index,
			seq:       seq,
			intended:  intended,
			inWindow:  !intended.Before(windowStart) && intended.Before(end),
			partition: -1,
		}
		ev.key = p.key(entry)
		ev.value = envelope(entry, p.index, ev.id, offset, intended)
		offset += int64(len(entry.Message)) + 1
		p.mu.Lock()
		p.stats.offeredTotal++
		if ev.inWindow {
			p.stats.offered++
		}
		p.mu.Unlock()
		if !p.queue.Push(ev) {
			return
		}
		p.published.Add(1)
		if ev.inWindow {
			p.mu.Lock()
			p.stats.sent++
			p.mu.Unlock()
		}
	}
}

func (p *pod) key(entry corpusEntry) []byte {
	if entry.Key != nil {
		return []byte(*entry.Key)
	}
	if p.plan.Keys == "random" {
		return []byte("key-" + strconv.Itoa(p.rng.Intn(p.plan.KeyCardinality)))
	}
	return nil
}

// consume is libbeat's event consumer: Get a batch of the output's size, hand it to the output.
func (p *pod) consume(ctx context.Context) {
	defer close(p.work)
	for {
		qb := p.queue.Get(ctx, p.plan.Output.BulkMaxSize)
		if qb == nil {
			return
		}
		ob := &outBatch{qb: qb}
		ob.pending.Store(int32(len(qb.events)))
		for _, ev := range qb.events {
			ev.batch = ob
		}
		p.mu.Lock()
		p.stats.batches++
		p.stats.batchEvents += int64(len(qb.events))
		p.mu.Unlock()
		select {
		case p.work <- ob:
		case <-ctx.Done():
			return
		}
	}
}

// publish is the output worker: every event of a batch (or of a retry) into Sarama's input.
func (p *pod) publish(ctx context.Context) {
	input := p.producer.Input()
	send := func(evs []*event) bool {
		for _, ev := range evs {
			msg := &sarama.ProducerMessage{Topic: p.plan.Topic, Value: sarama.ByteEncoder(ev.value), Metadata: ev}
			if ev.key != nil {
				msg.Key = sarama.ByteEncoder(ev.key)
			}
			msg.Timestamp = ev.intended
			select {
			case input <- msg:
			case <-ctx.Done():
				return false
			}
		}
		return true
	}
	for {
		// Retries first, as libbeat's retryer does.
		select {
		case evs := <-p.retries:
			if !send(evs) {
				return
			}
			continue
		default:
		}
		select {
		case evs := <-p.retries:
			if !send(evs) {
				return
			}
		case ob, ok := <-p.work:
			if !ok || !send(ob.qb.events) {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

func (p *pod) onSuccesses(done *sync.WaitGroup) {
	defer done.Done()
	for msg := range p.producer.Successes() {
		ev := msg.Metadata.(*event)
		now := time.Now()
		p.acked.write(msg.Partition, msg.Offset, ev.id)
		p.mu.Lock()
		p.stats.ackedTotal++
		if ev.inWindow {
			p.stats.acked++
			p.stats.bytesAcked += int64(len(ev.value))
			_ = p.stats.latency.RecordValue(max(now.Sub(ev.intended).Microseconds(), 1))
		}
		p.mu.Unlock()
		p.outcomes.Add(1)
		p.finish(ev, nil)
	}
}

func (p *pod) onErrors(done *sync.WaitGroup) {
	defer done.Done()
	for perr := range p.producer.Errors() {
		ev := perr.Msg.Metadata.(*event)
		p.mu.Lock()
		p.stats.errors[errorName(perr.Err)]++
		drop := isOversize(perr.Err)
		if drop {
			p.stats.dropped++
		}
		p.mu.Unlock()
		if drop {
			p.outcomes.Add(1)
			p.finish(ev, nil)
		} else {
			p.finish(ev, perr.Err)
		}
	}
}

// finish is msgRef.dec: the last outcome of a batch acknowledges it or publishes its failures again.
func (p *pod) finish(ev *event, err error) {
	ob := ev.batch
	if err != nil {
		ob.mu.Lock()
		ob.failed = append(ob.failed, ev)
		ob.mu.Unlock()
	}
	if ob.pending.Add(-1) > 0 {
		return
	}
	ob.mu.Lock()
	failed := ob.failed
	ob.failed = nil
	ob.mu.Unlock()
	if len(failed) == 0 {
		p.queue.Release(ob.qb)
		return
	}
	if p.stopping.Load() {
		p.mu.Lock()
		p.stats.failed += int64(len(failed))
		p.mu.Unlock()
		p.queue.Release(ob.qb)
		return
	}
	ob.pending.Store(int32(len(failed)))
	p.mu.Lock()
	p.stats.retried += int64(len(failed))
	p.mu.Unlock()
	go func() { p.retries <- failed }()
}

// isOversize: errors for which Filebeat drops the event instead of retrying (msgRef.fail). Sarama
// reports a record above Producer.MaxMessageBytes as a ConfigurationError before sending it.
func isOversize(err error) bool {
	if errors.Is(err, sarama.ErrMessageSizeTooLarge) || errors.Is(err, sarama.ErrInvalidMessageSize) ||
		errors.Is(err, sarama.ErrInvalidMessage) {
		return true
	}
	var conf sarama.ConfigurationError
	return errors.As(err, &conf) && strings.Contains(string(conf), "MaxMessageBytes")
}

func errorName(err error) string {
	var conf sarama.ConfigurationError
	if errors.As(err, &conf) {
		return "ConfigurationError"
	}
	text := err.Error()
	if len(text) > 80 {
		text = text[:80]
	}
	return text
}

// outstanding: events pushed into the queue that have no final outcome yet.
func (p *pod) outstanding() int64 {
	p.mu.Lock()
	failed := p.stats.failed
	p.mu.Unlock()
	return p.published.Load() - p.outcomes.Load() - failed
}
