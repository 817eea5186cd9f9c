package io.github.kbt.javaengine;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One engine process's share of a run (schema 1, written by tuner/driver/java_plan.py): the producer
 * properties and the workload for its pods. Unknown fields are rejected.
 */
public record Plan(
        int schema,
        String run_id,
        String bootstrap,
        String topic,
        // Pods (producers) in this process; their global indexes are pod_offset .. pod_offset+pods-1.
        int pods,
        int pod_offset,
        // Records per second per pod, open loop (latency from the intended send time); 0 = as fast as
        // send() accepts (closed loop, `rate: max`).
        double rate_per_pod,
        double duration_s,
        double warmup_s,
        // Bound on waiting for outstanding records after the schedule ended.
        double drain_s,
        // Epoch seconds at which the schedule starts (every process of a run shares it); 0 = now;
        // -1 = print "ready" once connected, then read it from a line on stdin.
        double start_at,
        // Newline-separated JSON objects {"message": "...", "key": "..."|null, "bytes": n}.
        String corpus_file,
        // Keys drawn per record when the corpus has none: "none" or "random" (over key_cardinality).
        String keys,
        int key_cardinality,
        // Every acked record as "partition offset id" lines.
        String acked_file,
        long seed,
        // Producer properties layered on top of the file (the environment's: security); with no
        // properties_file, every producer property (bootstrap.servers and serializers are the engine's).
        Map<String, String> properties,
        // The rendered producer properties file a user deploys, loaded as Kafka's tools load one
        // (Utils.loadProps: java.util.Properties); absent or null = none.
        String properties_file,
        // The client exporter this process serves (ClientExporter.java); absent or null = none.
        Exporter exporter) {

    /**
     * Where the kbt_client_* series are served: {@code host:port} (loopback unless the lab says
     * otherwise), the {@code producer} label of this process's own series ("process-N"), and how long
     * to wait after the drain for one more scrape, so the final counts reach Prometheus.
     */
    public record Exporter(String host, int port, String process, double final_scrape_s) {
    }

    public static final int SCHEMA = 1;

    static Plan load(Path path) throws IOException {
        ObjectMapper mapper = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
        Plan plan = mapper.readValue(path.toFile(), Plan.class);
        plan.validate();
        return plan;
    }

    void validate() {
        List<String> problems = new ArrayList<>();
        check(problems, schema == SCHEMA, "schema " + schema + " (this engine reads " + SCHEMA + ")");
        check(problems, bootstrap != null && !bootstrap.isEmpty(), "bootstrap is empty");
        check(problems, topic != null && !topic.isEmpty(), "topic is empty");
        check(problems, pods > 0, "pods must be > 0");
        check(problems, pod_offset >= 0, "pod_offset must be >= 0");
        check(problems, rate_per_pod >= 0, "rate_per_pod must be >= 0");
        check(problems, duration_s > 0 && duration_s <= 86400, "duration_s must be in (0, 86400]");
        check(problems, warmup_s >= 0 && warmup_s < duration_s, "warmup_s must be in [0, duration_s)");
        check(problems, drain_s >= 0 && drain_s <= 600, "drain_s must be in [0, 600]");
        check(problems, corpus_file != null && !corpus_file.isEmpty(), "corpus_file is empty");
        check(problems, keys == null || keys.equals("none") || keys.equals("random"), "keys must be none or random");
        check(problems, !"random".equals(keys) || key_cardinality > 0, "keys random needs key_cardinality > 0");
        check(problems, properties != null, "properties is missing");
        if (exporter != null) {
            check(problems, exporter.host() != null && !exporter.host().isEmpty(), "exporter.host is empty");
            check(problems, exporter.port() > 0 && exporter.port() < 65536, "exporter.port must be in [1, 65535]");
            check(problems, exporter.process() != null && !exporter.process().isEmpty(), "exporter.process is empty");
            check(problems, exporter.final_scrape_s() >= 0 && exporter.final_scrape_s() <= 60,
                    "exporter.final_scrape_s must be in [0, 60]");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("bad plan: " + String.join("; ", problems));
        }
    }

    private static void check(List<String> problems, boolean ok, String message) {
        if (!ok) {
            problems.add(message);
        }
    }
}
