package io.sibyl.oracle;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * Serves an oracle's metrics at {@code GET /metrics} in Prometheus' text format, on the JDK's own HTTP server: one
 * daemon thread, so a scraper costs the oracle nothing between scrapes and no web framework rides along.
 */
final class MetricsEndpoint implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetricsEndpoint.class);
    /** The path Prometheus scrapes by default. */
    static final String PATH = "/metrics";
    /** The content type of Prometheus' text exposition format, which {@link OracleMetrics#scrape()} writes. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer http;
    private final ExecutorService executor;
    private final Supplier<String> scrape;
    /** The host as configured, for the log line that tells where the metrics are. */
    private final String host;

    /**
     * Binds {@code host:port} at once (0: a free port), so that a taken port fails the oracle's start naming the
     * setting; serves {@code scrape} only from {@link #start()}.
     *
     * @throws IOException naming {@code metrics.http.port} when the address cannot be bound
     */
    MetricsEndpoint(String host, int port, Supplier<String> scrape) throws IOException {
        this.scrape = scrape;
        this.host = host;
        try {
            http = HttpServer.create(new InetSocketAddress(host, port), 16);
        } catch (IOException e) {
            throw new IOException("metrics.http.port=" + port + ": cannot listen on " + host + ":" + port + " ("
                    + e.getMessage() + "): another process listens there, or choose another port", e);
        }
        executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "sibyl-metrics-http");
            t.setDaemon(true);
            return t;
        });
        http.setExecutor(executor);
        http.createContext("/", this::handle);
    }

    /**
     * The endpoint {@code config}'s {@code metrics.http.port} asks for, bound, or null when it is off.
     *
     * @throws IOException naming {@code metrics.http.port} when the address cannot be bound
     */
    static MetricsEndpoint ofSetting(OracleConfig config, Supplier<String> scrape) throws IOException {
        return config.metricsHttpPort() == OracleConfig.METRICS_OFF ? null
                : new MetricsEndpoint(config.host(), config.metricsHttpPort(), scrape);
    }

    /** Starts answering scrapes. */
    void start() {
        http.start();
        LOG.info("metrics served at http://{}:{}{} (Prometheus text format)", host, port(), PATH);
    }

    /** The port it listens on (the one picked when {@code metrics.http.port} is 0). */
    int port() {
        return http.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            if (!exchange.getRequestURI().getPath().equals(PATH)) {
                reply(exchange, 404, "not found: metrics are at " + PATH + "\n");
            } else if (!method.equals("GET") && !method.equals("HEAD")) {
                reply(exchange, 405, "only GET and HEAD\n");
            } else {
                String body;
                try {
                    body = scrape.get();
                } catch (RuntimeException e) {
                    // A stopped oracle's first scrape: nothing was ever read from its sequencer.
                    reply(exchange, 503, "the oracle's figures cannot be read: " + e.getMessage() + "\n");
                    return;
                }
                exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
                byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
                boolean head = method.equals("HEAD");
                exchange.sendResponseHeaders(200, head ? -1 : bytes.length);
                if (!head) {
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(bytes);
                    }
                }
            }
        }
    }

    private static void reply(HttpExchange exchange, int status, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        http.stop(0);
        executor.shutdownNow();
    }
}
