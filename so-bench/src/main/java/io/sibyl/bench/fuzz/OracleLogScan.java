package io.sibyl.bench.fuzz;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Looks through the oracle's output for what must never appear, however hostile its peers: an exception it did not
 * expect, a failure of the sequencer, a leaked buffer, running out of memory.
 */
final class OracleLogScan {
    private static final String[] NEVER = {"unexpected error", "sequencer failed", "LEAK:", "OutOfMemoryError",
            "Exception in thread"};

    private OracleLogScan() {
    }

    /** How many lines hold each of the {@link #NEVER} texts (only those found), and the first such line. */
    static Map<String, Long> scan(Path log, StringBuilder firstLine) throws IOException {
        Map<String, Long> found = new LinkedHashMap<>();
        try (BufferedReader r = Files.newBufferedReader(log, StandardCharsets.ISO_8859_1)) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                for (String never : NEVER) {
                    if (line.contains(never)) {
                        found.merge(never, 1L, Long::sum);
                        if (firstLine.length() == 0) {
                            firstLine.append(line);
                        }
                    }
                }
            }
        }
        return found;
    }
}
