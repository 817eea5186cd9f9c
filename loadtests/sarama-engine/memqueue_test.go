package main

import (
	"context"
	"testing"
	"time"
)

func pushN(t *testing.T, q *memQueue, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if !q.Push(&event{seq: int64(i)}) {
			t.Fatalf("push %d refused", i)
		}
	}
}

func TestMinEventsCapsTheBatch(t *testing.T) {
	q := newMemQueue(MemQueue{Events: 3200, FlushMinEvents: 1600, FlushTimeoutMs: 10_000})
	pushN(t, q, 3200)
	// bulk_max_size 8192 asks for more than flush.min_events allows.
	if b := q.Get(context.Background(), 8192); len(b.events) != 1600 {
		t.Fatalf("batch of %d events, want 1600", len(b.events))
	}
	if b := q.Get(context.Background(), 2048); len(b.events) != 1600 {
		t.Fatalf("batch of %d events, want 1600", len(b.events))
	}
}

func TestSmallerRequestIsServedWhole(t *testing.T) {
	q := newMemQueue(MemQueue{Events: 3200, FlushMinEvents: 1600, FlushTimeoutMs: 10_000})
	pushN(t, q, 1000)
	if b := q.Get(context.Background(), 500); len(b.events) != 500 {
		t.Fatalf("batch of %d events, want 500", len(b.events))
	}
}

func TestFlushTimeoutReturnsPartialBatch(t *testing.T) {
	q := newMemQueue(MemQueue{Events: 3200, FlushMinEvents: 1600, FlushTimeoutMs: 80})
	pushN(t, q, 10)
	began := time.Now()
	b := q.Get(context.Background(), 2048)
	waited := time.Since(began)
	if len(b.events) != 10 {
		t.Fatalf("batch of %d events, want 10", len(b.events))
	}
	if waited < 60*time.Millisecond {
		t.Fatalf("returned after %v, before the flush timeout", waited)
	}
}

func TestFillingTheRequestEndsTheWait(t *testing.T) {
	q := newMemQueue(MemQueue{Events: 3200, FlushMinEvents: 100, FlushTimeoutMs: 60_000})
	pushN(t, q, 1)
	go func() {
		time.Sleep(20 * time.Millisecond)
		pushN(t, q, 150)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b := q.Get(ctx, 4096)
	if b == nil || len(b.events) != 100 {
		t.Fatalf("want a full batch of 100 before the timeout, got %v", b)
	}
}

func TestSynchronousModeForMinEventsZeroOrOne(t *testing.T) {
	for _, minEvents := range []int{0, 1} {
		q := newMemQueue(MemQueue{Events: 3200, FlushMinEvents: minEvents, FlushTimeoutMs: 60_000})
		if q.flushTimeout != 0 || q.maxGet != 1600 {
			t.Fatalf("min_events %d: timeout %v maxGet %d, want 0 and 1600", minEvents, q.flushTimeout, q.maxGet)
		}
		pushN(t, q, 3)
		if b := q.Get(context.Background(), 2048); len(b.events) != 3 {
			t.Fatalf("min_events %d: batch of %d events, want 3 at once", minEvents, len(b.events))
		}
	}
}

func TestSlotsFreeInHandOutOrder(t *testing.T) {
	q := newMemQueue(MemQueue{Events: 64, FlushMinEvents: 32, FlushTimeoutMs: 0})
	pushN(t, q, 64)
	first := q.Get(context.Background(), 32)
	second := q.Get(context.Background(), 32)
	pushed := make(chan struct{})
	go func() { q.Push(&event{}); close(pushed) }()
	q.Release(second) // acked out of order: nothing is freed yet
	select {
	case <-pushed:
		t.Fatal("a slot was freed before the oldest batch was acknowledged")
	case <-time.After(50 * time.Millisecond):
	}
	q.Release(first)
	select {
	case <-pushed:
	case <-time.After(2 * time.Second):
		t.Fatal("releasing the oldest batch did not free its slots")
	}
}

func TestRoundRobinGroupEvents(t *testing.T) {
	pick := newStrategy(Partition{Strategy: "round_robin", GroupEvents: 3})
	var got []int32
	for i := 0; i < 9; i++ {
		got = append(got, pick(&event{}, 4))
	}
	for i := 0; i < 9; i += 3 {
		if got[i] != got[i+1] || got[i] != got[i+2] {
			t.Fatalf("group of 3 split: %v", got)
		}
		if i > 0 && got[i] != (got[i-1]+1)%4 {
			t.Fatalf("not the next partition: %v", got)
		}
	}
}

func TestHashWithoutKeyIsRandomAndWithKeyIsStable(t *testing.T) {
	pick := newStrategy(Partition{Strategy: "hash", GroupEvents: 1})
	seen := map[int32]bool{}
	for i := 0; i < 400; i++ {
		seen[pick(&event{}, 8)] = true
	}
	if len(seen) < 8 {
		t.Fatalf("keyless events reached %d of 8 partitions", len(seen))
	}
	a := pick(&event{key: []byte("user-42")}, 8)
	for i := 0; i < 20; i++ {
		if pick(&event{key: []byte("user-42")}, 8) != a {
			t.Fatal("the same key went to different partitions")
		}
	}
}

func TestEnvelopeHitsTargetSize(t *testing.T) {
	for _, size := range []int{600, 1620, 100_000} {
		v := envelope(corpusEntry{Message: "GET /index.html 200", Bytes: size}, 3, "3-17", 12345, time.Now())
		if len(v) != size {
			t.Fatalf("value of %d bytes, want %d", len(v), size)
		}
	}
}
