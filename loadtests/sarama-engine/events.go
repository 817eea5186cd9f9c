package main

// Events as Filebeat ships them: the log line inside a JSON document (the default json codec) with
// the fields Filebeat adds, so sizes and compression ratios look like a real sidecar's.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"
)

type corpusEntry struct {
	Message string  `json:"message"`
	Key     *string `json:"key"`
	Bytes   int     `json:"bytes"` // target size of the JSON value; 0 = the message as it is
}

type event struct {
	id        string
	pod       int
	seq       int64
	intended  time.Time
	inWindow  bool
	key       []byte
	value     []byte
	partition int32
	batch     *outBatch
}

func loadCorpus(path string) ([]corpusEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []corpusEntry
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; scanner.Scan(); line++ {
		if len(scanner.Bytes()) == 0 {
			continue
		}
		var e corpusEntry
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("corpus %s:%d: %w", path, line, err)
		}
		e.Message = sanitize(e.Message)
		if e.Message == "" {
			return nil, fmt.Errorf("corpus %s:%d: empty message", path, line)
		}
		out = append(out, e)
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("corpus %s: no events", path)
	}
	return out, nil
}

// sanitize keeps JSON escaping out of the way so a message's encoded length is its byte length.
func sanitize(text string) string {
	b := []byte(text)
	for i, c := range b {
		switch {
		case c == '"':
			b[i] = '\''
		case c == '\\':
			b[i] = '/'
		case c < 0x20 || c >= 0x7f:
			b[i] = ' '
		}
	}
	return string(b)
}

// envelope renders one event document around `message` (sized to entry.Bytes when set).
func envelope(entry corpusEntry, pod int, id string, offset int64, ts time.Time) []byte {
	host := "pod-" + strconv.Itoa(pod)
	head := `{"@timestamp":"` + ts.UTC().Format("2006-01-02T15:04:05.000Z") +
		`","@metadata":{"beat":"filebeat","type":"_doc","version":"8.15.0"},"log":{"offset":` +
		strconv.FormatInt(offset, 10) + `,"file":{"path":"/var/log/app/app.log"}},"message":"`
	tail := `","input":{"type":"filestream"},"ecs":{"version":"8.0.0"},"host":{"name":"` + host +
		`"},"agent":{"type":"filebeat","version":"8.15.0","name":"` + host + `"},"kbt":{"id":"` + id + `"}}`
	msg := entry.Message
	if entry.Bytes > 0 {
		room := entry.Bytes - len(head) - len(tail)
		if room < 1 {
			room = 1
		}
		msg = fit(msg, room)
	}
	out := make([]byte, 0, len(head)+len(msg)+len(tail))
	out = append(out, head...)
	out = append(out, msg...)
	return append(out, tail...)
}

// fit repeats or cuts text to exactly n bytes.
func fit(text string, n int) string {
	if len(text) >= n {
		return text[:n]
	}
	buf := make([]byte, 0, n)
	for len(buf) < n {
		buf = append(buf, text...)
		if len(buf) < n {
			buf = append(buf, ' ')
		}
	}
	return string(buf[:n])
}
