package io.github.kbt.javaengine;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.Utils;

/**
 * kbt's Java load engine: N Kafka Java producers in this process on an open-loop schedule; reads one
 * JSON plan, prints one JSON result line on stdout. {@code --config-names} prints the client's
 * producer property names instead. See README.md.
 */
public final class Main {
    static final int RESULT_SCHEMA = 1;
    /** How long closing the producers may take before the result is written anyway. */
    static final Duration CLOSE_GRACE = Duration.ofSeconds(20);
    /** Drain bound after SIGTERM/SIGINT. */
    static final double INTERRUPTED_DRAIN_S = 5.0;
    /** The client's own metrics copied into the result (producer-metrics group). */
    static final List<String> CLIENT_METRICS = List.of(
            "request-rate", "request-total", "records-per-request-avg", "batch-size-avg", "batch-size-max",
            "compression-rate-avg", "record-queue-time-avg", "record-queue-time-max", "request-latency-avg",
            "request-latency-max", "produce-throttle-time-avg", "produce-throttle-time-max",
            "record-send-rate", "record-retry-total", "record-error-total", "outgoing-byte-rate",
            "bufferpool-wait-time-ns-total", "buffer-available-bytes");

    private static volatile boolean interrupted;
    private static final Object WAKE = new Object();

    private Main() {
    }

    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        if (args.length == 1 && args[0].equals("--config-names")) {
            new TreeSet<>(ProducerConfig.configNames()).forEach(System.out::println);
            return;
        }
        if (args.length == 2 && args[0].equals("--check-config")) {
            try {
                System.out.println(new ObjectMapper().writeValueAsString(checkConfig(Path.of(args[1]))));
                System.exit(0);
            } catch (Exception e) {
                String message = e.getMessage() == null ? e.toString() : e.getMessage();
                fail(message.lines().findFirst().orElse(message));
            }
        }
        if (args.length == 1 && args[0].equals("--version")) {
            System.out.println("kafka-clients " + AppInfoParser.getVersion());
            return;
        }
        if (args.length != 2 || !args[0].equals("-plan")) {
            fail("usage: java-engine -plan PLAN.json | --check-config FILE | --config-names | --version");
        }
        try {
            Plan plan = Plan.load(Path.of(args[1]));
            Map<String, Object> result = run(plan);
            System.out.println(new ObjectMapper().writeValueAsString(result));
            System.out.flush();
            System.exit(0);
        } catch (Exception e) {
            String message = e.getMessage() == null ? e.toString() : e.getMessage();
            fail(message.lines().findFirst().orElse(message));
        }
    }

    static void fail(String message) {
        System.err.println("java-engine: " + message);
        System.exit(2);
    }

    /** Kafka's config provider settings (config.providers, config.providers.NAME.*): kbt passes
     *  secrets as ${env:NAME} references resolved by EnvVarConfigProvider, never as values. */
    static boolean isConfigProvider(String name) {
        return name.equals(AbstractConfig.CONFIG_PROVIDERS_CONFIG)
                || name.startsWith(AbstractConfig.CONFIG_PROVIDERS_CONFIG + ".");
    }

    /**
     * Producer properties: the plan's properties file as Kafka's tools load one, then the plan's
     * properties on top (the environment's), each name checked against ProducerConfig, then the
     * engine's own (brokers, serializers, a client.id per pod).
     */
    static Properties producerProperties(Plan plan, int pod) throws java.io.IOException {
        Properties props = new Properties();
        if (plan.properties_file() != null) {
            loadChecked(props, Utils.loadProps(plan.properties_file()));
        }
        loadChecked(props, plan.properties());
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, plan.bootstrap());
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "kbt-java-" + pod);
        if (props.get(ProducerConfig.CLIENT_ID_CONFIG) instanceof String id && !id.endsWith("-" + pod)) {
            props.put(ProducerConfig.CLIENT_ID_CONFIG, id + "-" + pod); // one metrics registry per producer
        }
        return props;
    }

    private static void loadChecked(Properties props, Map<?, ?> from) {
        for (Map.Entry<?, ?> e : from.entrySet()) {
            String name = String.valueOf(e.getKey());
            if (!ProducerConfig.configNames().contains(name) && !isConfigProvider(name)) {
                throw new IllegalArgumentException("unknown producer property " + name
                        + PropertyNames.suggestion(name, ProducerConfig.configNames()));
            }
            props.put(name, String.valueOf(e.getValue()));
        }
    }

    /**
     * The producer's own reading of a properties file (the client's ConfigDef: types, validators,
     * config providers, idempotence's defaults): each of the file's settings as the producer holds
     * it, and the durability settings whether the file names them or not. A placeholder broker
     * stands in when the file names none (a deployment sets them); nothing connects.
     */
    static Map<String, Object> checkConfig(Path file) throws java.io.IOException {
        Properties loaded = Utils.loadProps(file.toString());
        Properties props = new Properties();
        loadChecked(props, loaded);
        props.putIfAbsent(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9092");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("settings", effective(new ProducerConfig(props), loaded.stringPropertyNames()));
        return out;
    }

    static final List<String> DURABILITY = List.of(ProducerConfig.ACKS_CONFIG,
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, ProducerConfig.RETRIES_CONFIG,
            ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION);

    /** The producer's parsed values of these names (and the durability settings), as text. */
    static Map<String, String> effective(ProducerConfig config, Set<String> names) {
        Set<String> wanted = new TreeSet<>(names);
        wanted.addAll(DURABILITY);
        Map<String, String> out = new TreeMap<>();
        Map<String, ?> values = config.values();
        for (String name : wanted) {
            if (!values.containsKey(name)) {
                continue; // a config provider's own setting
            }
            Object v = values.get(name);
            String text;
            if (v instanceof org.apache.kafka.common.config.types.Password pw) {
                // never the secret; whether a config provider resolved its reference
                text = pw.value().contains("${") ? "[unresolved reference]" : "[hidden]";
            } else if (v instanceof Class<?> c) {
                text = c.getName();
            } else if (v instanceof List<?> l) {
                text = String.join(",", l.stream().map(String::valueOf).toList());
            } else {
                text = String.valueOf(v);
            }
            out.put(name, text);
        }
        return out;
    }

    static Map<String, Object> run(Plan plan) throws Exception {
        Corpus corpus = Corpus.load(Path.of(plan.corpus_file()));
        AckWriter acked = new AckWriter(plan.acked_file());
        List<Pod> pods = new ArrayList<>();
        Properties first = producerProperties(plan, plan.pod_offset());
        try {
            for (int i = 0; i < plan.pods(); i++) {
                int index = plan.pod_offset() + i;
                KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProperties(plan, index));
                pods.add(new Pod(index, plan, corpus, producer, RequestCounter.attach(producer), acked));
            }
        } catch (RuntimeException e) {
            for (Pod p : pods) {
                p.producer.close(Duration.ZERO);
            }
            throw e;
        }
        installSignals();
        // Metadata before the schedule: the first send() would otherwise wait for it.
        Set<String> leaders = new TreeSet<>();
        for (Pod p : pods) {
            for (PartitionInfo partition : p.producer.partitionsFor(plan.topic())) {
                if (partition.leader() != null) {
                    leaders.add(String.valueOf(partition.leader().id()));
                }
            }
        }
        Map<String, Object> exported = new LinkedHashMap<>();
        ClientExporter exporter = startExporter(plan, first, pods, leaders, exported);
        double startAt = plan.start_at();
        if (startAt < 0) {
            // The driver starts every JVM first, then hands all of them one start time: JVM start-up
            // on a busy machine takes longer than any fixed slack, and a late start would move the
            // warm-up's records into the measured window.
            System.out.println("ready");
            System.out.flush();
            String line = new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
            if (line == null) {
                throw new IllegalStateException("no start time on stdin");
            }
            startAt = Double.parseDouble(line.trim());
        }

        double nowEpoch = System.currentTimeMillis() / 1e3;
        long nowNs = System.nanoTime();
        double startEpoch = startAt > 0 ? startAt : nowEpoch;
        long startNs = nowNs + (long) ((startEpoch - nowEpoch) * 1e9);
        long windowStartNs = startNs + (long) (plan.warmup_s() * 1e9);
        long endNs = startNs + (long) (plan.duration_s() * 1e9);
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("schema", RESULT_SCHEMA);
        res.put("engine", "java");
        res.put("client_version", "org.apache.kafka:kafka-clients " + AppInfoParser.getVersion());
        res.put("pods", plan.pods());
        res.put("started_at", startEpoch);
        res.put("window_start", startEpoch + plan.warmup_s());
        res.put("window_end", startEpoch + plan.duration_s());
        // The settings the producers run with, as the client parsed them: the file's and durability's.
        Set<String> named = new TreeSet<>(first.stringPropertyNames());
        if (plan.properties_file() != null) {
            named = Utils.loadProps(plan.properties_file()).stringPropertyNames();
        }
        res.put("producer_config", effective(new ProducerConfig(first), named));

        List<Thread> threads = new ArrayList<>();
        for (Pod p : pods) {
            p.schedule(startNs, windowStartNs, endNs);
            Thread t = new Thread(p::run, "kbt-pod-" + p.index);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        // The window's requests are counted from its start through the final drain (production stops
        // at the window end; the drain's requests carry the window's last records), like the other
        // engines.
        Snapshot before = Snapshot.take(pods);
        boolean reachedWindow = sleepUntil(windowStartNs);
        if (reachedWindow) {
            before = Snapshot.take(pods);
        }
        boolean completed = reachedWindow && sleepUntil(endNs);
        if (!completed) {
            res.put("window_end", System.currentTimeMillis() / 1e3);
        }
        for (Pod p : pods) {
            p.stop = true;
        }
        for (Thread t : threads) {
            t.interrupt();
            t.join(CLOSE_GRACE.toMillis());
        }
        // The client's windowed metrics as the schedule ends (steady state; the drain is idle time).
        res.put("client_metrics", clientMetrics(pods));

        // Drain: wait until every record has an outcome, bounded; no flush(), which would cut the
        // last batches short of linger.ms.
        double drain = interrupted ? Math.min(plan.drain_s(), INTERRUPTED_DRAIN_S) : plan.drain_s();
        long deadline = System.nanoTime() + (long) (drain * 1e9);
        while (outstanding(pods) > 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
        }
        long indeterminate = outstanding(pods);
        for (Pod p : pods) {
            p.closing = true;
        }
        Snapshot total = Snapshot.take(pods);
        if (exporter != null) {
            // The final counts are in: one more scrape carries them to Prometheus (not after SIGTERM,
            // whose stop waits a bounded time for the result).
            exported.put("final_scrape", !interrupted && exporter.awaitScrape(plan.exporter().final_scrape_s()));
        }
        long closeBy = System.nanoTime() + CLOSE_GRACE.toNanos();
        for (Pod p : pods) {
            Duration left = indeterminate > 0 ? Duration.ZERO
                    : Duration.ofNanos(Math.max(0, closeBy - System.nanoTime()));
            p.producer.close(left);
            p.flushAcked();
        }
        acked.close();
        if (exporter != null) {
            exporter.close();
        }
        res.put("exporter", plan.exporter() == null ? null : exported);
        res.put("finished_at", System.currentTimeMillis() / 1e3);
        res.put("interrupted", interrupted);
        summarise(res, pods, before, total, indeterminate, plan.rate_per_pod() > 0);
        res.put("acked_file", plan.acked_file());
        res.put("acked_lines", acked.lines());
        return res;
    }

    /**
     * The plan's client exporter, or null: none asked for, or its port taken (then {@code info} says
     * why and the run goes on unexported, as the librdkafka engine's does).
     */
    private static ClientExporter startExporter(Plan plan, Properties props, List<Pod> pods, Set<String> brokers,
            Map<String, Object> info) {
        Plan.Exporter cfg = plan.exporter();
        if (cfg == null) {
            return null;
        }
        info.put("port", cfg.port());
        try {
            ClientExporter exporter = ClientExporter.start(cfg, plan.run_id(), pods, brokers,
                    "0".equals(props.getProperty(ProducerConfig.ACKS_CONFIG)));
            info.put("serving", true);
            return exporter;
        } catch (java.io.IOException | RuntimeException e) {
            String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            info.put("serving", false);
            info.put("problem", reason.lines().findFirst().orElse(reason));
            return null;
        }
    }

    private static long outstanding(List<Pod> pods) {
        long n = 0;
        for (Pod p : pods) {
            n += p.outstanding.get();
        }
        return n;
    }

    private static void summarise(Map<String, Object> res, List<Pod> pods, Snapshot before, Snapshot total,
            long indeterminate, boolean openLoop) {
        long offered = 0, offeredTotal = 0, sent = 0, acks = 0, acksTotal = 0, bytesAcked = 0, failed = 0;
        Map<String, Long> errors = new TreeMap<>();
        Histogram hist = new Histogram(1, Pod.LATENCY_MAX_US, 3);
        Histogram sendLag = new Histogram(1, Pod.LATENCY_MAX_US, 3);
        for (Pod p : pods) {
            synchronized (p) {
                offered += p.offered;
                offeredTotal += p.offeredTotal;
                sent += p.sent;
                acks += p.acks;
                acksTotal += p.acksTotal;
                bytesAcked += p.bytesAcked;
                failed += p.failed;
                p.errors.forEach((k, v) -> errors.merge(k, v, Long::sum));
                hist.add(p.latencyUs);
                sendLag.add(p.sendLagUs);
            }
        }
        res.put("offered", offered);
        res.put("sent", sent);
        res.put("acked", acks);
        res.put("bytes_acked", bytesAcked);
        res.put("offered_total", offeredTotal);
        res.put("acked_total", acksTotal);
        res.put("dropped", 0);
        res.put("failed", failed);
        res.put("retried", (long) metricSum(pods, "record-retry-total"));
        res.put("indeterminate", indeterminate);
        res.put("errors", errors);
        res.put("window", total.minus(before).toJson());
        res.put("total", total.toJson());
        res.put("records_per_request", total.requests > 0 ? (double) total.recordsSent / total.requests : null);
        res.put("batch_bytes", total.batches > 0 ? total.batchBytes / total.batches : null);
        // Java's compression-rate is compressed / uncompressed per batch; the result carries the
        // ratio the other engines report (uncompressed / compressed) from the batches' mean rate.
        res.put("compression_ratio",
                total.batches > 0 && total.compressionRateSum > 0 ? total.batches / total.compressionRateSum : null);
        Map<String, Object> latency = new LinkedHashMap<>();
        latency.put("count", hist.getTotalCount());
        latency.put("mean", hist.getMean() / 1000);
        latency.put("p50", hist.getValueAtPercentile(50) / 1000.0);
        latency.put("p90", hist.getValueAtPercentile(90) / 1000.0);
        latency.put("p99", hist.getValueAtPercentile(99) / 1000.0);
        latency.put("p999", hist.getValueAtPercentile(99.9) / 1000.0);
        latency.put("max", hist.getMaxValue() / 1000.0);
        res.put("delivery_latency_ms", latency);
        res.put("latency_histogram", encoded(hist));
        // Open loop only (a closed loop has no schedule to fall behind): merged by the driver.
        res.put("send_lag_histogram", openLoop ? encoded(sendLag) : null);
    }

    /** An HdrHistogram as base64 of its compressed V2 encoding (what the driver decodes). */
    static String encoded(Histogram hist) {
        ByteBuffer buffer = ByteBuffer.allocate(hist.getNeededByteBufferCapacity());
        int n = hist.encodeIntoCompressedByteBuffer(buffer);
        byte[] bytes = new byte[n];
        buffer.flip();
        buffer.get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** The client metrics summed (totals, rates), maxed (maxima) or averaged (the rest) over pods. */
    static Map<String, Double> clientMetrics(List<Pod> pods) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (String name : CLIENT_METRICS) {
            double sum = 0, max = Double.NEGATIVE_INFINITY;
            int n = 0;
            for (Pod p : pods) {
                double v = metric(p, name);
                if (Double.isNaN(v) || Double.isInfinite(v)) {
                    continue;
                }
                sum += v;
                max = Math.max(max, v);
                n++;
            }
            if (n == 0) {
                continue;
            }
            boolean additive = name.endsWith("-rate") || name.endsWith("-total") || name.endsWith("-bytes");
            out.put(name, name.endsWith("-max") ? max : additive ? sum : sum / n);
        }
        return out;
    }

    static double metricSum(List<Pod> pods, String name) {
        double sum = 0;
        for (Pod p : pods) {
            double v = metric(p, name);
            if (!Double.isNaN(v)) {
                sum += v;
            }
        }
        return sum;
    }

    static double metric(Pod pod, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : pod.producer.metrics().entrySet()) {
            MetricName m = e.getKey();
            if (m.name().equals(name) && m.group().equals("producer-metrics")) {
                return e.getValue().metricValue() instanceof Number v ? v.doubleValue() : Double.NaN;
            }
        }
        return Double.NaN;
    }

    private static boolean sleepUntil(long deadlineNs) throws InterruptedException {
        synchronized (WAKE) {
            long wait;
            while (!interrupted && (wait = deadlineNs - System.nanoTime()) > 0) {
                WAKE.wait(Math.max(1, Math.min(wait / 1_000_000, 100)));
            }
        }
        return !interrupted;
    }

    /** SIGTERM/SIGINT end the schedule: a bounded drain follows and the result is still printed. */
    @SuppressWarnings("restriction")
    private static void installSignals() {
        for (String name : new String[] {"TERM", "INT"}) {
            sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> {
                interrupted = true;
                synchronized (WAKE) {
                    WAKE.notifyAll();
                }
            });
        }
    }

    /** Request accounting summed over the pods at one moment. */
    static final class Snapshot {
        Map<String, Long> byNode = new TreeMap<>();
        long requests, recordsSent, bytesOut, batches;
        double batchBytes, compressionRateSum;

        static Snapshot take(List<Pod> pods) {
            Snapshot s = new Snapshot();
            for (Pod p : pods) {
                p.counter.requestsByNode().forEach((k, v) -> s.byNode.merge(k, v, Long::sum));
                s.requests += p.counter.requests();
                s.batches += p.counter.batches();
                s.batchBytes += p.counter.batchBytesSum();
                s.compressionRateSum += p.counter.compressionRateSum();
                s.recordsSent += (long) metric(p, "record-send-total");
                s.bytesOut += (long) metric(p, "outgoing-byte-total");
            }
            return s;
        }

        Snapshot minus(Snapshot earlier) {
            Snapshot s = new Snapshot();
            byNode.forEach((k, v) -> s.byNode.put(k, v - earlier.byNode.getOrDefault(k, 0L)));
            s.requests = requests - earlier.requests;
            s.recordsSent = recordsSent - earlier.recordsSent;
            s.bytesOut = bytesOut - earlier.bytesOut;
            s.batches = batches - earlier.batches;
            s.batchBytes = batchBytes - earlier.batchBytes;
            s.compressionRateSum = compressionRateSum - earlier.compressionRateSum;
            return s;
        }

        Map<String, Object> toJson() {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("requests", requests); // every ProduceRequest built (acks=0 included)
            out.put("produce_requests", byNode); // broker id -> produce responses (exact per broker)
            out.put("records_sent", recordsSent);
            out.put("bytes_out", bytesOut);
            out.put("batches", batches);
            return out;
        }
    }
}
