package main

// libbeat's memory queue in front of the output (libbeat/publisher/queue/memqueue), reduced to what
// shapes the batches Sarama receives:
//
//   - config.go / broker.go newQueue: `events` is the capacity; `flush.min_events` is the most events
//     one Get may return (MaxGetRequest), capped at `events`; `flush.min_events` 0 or 1 selects the
//     old synchronous mode: no flush timeout and up to half the queue per Get.
//   - runloop.go handleGetRequest: a Get asks for the output's batch size (`bulk_max_size`); a request
//     of 0 or above MaxGetRequest is cut to MaxGetRequest.
//   - runloop.go runIteration / getRequestShouldBlock: a Get is only taken while unconsumed events
//     exist; with a positive flush.timeout it then waits until the request can be filled or the timer
//     (started when the request was taken) fires, and returns whatever is there.
//   - runloop.go handleInsert + ackloop.go: consumed events keep their slot until their batch is
//     acknowledged, and batches are released in the order they were handed out; a full queue blocks
//     the producer (Filebeat's inputs wait).

import (
	"context"
	"sync"
	"time"
)

type queueBatch struct {
	events []*event
	done   bool
}

type memQueue struct {
	mu           sync.Mutex
	space        *sync.Cond
	pushed       chan struct{} // a token per insert burst, wakes a waiting Get
	capacity     int
	maxGet       int
	flushTimeout time.Duration
	pending      []*event      // inserted, not yet handed to the output
	consumed     int           // handed out, not yet released
	order        []*queueBatch // handed-out batches, oldest first
	closed       bool
}

func newMemQueue(cfg MemQueue) *memQueue {
	maxGet, timeout := cfg.FlushMinEvents, ms(cfg.FlushTimeoutMs)
	if maxGet <= 1 {
		timeout = 0
		maxGet = (cfg.Events + 1) / 2
	}
	if maxGet > cfg.Events {
		maxGet = cfg.Events
	}
	q := &memQueue{
		pushed:       make(chan struct{}, 1),
		capacity:     cfg.Events,
		maxGet:       maxGet,
		flushTimeout: timeout,
	}
	q.space = sync.NewCond(&q.mu)
	return q
}

// Push inserts one event, blocking while the queue is full. False when the queue was closed.
func (q *memQueue) Push(ev *event) bool {
	q.mu.Lock()
	for !q.closed && len(q.pending)+q.consumed >= q.capacity {
		q.space.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.pending = append(q.pending, ev)
	q.mu.Unlock()
	select {
	case q.pushed <- struct{}{}:
	default:
	}
	return true
}

// Get returns the next batch for an output asking for `want` events (nil when ctx ends first).
func (q *memQueue) Get(ctx context.Context, want int) *queueBatch {
	entries := want
	if entries <= 0 || entries > q.maxGet {
		entries = q.maxGet
	}
	// The request is only accepted once there is something to consume.
	for {
		q.mu.Lock()
		if len(q.pending) > 0 {
			break
		}
		q.mu.Unlock()
		select {
		case <-q.pushed:
		case <-ctx.Done():
			return nil
		}
	}
	if q.flushTimeout > 0 && len(q.pending) < entries {
		q.mu.Unlock()
		timer := time.NewTimer(q.flushTimeout)
	wait:
		for {
			select {
			case <-q.pushed:
				q.mu.Lock()
				if len(q.pending) >= entries {
					break wait
				}
				q.mu.Unlock()
			case <-timer.C:
				q.mu.Lock()
				break wait
			case <-ctx.Done():
				q.mu.Lock()
				break wait
			}
		}
		timer.Stop()
	}
	n := min(len(q.pending), entries)
	b := &queueBatch{events: make([]*event, n)}
	copy(b.events, q.pending[:n])
	q.pending = q.pending[n:]
	q.consumed += n
	q.order = append(q.order, b)
	q.mu.Unlock()
	return b
}

// Release marks a batch acknowledged; slots free up in hand-out order.
func (q *memQueue) Release(b *queueBatch) {
	q.mu.Lock()
	b.done = true
	freed := false
	for len(q.order) > 0 && q.order[0].done {
		q.consumed -= len(q.order[0].events)
		q.order = q.order[1:]
		freed = true
	}
	q.mu.Unlock()
	if freed {
		q.space.Broadcast()
	}
}

// Close wakes blocked producers; later pushes fail.
func (q *memQueue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.space.Broadcast()
}

// Unconsumed is the number of inserted events not yet handed to the output.
func (q *memQueue) Unconsumed() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}
