package io.github.kbt.javaengine;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * One producer ("pod"): its own KafkaProducer and a thread offering records on the open-loop
 * schedule. Latency is measured from each record's intended send time, so a producer that falls
 * behind (send() blocking on a full buffer) shows it instead of hiding it (coordinated omission).
 */
final class Pod {
    /** Record ids: pod << ID_SHIFT | sequence, like the librdkafka engine's (tuner/driver/order_check.py). */
    static final int ID_SHIFT = 40;
    static final long LATENCY_MAX_US = 600_000_000L;

    final int index;
    final KafkaProducer<byte[], byte[]> producer;
    final RequestCounter counter;
    private final Plan plan;
    private final Corpus corpus;
    private final AckWriter.Local acked;
    private final Random rng;

    // Schedule bounds on the System.nanoTime() clock.
    private long startNs, windowStartNs, endNs;
    volatile boolean stop;
    volatile boolean closing;

    final AtomicLong outstanding = new AtomicLong();
    // Written only by the generator thread (read after it ended); offeredTotal also by the exporter
    // while the run goes on, hence volatile (one writer, so ++ loses nothing).
    long offered, sent;
    volatile long offeredTotal;
    // Written only by the producer's callback thread (read after the producer closed); the whole-run
    // totals also by the exporter while the run goes on.
    long acks, bytesAcked;
    volatile long acksTotal, bytesAckedTotal;
    // Guarded by itself: the exporter reads it while acks arrive.
    final Histogram latencyUs = new Histogram(1, LATENCY_MAX_US, 3);
    // Open loop: how late each in-window send() began against its intended time (the send lag the
    // librdkafka engine measures): a generator that fell behind (send() blocked on a full buffer or
    // the sender thread, a starved JVM) shows it here. Written by the generator thread only, read
    // after it ended.
    final Histogram sendLagUs = new Histogram(1, LATENCY_MAX_US, 3);
    // Failures can be reported on the sending thread too: guarded by this.
    long failed, lateFailures;
    final Map<String, Long> errors = new HashMap<>();

    Pod(int index, Plan plan, Corpus corpus, KafkaProducer<byte[], byte[]> producer, RequestCounter counter,
            AckWriter acked) {
        this.index = index;
        this.plan = plan;
        this.corpus = corpus;
        this.producer = producer;
        this.counter = counter;
        this.acked = acked.local();
        this.rng = new Random(plan.seed() + index * 7919L);
    }

    void schedule(long startNs, long windowStartNs, long endNs) {
        this.startNs = startNs;
        this.windowStartNs = windowStartNs;
        this.endNs = endNs;
    }

    /** The generator: offer records from start to end (open loop at rate_per_pod, else closed loop). */
    void run() {
        double rate = plan.rate_per_pod();
        long interval = rate > 0 ? Math.max(1L, (long) (1e9 / rate)) : 0L;
        long start = startNs;
        if (interval > 0) {
            // Pods are not synchronised: each starts at a random phase of its interval.
            start += (long) (rng.nextDouble() * interval);
        } else {
            parkUntil(start);
        }
        int entries = corpus.entries.size();
        for (long seq = 0; !stop; seq++) {
            long intended;
            if (interval > 0) {
                intended = start + seq * interval;
                if (intended - endNs >= 0) {
                    return;
                }
                parkUntil(intended);
                if (stop) {
                    return;
                }
            } else {
                intended = System.nanoTime();
                if (intended - endNs >= 0) {
                    return;
                }
            }
            boolean inWindow = intended - windowStartNs >= 0;
            Corpus.Entry entry = corpus.entries.get((int) ((seq + index * 131L) % entries));
            long id = ((long) index << ID_SHIFT) | seq;
            byte[] value = Corpus.stamp(entry.template(), id);
            byte[] key = entry.key() != null ? entry.key() : randomKey();
            offeredTotal++;
            if (inWindow) {
                offered++;
            }
            if (interval > 0 && inWindow) {
                sendLagUs.recordValue(Math.min(LATENCY_MAX_US, Math.max(1L, (System.nanoTime() - intended) / 1000)));
            }
            outstanding.incrementAndGet();
            try {
                producer.send(new ProducerRecord<>(plan.topic(), null, key, value),
                        (metadata, exception) -> complete(metadata == null ? -1 : metadata.partition(),
                                metadata == null ? -1 : metadata.offset(), id, intended, inWindow,
                                value.length, exception));
            } catch (RuntimeException e) {
                // send() failed before the record was queued (buffer full past max.block.ms, too large
                // for max.request.size, producer closed): no callback follows.
                outstanding.decrementAndGet();
                synchronized (this) {
                    failed++;
                    errors.merge(e.getClass().getSimpleName(), 1L, Long::sum);
                }
                continue;
            }
            if (inWindow) {
                sent++;
            }
        }
    }

    private byte[] randomKey() {
        if (!"random".equals(plan.keys())) {
            return null;
        }
        return ("key-" + rng.nextInt(plan.key_cardinality())).getBytes(StandardCharsets.US_ASCII);
    }

    private void complete(int partition, long offset, long id, long intended, boolean inWindow, int bytes,
            Exception exception) {
        long now = System.nanoTime();
        if (exception == null) {
            acked.write(partition, offset, id);
            acksTotal++;
            bytesAckedTotal += bytes;
            if (inWindow) {
                acks++;
                bytesAcked += bytes;
                synchronized (latencyUs) {
                    latencyUs.recordValue(Math.min(LATENCY_MAX_US, Math.max(1L, (now - intended) / 1000)));
                }
            }
        } else {
            synchronized (this) {
                if (closing) {
                    lateFailures++; // aborted by close after the drain: indeterminate, not failed
                } else {
                    failed++;
                }
                errors.merge(exception.getClass().getSimpleName(), 1L, Long::sum);
            }
        }
        outstanding.decrementAndGet();
    }

    /** Failed deliveries so far (the exporter's view while the run goes on). */
    synchronized long failedSoFar() {
        return failed;
    }

    /** The window's latency so far into {@code into} (the exporter's view while the run goes on). */
    void addLatencyTo(Histogram into) {
        synchronized (latencyUs) {
            into.add(latencyUs);
        }
    }

    /** After the producer closed: its acks into the shared file. */
    void flushAcked() {
        acked.flush();
    }

    private void parkUntil(long deadlineNs) {
        long wait;
        while (!stop && (wait = deadlineNs - System.nanoTime()) > 0) {
            LockSupport.parkNanos(Math.min(wait, 50_000_000L));
        }
    }
}
