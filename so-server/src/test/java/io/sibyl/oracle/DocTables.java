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
     * The cells of each row of the first table after {@code heading} whose header row starts with {@code header}
     * (rows whose first cell is code, {@code | `...`}), backticks kept.
     *
     * @throws IllegalStateException if the document has no such heading
     */
    public static List<String[]> rows(Path doc, String heading, String header) throws IOException {
        List<String> lines = Files.readAllLines(doc, StandardCharsets.UTF_8);
        int i = lines.indexOf(heading);
        if (i < 0) {
            throw new IllegalStateException(doc + " has no " + heading);
        }
        while (!lines.get(i).startsWith(header)) {
            i++;
        }
        List<String[]> out = new java.util.ArrayList<>();
        for (i += 2; i < lines.size() && lines.get(i).startsWith("| `"); i++) {
            String[] cells = lines.get(i).split("\\s*\\|\\s*");
            out.add(java.util.Arrays.copyOfRange(cells, 1, cells.length));
        }
        return out;
    }
}
