package io.github.kbt.javaengine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The payloads: the corpus kbt writes for every engine (tuner/driver/corpus.py), each
 * message cut or extended to its `bytes`, its tail replaced by " kbtid=" + 16 hex digits at send
 * time (tuner/driver/payload.py: same length, so sizes stay exact and delivery verification finds
 * the id the way it does for the librdkafka engine).
 */
final class Corpus {
    static final byte[] ID_MARK = " kbtid=".getBytes(StandardCharsets.US_ASCII);
    static final int ID_BYTES = ID_MARK.length + 16;
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    /** A value template: the kept prefix followed by room for the id's 16 hex digits. */
    record Entry(byte[] template, byte[] key) {
    }

    final List<Entry> entries;

    private Corpus(List<Entry> entries) {
        this.entries = entries;
    }

    static Corpus load(Path path) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        List<Entry> out = new ArrayList<>();
        try (BufferedReader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            String line;
            int n = 0;
            while ((line = reader.readLine()) != null) {
                n++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode node = mapper.readTree(line);
                String message = node.path("message").asText("");
                if (message.isEmpty()) {
                    throw new IOException("corpus " + path + ":" + n + ": empty message");
                }
                int size = node.path("bytes").asInt(0);
                byte[] text = message.getBytes(StandardCharsets.UTF_8);
                if (size > 0) {
                    text = fit(text, size);
                }
                JsonNode key = node.get("key");
                byte[] keyBytes = key == null || key.isNull() ? null : key.asText().getBytes(StandardCharsets.UTF_8);
                out.add(new Entry(template(text), keyBytes));
            }
        }
        if (out.isEmpty()) {
            throw new IOException("corpus " + path + ": no messages");
        }
        return new Corpus(out);
    }

    /** payload.stamp_prefix(event) plus 16 bytes for the id digits. */
    static byte[] template(byte[] event) {
        int keep = event.length <= ID_BYTES ? 0 : event.length - ID_BYTES;
        byte[] out = new byte[keep + ID_BYTES];
        System.arraycopy(event, 0, out, 0, keep);
        System.arraycopy(ID_MARK, 0, out, keep, ID_MARK.length);
        return out;
    }

    /** A copy of `template` carrying `id` as 16 lower-case hex digits at its end. */
    static byte[] stamp(byte[] template, long id) {
        byte[] out = template.clone();
        for (int i = 0; i < 16; i++) {
            out[out.length - 1 - i] = HEX[(int) ((id >>> (4 * i)) & 0xf)];
        }
        return out;
    }

    /** `text` repeated (space-separated) or cut to exactly n bytes. */
    static byte[] fit(byte[] text, int n) {
        byte[] out = new byte[n];
        int at = 0;
        while (at < n) {
            int take = Math.min(text.length, n - at);
            System.arraycopy(text, 0, out, at, take);
            at += take;
            if (at < n) {
                out[at++] = ' ';
            }
        }
        return out;
    }
}
