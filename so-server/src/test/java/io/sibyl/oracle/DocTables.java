package io.sibyl.oracle;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads the settings tables of docs/*.md, so that tests can hold them to the keys and defaults in the code. */
public final class DocTables {
    private DocTables() {
    }

    /**
     * Key and default (backticks removed) of each row of the first table after {@code heading}.
     *
     * @throws IllegalStateException if the document has no such heading
     */
    public static Map<String, String> settingsTable(Path doc, String heading) throws IOException {
        List<String> lines = Files.readAllLines(doc, StandardCharsets.UTF_8);
        Map<String, String> out = new LinkedHashMap<>();
        int i = lines.indexOf(heading);
        if (i < 0) {
            throw new IllegalStateException(doc + " has no " + heading);
        }
        while (!lines.get(i).startsWith("| key")) {
            i++;
        }
        for (i += 2; i < lines.size() && lines.get(i).startsWith("| `"); i++) {
            String[] cells = lines.get(i).split("\\s*\\|\\s*");
            out.put(cells[1].replace("`", ""), cells[2].replace("`", ""));
        }
        return out;
    }

    /**
     * The cells of each row of every table in the section under {@code heading} (up to the next heading of its level)
     * whose header row starts with {@code header}; rows whose first cell is code ({@code | `...`}), backticks kept.
     *
     * @throws IllegalStateException if the document has no such heading
     */
    public static List<String[]> rows(Path doc, String heading, String header) throws IOException {
        List<String> lines = Files.readAllLines(doc, StandardCharsets.UTF_8);
        int i = lines.indexOf(heading);
        if (i < 0) {
            throw new IllegalStateException(doc + " has no " + heading);
        }
        String level = heading.substring(0, heading.indexOf(' ') + 1);
        List<String[]> out = new java.util.ArrayList<>();
        boolean inTable = false;
        for (i++; i < lines.size() && !lines.get(i).startsWith(level); i++) {
            String line = lines.get(i);
            if (line.startsWith(header)) {
                inTable = true;
            } else if (!line.startsWith("|")) {
                inTable = false;
            } else if (inTable && line.startsWith("| `")) {
                String[] cells = line.split("\\s*\\|\\s*");
                out.add(java.util.Arrays.copyOfRange(cells, 1, cells.length));
            }
        }
        return out;
    }

    /**
     * The metric names that start with {@code prefix} in the tables of docs/operations.md's Metrics section, labels
     * ({@code {type}}) left out.
     */
    public static java.util.Set<String> metricNames(String prefix) throws IOException {
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (String[] row : rows(Path.of("..", "docs", "operations.md"), "## Metrics", "| metric")) {
            String name = row[0].replace("`", "").replaceAll("\\{.*", "");
            if (name.startsWith(prefix)) {
                names.add(name);
            }
        }
        return names;
    }
}
