package io.github.kbt.javaengine;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Every acked record as "partition offset id" (tuner/driver/acked_verify.py reads it back). */
final class AckWriter {
    private final BufferedWriter out;
    private long lines;

    AckWriter(String path) throws IOException {
        this.out = path == null || path.isEmpty() ? null
                : Files.newBufferedWriter(Path.of(path), StandardCharsets.US_ASCII);
    }

    synchronized void write(int partition, long offset, long id) {
        lines++;
        if (out == null) {
            return;
        }
        try {
            out.write(Integer.toString(partition));
            out.write(' ');
            out.write(Long.toString(offset));
            out.write(' ');
            out.write(String.format("%016x", id));
            out.write('\n');
        } catch (IOException e) {
            throw new IllegalStateException("acked file: " + e.getMessage(), e);
        }
    }

    synchronized long lines() {
        return lines;
    }

    synchronized void close() throws IOException {
        if (out != null) {
            out.close();
        }
    }
}
