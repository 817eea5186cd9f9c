package io.github.kbt.javaengine;

import java.lang.reflect.Field;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.CumulativeCount;
import org.apache.kafka.common.metrics.stats.CumulativeSum;
import org.apache.kafka.common.metrics.stats.Percentile;
import org.apache.kafka.common.metrics.stats.Percentiles;

/**
 * Exact produce request counts from one producer's own sensors. The client's published metrics are
 * windowed rates and averages; their sensors are recorded once per event, so a cumulative count
 * added to them is exact:
 *
 * <ul>
 *   <li>{@code records-per-request} is recorded once per ProduceRequest built (Sender
 *       updateProduceRequestMetrics: one request per node carrying every ready partition batch of
 *       that node), acks=0 included: the total;
 *   <li>{@code node-<id>.latency} (the Selector's per-connection sensor behind producer-node-metrics
 *       request-latency-avg) is recorded by the Sender once per produce response from that broker:
 *       the per-broker counts (acks=0 has no responses, so no per-broker split);
 *   <li>{@code batch-size} and {@code compression-rate} once per partition batch: exact means.
 * </ul>
 *
 * For the client exporter, percentiles (p50, p99; Kafka's own windowed {@code Percentiles}, the
 * producer's sample window) are added to {@code queue-time} (once per batch drained into a request:
 * how long its oldest record waited, the linger) and to each {@code node-<id>.latency} (the produce
 * round trip per broker).
 *
 * The Metrics registry is the producer's package-private field {@code metrics} (kafka-clients 4.1);
 * node sensors appear when a connection opens, so a reporter attaches the count to each as it is
 * registered.
 */
final class RequestCounter implements MetricsReporter {
    private static final String GROUP = "kbt-engine";
    /** Histogram size per sample (2000 linearly widening bins: sub-millisecond steps below ~5 ms). */
    private static final int PERCENTILE_BYTES = 8000;
    /** Upper bounds of the percentile histograms: delivery.timeout.ms and request.timeout.ms defaults. */
    private static final double QUEUE_MAX_MS = 120_000, RTT_MAX_MS = 30_000;
    private final Metrics metrics;
    private KafkaMetric requests;
    private KafkaMetric batchBytesSum;
    private KafkaMetric batches;
    private KafkaMetric compressionRateSum;
    private final Map<String, KafkaMetric> perNode = new ConcurrentHashMap<>();
    private KafkaMetric[] queueTime;
    private final Map<String, KafkaMetric[]> rttPerNode = new ConcurrentHashMap<>();

    private RequestCounter(Metrics metrics) {
        this.metrics = metrics;
    }

    static RequestCounter attach(KafkaProducer<byte[], byte[]> producer) {
        Metrics metrics;
        try {
            Field field = KafkaProducer.class.getDeclaredField("metrics");
            field.setAccessible(true);
            metrics = (Metrics) field.get(producer);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reach the producer's metrics registry: " + e, e);
        }
        RequestCounter counter = new RequestCounter(metrics);
        counter.requests = counter.add(sensor(metrics, "records-per-request"), "produce-requests-total", new CumulativeCount());
        Sensor batchSize = sensor(metrics, "batch-size");
        counter.batchBytesSum = counter.add(batchSize, "batch-bytes-total", new CumulativeSum());
        counter.batches = counter.add(batchSize, "batches-total", new CumulativeCount());
        counter.compressionRateSum = counter.add(
                sensor(metrics, "compression-rate"), "compression-rate-sum", new CumulativeSum());
        counter.queueTime = counter.percentiles(sensor(metrics, "queue-time"), "queue-time", QUEUE_MAX_MS);
        synchronized (metrics) {
            metrics.addReporter(counter);
            // Connections opened before the reporter (none carry produce requests yet, the first
            // record has not been sent) get their count now.
            for (MetricName name : metrics.metrics().keySet()) {
                counter.maybeNode(name);
            }
        }
        return counter;
    }

    private static Sensor sensor(Metrics metrics, String name) {
        Sensor sensor = metrics.getSensor(name);
        if (sensor == null) {
            throw new IllegalStateException("the producer has no sensor " + name + " (kafka-clients changed?)");
        }
        return sensor;
    }

    private KafkaMetric add(Sensor sensor, String name, org.apache.kafka.common.metrics.MeasurableStat stat) {
        MetricName metricName = metrics.metricName(name + "-" + sensor.name(), GROUP);
        sensor.add(metricName, stat);
        return metrics.metric(metricName);
    }

    private void maybeNode(MetricName name) {
        if (!name.name().equals("request-latency-avg") || !name.group().endsWith("-node-metrics")) {
            return;
        }
        String tag = name.tags().get("node-id"); // "node-<connection id>"
        if (tag == null || !tag.startsWith("node-")) {
            return;
        }
        String node = tag.substring("node-".length());
        if (node.startsWith("-") || perNode.containsKey(node)) {
            return; // bootstrap connections (negative ids) carry no produce requests
        }
        Sensor sensor = metrics.getSensor(tag + ".latency");
        if (sensor != null) {
            perNode.put(node, add(sensor, "produce-responses-" + tag, new CumulativeCount()));
            rttPerNode.put(node, percentiles(sensor, "rtt-" + tag, RTT_MAX_MS));
        }
    }

    private KafkaMetric[] percentiles(Sensor sensor, String name, double maxMs) {
        MetricName p50 = metrics.metricName(name + "-p50", GROUP);
        MetricName p99 = metrics.metricName(name + "-p99", GROUP);
        sensor.add(new Percentiles(PERCENTILE_BYTES, maxMs, Percentiles.BucketSizing.LINEAR,
                new Percentile(p50, 50), new Percentile(p99, 99)));
        return new KafkaMetric[] {metrics.metric(p50), metrics.metric(p99)};
    }

    /** Queue time p50 and p99 in ms over the producer's sample window (NaN before any batch). */
    double[] queueTimeMs() {
        return new double[] {valueOrNaN(queueTime[0]), valueOrNaN(queueTime[1])};
    }

    /** Produce round trip p50 and p99 in ms per broker over the producer's sample window. */
    Map<String, double[]> rttMs() {
        Map<String, double[]> out = new TreeMap<>();
        rttPerNode.forEach((node, m) -> out.put(node, new double[] {valueOrNaN(m[0]), valueOrNaN(m[1])}));
        return out;
    }

    private static double valueOrNaN(KafkaMetric metric) {
        Object v = metric == null ? null : metric.metricValue();
        return v instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    long requests() {
        return (long) value(requests);
    }

    Map<String, Long> requestsByNode() {
        Map<String, Long> out = new TreeMap<>();
        perNode.forEach((node, metric) -> out.put(node, (long) value(metric)));
        return out;
    }

    double batchBytesSum() {
        return value(batchBytesSum);
    }

    long batches() {
        return (long) value(batches);
    }

    double compressionRateSum() {
        return value(compressionRateSum);
    }

    private static double value(KafkaMetric metric) {
        Object v = metric == null ? null : metric.metricValue();
        return v instanceof Number n ? n.doubleValue() : 0.0;
    }

    @Override
    public void init(List<KafkaMetric> initial) {
    }

    @Override
    public void metricChange(KafkaMetric metric) {
        maybeNode(metric.metricName());
    }

    @Override
    public void metricRemoval(KafkaMetric metric) {
    }

    @Override
    public void close() {
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }
}
