package io.github.kbt.javaengine;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * The client exporter of one engine process: kbt's metric contract (docs/dashboards.md, the series
 * tuner/driver/client_exporter.py serves for librdkafka; their one definition is CLIENT_SERIES in
 * tuner/measure/catalog.py) in base units (seconds, bytes) on the port the lab assigned to this
 * process, scraped by the lab's Prometheus as job kbt-client. Labels run, producer ("p<pod>", or
 * "process-N" for the process's delivery latency), client="java", broker where meaningful.
 *
 * <p>Everything is read when Prometheus scrapes (one collector, so one scrape reads one moment): the
 * counters from the pods' own tallies and the producers' sensors (RequestCounter), the gauges from the
 * producers' windowed metrics (records-per-request-avg, batch-size-avg, compression-rate-avg,
 * record-queue-time-avg, produce-throttle-time-avg/-max; request-total is a counter), the delivery
 * latency histogram from the pods' HdrHistograms. Nothing is recorded on the produce path.
 */
final class ClientExporter implements AutoCloseable {
    static final String CLIENT = "java";
    private static final String[] QUANTILES = {"0.5", "0.99"};
    /**
     * Upper bounds (seconds) of kbt_client_delivery_latency_seconds' buckets, +Inf implied: the
     * contract's DELIVERY_BUCKETS_S (tuner/measure/catalog.py; a test compares what this serves).
     */
    static final double[] DELIVERY_BUCKETS_S = {
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.5, 10.0, 30.0, 60.0,
    };

    private final HTTPServer server;
    private final Scrapes scrapes;

    private ClientExporter(HTTPServer server, Scrapes scrapes) {
        this.server = server;
        this.scrapes = scrapes;
    }

    /**
     * Serve the pods' series on {@code exporter.host():exporter.port()}. {@code brokers}: the topic's
     * leaders, exported at 0 before their first request so a rate starts from the first scrape.
     * IOException when the port is taken (the run goes on unexported).
     */
    static ClientExporter start(Plan.Exporter exporter, String run, List<Pod> pods, Set<String> brokers,
            boolean acksZero) throws IOException {
        PrometheusRegistry registry = new PrometheusRegistry();
        Scrapes scrapes = new Scrapes();
        registry.register(new Series(run, exporter.process(), pods, brokers, acksZero, scrapes));
        HTTPServer server = HTTPServer.builder()
                .hostname(exporter.host())
                .port(exporter.port())
                .registry(registry)
                .executorService(scrapes)
                .buildAndStart();
        return new ClientExporter(server, scrapes);
    }

    /**
     * Wait (at most {@code seconds}) for one scrape that begins after this call and is delivered, so
     * the run's final counts reach Prometheus before the process ends. True when one was.
     */
    boolean awaitScrape(double seconds) throws InterruptedException {
        long seen = scrapes.begun.get();
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        while (scrapes.delivered.get() <= seen && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
        }
        return scrapes.delivered.get() > seen;
    }

    /**
     * The HTTP server's exchange threads, numbering scrapes: Series.collect numbers its scrape as it
     * begins reading (in the exchange's own thread); when that exchange's handler has returned, the
     * response was written whole and the number counts as delivered. (Counting at collect alone let
     * the process end while the response carrying the final counts was still being written.)
     */
    static final class Scrapes extends ThreadPoolExecutor {
        final AtomicLong begun = new AtomicLong();
        final AtomicLong delivered = new AtomicLong();
        private final ThreadLocal<Long> current = new ThreadLocal<>();

        Scrapes() {
            super(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                Thread t = new Thread(r, "client-exporter");
                t.setDaemon(true);
                return t;
            });
        }

        void begin() {
            current.set(begun.incrementAndGet());
        }

        @Override
        protected void afterExecute(Runnable r, Throwable t) {
            Long number = current.get();
            current.remove();
            if (t == null && number != null) {
                delivered.accumulateAndGet(number, Math::max);
            }
        }
    }

    @Override
    public void close() {
        server.close();
    }

    /** All of the process's series, read at once on each scrape. */
    static final class Series implements MultiCollector {
        private final String run, process;
        private final List<Pod> pods;
        private final Set<String> brokers;
        private final boolean acksZero;
        private final Scrapes scrapes;

        Series(String run, String process, List<Pod> pods, Set<String> brokers, boolean acksZero,
                Scrapes scrapes) {
            this.run = run;
            this.process = process;
            this.pods = pods;
            this.brokers = brokers;
            this.acksZero = acksZero;
            this.scrapes = scrapes;
        }

        @Override
        public MetricSnapshots collect() {
            // Numbered first: every value below is read after this, so a scrape numbered after the
            // final counts were reached carries them (awaitScrape).
            scrapes.begin();
            Counter requests = new Counter("kbt_client_produce_requests",
                    "Produce requests sent (Java: produce responses per broker; acks=0: every request, no broker)");
            Counter records = new Counter("kbt_client_records_acked", "Records the brokers acked");
            Counter bytes = new Counter("kbt_client_bytes_acked", "Payload bytes the brokers acked");
            Counter offered = new Counter("kbt_client_offered_records", "Records the schedule offered");
            Counter errors = new Counter("kbt_client_delivery_errors", "Failed deliveries");
            Gauge perRequest = new Gauge("kbt_client_records_per_request",
                    "Records per produce request (Java records-per-request-avg)");
            Gauge batchBytes = new Gauge("kbt_client_batch_bytes",
                    "Partition batch size on the wire (Java batch-size-avg)");
            Gauge compression = new Gauge("kbt_client_compression_ratio",
                    "Uncompressed over compressed batch bytes (Java: 1 / compression-rate-avg)");
            Gauge queue = new Gauge("kbt_client_queue_latency_seconds",
                    "Time a batch's first record waited before a request took it (Java queue-time)");
            Gauge queueAvg = new Gauge("kbt_client_queue_latency_avg_seconds", "Java record-queue-time-avg");
            Gauge rtt = new Gauge("kbt_client_rtt_seconds", "Produce round trip per broker");
            Counter requestsAll = new Counter("kbt_client_requests",
                    "Requests of every kind sent (Java request-total)");
            Gauge throttleAvg = new Gauge("kbt_client_produce_throttle_time_avg_seconds",
                    "Broker quota throttle per produce response (Java produce-throttle-time-avg)");
            Gauge throttleMax = new Gauge("kbt_client_produce_throttle_time_max_seconds",
                    "Java produce-throttle-time-max");
            Delivery delivery = new Delivery("kbt_client_delivery_latency_seconds", "From intended send to ack");
            Histogram latency = new Histogram(1, Pod.LATENCY_MAX_US, 3);
            for (Pod pod : pods) {
                String[] labels = {"run", run, "producer", "p" + pod.index, "client", CLIENT};
                if (acksZero) {
                    requests.add(pod.counter.requests(), labels, "broker", "");
                } else {
                    Map<String, Long> byNode = pod.counter.requestsByNode();
                    for (String broker : brokers) {
                        byNode.putIfAbsent(broker, 0L);
                    }
                    byNode.forEach((broker, n) -> requests.add(n, labels, "broker", broker));
                }
                records.add(pod.acksTotal, labels);
                bytes.add(pod.bytesAckedTotal, labels);
                offered.add(pod.offeredTotal, labels);
                errors.add(pod.failedSoFar(), labels);
                perRequest.add(Main.metric(pod, "records-per-request-avg"), labels);
                batchBytes.add(Main.metric(pod, "batch-size-avg"), labels);
                compression.add(1.0 / Main.metric(pod, "compression-rate-avg"), labels);
                queueAvg.add(Main.metric(pod, "record-queue-time-avg") / 1000.0, labels);
                requestsAll.add(Main.metric(pod, "request-total"), labels);
                throttleAvg.add(Main.metric(pod, "produce-throttle-time-avg") / 1000.0, labels);
                throttleMax.add(Main.metric(pod, "produce-throttle-time-max") / 1000.0, labels);
                double[] queued = pod.counter.queueTimeMs();
                for (int q = 0; q < QUANTILES.length; q++) {
                    queue.add(queued[q] / 1000.0, labels, "quantile", QUANTILES[q]);
                }
                pod.counter.rttMs().forEach((broker, ms) -> {
                    for (int q = 0; q < QUANTILES.length; q++) {
                        rtt.add(ms[q] / 1000.0, labels, "broker", broker, "quantile", QUANTILES[q]);
                    }
                });
                pod.addLatencyTo(latency);
            }
            if (latency.getTotalCount() > 0) {
                delivery.set(latency, Labels.of("run", run, "producer", process, "client", CLIENT));
            }
            List<MetricSnapshot> out = new ArrayList<>();
            for (Family f : List.of(requests, records, bytes, offered, errors, perRequest, batchBytes,
                    compression, queue, queueAvg, rtt, requestsAll, throttleAvg, throttleMax, delivery)) {
                if (!f.isEmpty()) {
                    out.add(f.snapshot());
                }
            }
            return new MetricSnapshots(out);
        }

        @Override
        public List<String> getPrometheusNames() {
            return List.of();
        }
    }

    /** One metric family's points of this scrape; NaN and infinite values are left out. */
    abstract static class Family {
        final String name, help;

        Family(String name, String help) {
            this.name = name;
            this.help = help;
        }

        void add(double value, String[] labels, String... more) {
            if (Double.isNaN(value) || Double.isInfinite(value)) {
                return;
            }
            String[] all = new String[labels.length + more.length];
            System.arraycopy(labels, 0, all, 0, labels.length);
            System.arraycopy(more, 0, all, labels.length, more.length);
            point(value, Labels.of(all));
        }

        private boolean empty = true;

        final void point(double value, Labels labels) {
            addPoint(value, labels);
            empty = false;
        }

        final void markUsed() {
            empty = false;
        }

        final boolean isEmpty() {
            return empty;
        }

        abstract void addPoint(double value, Labels labels);

        abstract MetricSnapshot snapshot();
    }

    static final class Counter extends Family {
        private final CounterSnapshot.Builder builder;

        Counter(String name, String help) {
            super(name, help);
            builder = CounterSnapshot.builder().name(name).help(help);
        }

        @Override
        void addPoint(double value, Labels labels) {
            builder.dataPoint(CounterDataPointSnapshot.builder().value(value).labels(labels).build());
        }

        @Override
        MetricSnapshot snapshot() {
            return builder.build();
        }
    }

    /**
     * The delivery latency of the process's pods (one HdrHistogram of microseconds) as a Prometheus
     * histogram: buckets DELIVERY_BUCKETS_S and +Inf, the sum in seconds.
     */
    static final class Delivery extends Family {
        private final HistogramSnapshot.Builder builder;

        Delivery(String name, String help) {
            super(name, help);
            builder = HistogramSnapshot.builder().name(name).help(help);
        }

        void set(Histogram us, Labels labels) {
            double[] bounds = new double[DELIVERY_BUCKETS_S.length + 1];
            System.arraycopy(DELIVERY_BUCKETS_S, 0, bounds, 0, DELIVERY_BUCKETS_S.length);
            bounds[DELIVERY_BUCKETS_S.length] = Double.POSITIVE_INFINITY;
            long[] counts = new long[bounds.length];  // per bucket, not cumulative
            double sumUs = 0;
            for (HistogramIterationValue v : us.recordedValues()) {
                long value = us.highestEquivalentValue(v.getValueIteratedTo());
                long n = v.getCountAtValueIteratedTo();
                int i = 0;
                while (i < DELIVERY_BUCKETS_S.length && value > DELIVERY_BUCKETS_S[i] * 1e6) {
                    i++;
                }
                counts[i] += n;
                sumUs += (double) value * n;
            }
            builder.dataPoint(HistogramDataPointSnapshot.builder()
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, counts))
                    .sum(sumUs / 1e6)
                    .labels(labels)
                    .build());
            markUsed();
        }

        @Override
        void addPoint(double value, Labels labels) {
            throw new UnsupportedOperationException("a histogram takes set()");
        }

        @Override
        MetricSnapshot snapshot() {
            return builder.build();
        }
    }

    static final class Gauge extends Family {
        private final GaugeSnapshot.Builder builder;

        Gauge(String name, String help) {
            super(name, help);
            builder = GaugeSnapshot.builder().name(name).help(help);
        }

        @Override
        void addPoint(double value, Labels labels) {
            builder.dataPoint(GaugeDataPointSnapshot.builder().value(value).labels(labels).build());
        }

        @Override
        MetricSnapshot snapshot() {
            return builder.build();
        }
    }
}
