package io.github.kbt.javaengine;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Every acked record as "partition offset id" (tuner/driver/acked_verify.py reads it back). Each pod
 * writes through its own {@link Local} buffer from its producer's callback thread, so an ack costs a
 * few byte stores, not a lock or a String: callbacks run on the producer's single I/O thread, and a
 * slow callback would slow the producer itself.
 */
final class AckWriter {
    private static final byte[] HEX = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private final OutputStream out;
    private long lines;

    AckWriter(String path) throws IOException {
        this.out = path == null || path.isEmpty() ? null : new FileOutputStream(path);
    }

    Local local() {
        return new Local();
    }

    private synchronized void write(byte[] buf, int len, long n) {
        lines += n;
        if (out == null) {
            return;
        }
        try {
            out.write(buf, 0, len);
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

    /** One pod's buffer: used by one thread at a time (its producer's callbacks), flushed at the end. */
    final class Local {
        private final byte[] buf = new byte[1 << 16];
        private int len;
        private long n;

        void write(int partition, long offset, long id) {
            if (len > buf.length - 64) {
                flush();
            }
            len = decimal(partition, len);
            buf[len++] = ' ';
            len = decimal(offset, len);
            buf[len++] = ' ';
            for (int i = 15; i >= 0; i--) {
                buf[len++] = HEX[(int) ((id >>> (4 * i)) & 0xf)];
            }
            buf[len++] = '\n';
            n++;
        }

        synchronized void flush() {
            AckWriter.this.write(buf, len, n);
            len = 0;
            n = 0;
        }

        private int decimal(long v, int at) {
            if (v < 0) {
                buf[at++] = '-';
                v = -v;
            }
            int start = at;
            do {
                buf[at++] = (byte) ('0' + v % 10);
                v /= 10;
            } while (v > 0);
            for (int i = start, j = at - 1; i < j; i++, j--) {
                byte t = buf[i];
                buf[i] = buf[j];
                buf[j] = t;
            }
            return at;
        }
    }
}
