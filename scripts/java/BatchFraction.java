// The compressed fraction kafka-clients itself computes for a batch of n records
// (MemoryRecordsBuilder.compressionRatio(): compressed record bytes / uncompressed record bytes, the
// figure its CompressionRatioEstimator follows), on the records kbt's Java engine sends for a
// workload: each corpus entry cut or extended to its size, ending in the engine's " kbtid=" and 16
// hex digits. p10/p50/p90 over 40 batches from random starting entries.
//
//     python scripts/java_batch_fraction.py <sweep.yaml> lz4,zstd
//
// (that script writes the workload's corpus and runs this file with the Java engine's jars).
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.TimestampType;

public class BatchFraction {
    static final int[] SIZES = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 45, 64, 100};
    static final int BATCHES = 40;

    public static void main(String[] args) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        List<byte[]> values = new ArrayList<>();
        Random ids = new Random(7);
        for (String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8)) {
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
            byte[] id = String.format(" kbtid=%016x", ids.nextLong()).getBytes(StandardCharsets.US_ASCII);
            int keep = Math.max(0, value.length - id.length);
            System.arraycopy(id, 0, value, keep, Math.min(id.length, value.length));
            values.add(value);
        }
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
}
