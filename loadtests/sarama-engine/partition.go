package main

// Filebeat's partitioners (libbeat/outputs/kafka/partition.go). Sarama builds one partitioner per
// topic per producer, so group_events counts across every event of one pod.

import (
	"hash/fnv"
	"math/rand"

	"github.com/IBM/sarama"
)

type strategy func(ev *event, numPartitions int32) int32

// messagePartitioner keeps an event on the partition it was first given while the partition count
// is unchanged (libbeat retries a failed event to the same partition).
type messagePartitioner struct {
	pick       strategy
	reachable  bool
	partitions int32
}

func makePartitioner(cfg Partition) sarama.PartitionerConstructor {
	return func(string) sarama.Partitioner {
		return &messagePartitioner{pick: newStrategy(cfg), reachable: cfg.ReachableOnly}
	}
}

// RequiresConsistency false (reachable_only) lets Sarama offer only partitions with a leader.
func (p *messagePartitioner) RequiresConsistency() bool { return !p.reachable }

func (p *messagePartitioner) Partition(msg *sarama.ProducerMessage, numPartitions int32) (int32, error) {
	ev := msg.Metadata.(*event)
	if numPartitions == p.partitions && ev.partition >= 0 && ev.partition < numPartitions {
		return ev.partition, nil
	}
	ev.partition = p.pick(ev, numPartitions)
	p.partitions = numPartitions
	return ev.partition, nil
}

func newStrategy(cfg Partition) strategy {
	rng := rand.New(rand.NewSource(rand.Int63()))
	switch cfg.Strategy {
	case "random":
		// A new random partition every group_events events.
		n, count, partition := cfg.GroupEvents, cfg.GroupEvents, int32(0)
		return func(_ *event, numPartitions int32) int32 {
			if count == n {
				count = 0
				partition = int32(rng.Intn(int(numPartitions)))
			}
			count++
			return partition
		}
	case "round_robin":
		// The next partition every group_events events, starting at a random one.
		n, count, partition := cfg.GroupEvents, cfg.GroupEvents, rng.Int31()
		return func(_ *event, numPartitions int32) int32 {
			if count == n {
				count = 0
				if partition++; partition >= numPartitions || partition < 0 {
					partition = 0
				}
			}
			count++
			return partition % numPartitions
		}
	default:
		// hash: FNV-1a of the key; an event without a key goes to a random partition.
		hasher := fnv.New32a()
		return func(ev *event, numPartitions int32) int32 {
			if ev.key == nil {
				return int32(rng.Intn(int(numPartitions)))
			}
			hasher.Reset()
			_, _ = hasher.Write(ev.key)
			h := int32(hasher.Sum32())
			if h < 0 {
				h = -h
			}
			if h < 0 { // -MinInt32 overflows
				h = 0
			}
			return h % numPartitions
		}
	}
}
