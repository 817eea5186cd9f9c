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
 * The Metrics registry is the producer's package-private field {@code metrics} (kafka-clients 4.1);
 * node sensors appear when a connection opens, so a reporter attaches the count to each as it is
 * registered.
 */
final class RequestCounter implements MetricsReporter {
    private static final String GROUP = "kbt-engine";
    private final Metrics metrics;
    private KafkaMetric requests;
    private KafkaMetric batchBytesSum;
    private KafkaMetric batches;
    private KafkaMetric compressionRateSum;
    private final Map<String, KafkaMetric> perNode = new ConcurrentHashMap<>();

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
        }
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
