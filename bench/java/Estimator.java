// The Java producer's compression-ratio estimate, measured on kafka-clients itself (run through
// python -m bench.java_estimator, which writes a workload's corpus and passes its settings):
//
// fractions <corpus> <codec>[,<codec>...]
//     the compressed fraction kafka-clients computes for a batch of n records
//     (MemoryRecordsBuilder.compressionRatio(): compressed / uncompressed record bytes, the figure its
//     CompressionRatioEstimator follows): p10/p50/p90 over 40 batches from random starting entries.
// watch <bootstrap> <topic> <partitions> <pods> <rate> <seconds> <codec> <linger.ms> <batch.size> <corpus>
//     `pods` producers in this JVM (as kbt's Java engine runs them) each send `rate` records/s to a
//     new topic; every 0.5 s the topic's estimate and the producers' records-per-request-avg, at the
//     end every rise of the estimate (each: a batch that compressed worse than estimated).
//
// Records: each corpus entry cut or extended to its size, ending in the engine's " kbtid=" and 16
// hex digits.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.CompressionRatioEstimator;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class Estimator {
    static final int[] SIZES = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 45, 64, 100};
    static final int BATCHES = 40;

    public static void main(String[] args) throws Exception {
        String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
        if (args[0].equals("fractions")) {
            fractions(rest);
        } else {
            watch(rest);
        }
    }

    static void fractions(String[] args) throws Exception {
        List<byte[]> values = corpus(Path.of(args[0]));
        Random starts = new Random(1);
        for (String codec : args[1].split(",")) {
            Compression compression = Compression.of(CompressionType.forName(codec)).build();
            StringBuilder out = new StringBuilder(codec + ":");
            for (int n : SIZES) {
                double[] fractions = new double[BATCHES];
                for (int b = 0; b < BATCHES; b++) {
                    MemoryRecordsBuilder builder = MemoryRecords.builder(
                            ByteBuffer.allocate(1 << 22), compression, TimestampType.CREATE_TIME, 0L);
                    int start = starts.nextInt(values.size());
                    long now = System.currentTimeMillis();
                    for (int i = 0; i < n; i++) {
                        builder.append(now + i, null, values.get((start + i) % values.size()));
                    }
                    builder.close();
                    fractions[b] = builder.compressionRatio();
                }
                Arrays.sort(fractions);
                out.append(String.format(" %d:%.3f/%.3f/%.3f", n, fractions[4], fractions[BATCHES / 2], fractions[35]));
            }
            System.out.println(out);
        }
    }

    static void watch(String[] a) throws Exception {
        String bootstrap = a[0];
        String topic = a[1];
        int partitions = Integer.parseInt(a[2]);
        int pods = Integer.parseInt(a[3]);
        double rate = Double.parseDouble(a[4]);
        int seconds = Integer.parseInt(a[5]);
        String codec = a[6];
        String linger = a[7];
        String batch = a[8];
        List<byte[]> values = corpus(Path.of(a[9]));
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
        List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
        for (int i = 0; i < pods; i++) {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("key.serializer", ByteArraySerializer.class.getName());
            p.put("value.serializer", ByteArraySerializer.class.getName());
            p.put("compression.type", codec);
            p.put("linger.ms", linger);
            p.put("batch.size", batch);
            p.put("client.id", "estimate-watch-" + i);
            producers.add(new KafkaProducer<>(p));
            producers.get(i).partitionsFor(topic);
        }
        CompressionType type = CompressionType.forName(codec);
        ScheduledExecutorService senders = Executors.newScheduledThreadPool(pods);
        long period = (long) (1e9 / rate);
        Random ids = new Random(7);
        for (int i = 0; i < pods; i++) {
            KafkaProducer<byte[], byte[]> producer = producers.get(i);
            long[] seq = {i * 131L};
            senders.scheduleAtFixedRate(() -> {
                producer.send(new ProducerRecord<>(topic, stamped(values.get((int) (seq[0]++ % values.size())), ids.nextLong())));
            }, i * period / pods, period, TimeUnit.NANOSECONDS);
        }
        List<String> rises = new ArrayList<>();
        Thread watcher = new Thread(() -> {
            float prev = CompressionRatioEstimator.estimation(topic, type);
            while (!Thread.currentThread().isInterrupted()) {
                float now = CompressionRatioEstimator.estimation(topic, type);
                if (now > prev) {
                    rises.add(String.format("%.3f->%.3f", prev, now));
                }
                prev = now;
                try {
                    Thread.sleep(0, 100_000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        watcher.start();
        long start = System.nanoTime();
        for (int s = 0; s < seconds * 2; s++) {
            Thread.sleep(500);
            double perRequest = 0;
            for (KafkaProducer<byte[], byte[]> producer : producers) {
                for (var e : producer.metrics().entrySet()) {
                    Object v = e.getValue().metricValue();
                    if (e.getKey().group().equals("producer-metrics")
                            && e.getKey().name().equals("records-per-request-avg")
                            && v instanceof Double d && !d.isNaN()) {
                        perRequest += d / pods;
                    }
                }
            }
            System.out.printf("t=%.1f s  estimate %.3f  records/request %.1f%n",
                    (System.nanoTime() - start) / 1e9, CompressionRatioEstimator.estimation(topic, type), perRequest);
        }
        watcher.interrupt();
        watcher.join();
        senders.shutdownNow();
        for (KafkaProducer<byte[], byte[]> producer : producers) {
            producer.close();
        }
        System.out.println("rises: " + rises.size() + " " + String.join(" ", rises));
    }

    static List<byte[]> corpus(Path path) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        List<byte[]> values = new ArrayList<>();
        Random ids = new Random(7);
        for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode node = mapper.readTree(line);
            byte[] text = node.path("message").asText().getBytes(StandardCharsets.UTF_8);
            int size = node.path("bytes").asInt(0);
            byte[] value = new byte[size > 0 ? size : text.length];
            for (int at = 0; at < value.length; ) {
                int take = Math.min(text.length, value.length - at);
                System.arraycopy(text, 0, value, at, take);
                at += take;
                if (at < value.length) {
                    value[at++] = ' ';
                }
            }
            values.add(stamped(value, ids.nextLong()));
        }
        return values;
    }

    /** `value` ending in the engine's record id: " kbtid=" and 16 hex digits. */
    static byte[] stamped(byte[] value, long id) {
        byte[] out = value.clone();
        byte[] tail = String.format(" kbtid=%016x", id).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(tail, 0, out, Math.max(0, out.length - tail.length), Math.min(tail.length, out.length));
        return out;
    }
}
