package io.sibyl.oracle;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One scrape of an oracle's metrics endpoint, read the way Prometheus reads it: families from the {@code # TYPE}
 * lines, samples by series; so that tests can hold the endpoint to docs/operations.md and watch values move.
 */
public final class PrometheusScrape {
    private final String text;
    /** Series ({@code name{labels}} as served) to value. */
    private final Map<String, Double> samples = new LinkedHashMap<>();
    private final Set<String> families = new TreeSet<>();

    private PrometheusScrape(String text) {
        this.text = text;
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                families.add(line.split(" ")[2]);
            } else if (!line.isBlank() && !line.startsWith("#")) {
                int space = line.lastIndexOf(' ');
                samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
            }
        }
    }

    /** Reads a scrape's text (as a registry's {@code scrape()} returns it). */
    public static PrometheusScrape parse(String text) {
        return new PrometheusScrape(text);
    }

    /** GETs {@code http://127.0.0.1:port/metrics}; fails unless it answers 200 in the Prometheus text format. */
    public static PrometheusScrape fetch(int port) throws IOException, InterruptedException {
        HttpResponse<String> r = get(port, "/metrics");
        if (r.statusCode() != 200 || !r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain")) {
            throw new AssertionError("scrape of port " + port + " answered " + r.statusCode() + " " + r.headers()
                    + ": " + r.body());
        }
        return new PrometheusScrape(r.body());
    }

    /** A GET of {@code path} on the metrics port, whatever it answers. */
    public static HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Metric families served (the names of the {@code # TYPE} lines). */
    public Set<String> families() {
        return families;
    }

    /**
     * Sum of the samples of {@code series} (a name as served, such as {@code sibyl_oracle_requests_total}) whose
     * labels include every {@code label="value"} given; NaN when there is none.
     */
    public double value(String series, String... labels) {
        double sum = 0;
        boolean found = false;
        for (Map.Entry<String, Double> e : samples.entrySet()) {
            String key = e.getKey();
            int brace = key.indexOf('{');
            String name = brace < 0 ? key : key.substring(0, brace);
            if (!name.equals(series)) {
                continue;
            }
            boolean all = true;
            for (String label : labels) {
                all &= key.contains(label);
            }
            if (all) {
                sum += e.getValue();
                found = true;
            }
        }
        return found ? sum : Double.NaN;
    }

    /** How much {@code series} (with {@code labels}, as in {@link #value}) grew since {@code before}. */
    public double movedSince(PrometheusScrape before, String series, String... labels) {
        return value(series, labels) - before.value(series, labels);
    }

    /** The body as served. */
    public String text() {
        return text;
    }

    @Override
    public String toString() {
        return text;
    }
}
