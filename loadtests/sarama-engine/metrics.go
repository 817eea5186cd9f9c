package main

// Client-side request accounting from Sarama's go-metrics registry (shared by every pod of the
// process). Produce requests are counted exactly: Sarama marks the meter
// "protocol-requests-rate-0-for-broker-<id>" (API key 0 = Produce) once per request it writes.

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rcrowley/go-metrics"
)

const produceMeterPrefix = "protocol-requests-rate-0-for-broker-"

// keepingRegistry ignores Unregister: Sarama drops a broker's meters when it closes the connection,
// and the final counts are read after the producers closed.
type keepingRegistry struct{ metrics.Registry }

func (keepingRegistry) Unregister(string) {}

func newRegistry() metrics.Registry { return keepingRegistry{metrics.NewRegistry()} }

type snapshot struct {
	ProduceRequests map[string]int64 `json:"produce_requests"` // broker id -> count
	BytesOut        int64            `json:"bytes_out"`        // every request written, all brokers
	RecordsSent     int64            `json:"records_sent"`     // records in produce requests
}

func takeSnapshot(registry metrics.Registry) snapshot {
	s := snapshot{ProduceRequests: map[string]int64{}}
	registry.Each(func(name string, m interface{}) {
		meter, ok := m.(metrics.Meter)
		if !ok {
			return
		}
		switch {
		case strings.HasPrefix(name, produceMeterPrefix):
			s.ProduceRequests[strings.TrimPrefix(name, produceMeterPrefix)] = meter.Count()
		case name == "outgoing-byte-rate":
			s.BytesOut = meter.Count()
		case name == "record-send-rate":
			s.RecordsSent = meter.Count()
		}
	})
	return s
}

func (s snapshot) minus(earlier snapshot) snapshot {
	out := snapshot{
		ProduceRequests: map[string]int64{},
		BytesOut:        s.BytesOut - earlier.BytesOut,
		RecordsSent:     s.RecordsSent - earlier.RecordsSent,
	}
	for broker, n := range s.ProduceRequests {
		out.ProduceRequests[broker] = n - earlier.ProduceRequests[broker]
	}
	return out
}

func (s snapshot) requests() int64 {
	var total int64
	for _, n := range s.ProduceRequests {
		total += n
	}
	return total
}

// histogramMean reads a Sarama histogram's mean (nil when it has no samples).
func histogramMean(registry metrics.Registry, name string, scale float64) *float64 {
	h, ok := registry.Get(name).(metrics.Histogram)
	if !ok || h.Count() == 0 {
		return nil
	}
	v := h.Mean() / scale
	return &v
}

// ackWriter records every acked event as "partition offset id".
type ackWriter struct {
	mu   sync.Mutex
	file *os.File
	buf  *bufio.Writer
	n    int64
}

func newAckWriter(path string) (*ackWriter, error) {
	if path == "" {
		return &ackWriter{}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &ackWriter{file: f, buf: bufio.NewWriterSize(f, 1<<16)}, nil
}

func (w *ackWriter) write(partition int32, offset int64, id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	if w.buf == nil {
		return
	}
	line := strconv.FormatInt(int64(partition), 10) + " " + strconv.FormatInt(offset, 10) + " " + id + "\n"
	_, _ = w.buf.WriteString(line)
}

func (w *ackWriter) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf == nil {
		return nil
	}
	if err := w.buf.Flush(); err != nil {
		return fmt.Errorf("acked file: %w", err)
	}
	return w.file.Close()
}
