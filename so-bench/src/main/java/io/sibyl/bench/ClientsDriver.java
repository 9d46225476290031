package io.sibyl.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * A driver process of so-bench-clients, started by {@link ClientsBench} (never by hand). Its flags are the fields of
 * {@link DriverLoad.Settings}; then it follows commands on its standard input, one a line, so that every driver's
 * measured window starts and ends at the same moment: {@code GO} starts the load, {@code MEASURE} starts the window,
 * {@code STOP} ends it, prints a {@link DriverResult} line and exits. It prints {@code CONNECTED n} once its
 * connections have their HELLO, or {@code FAILED why}.
 */
public final class ClientsDriver {
    private ClientsDriver() {
    }

    public static void main(String[] args) throws Exception {
        DriverLoad.Settings settings;
        try {
            settings = ClientsOptions.driverSettings(args);
        } catch (UsageException e) {
            System.out.println("FAILED bad driver arguments: " + e.getMessage());
            System.exit(2);
            return;
        }
        DriverLoad load;
        try {
            load = DriverLoad.connect(settings);
        } catch (IOException e) {
            System.out.println("FAILED " + e.getMessage());
            System.exit(1);
            return;
        }
        System.out.println("CONNECTED " + settings.connections());
        System.out.flush();
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = commands.readLine()) != null) {
            switch (line.trim()) {
                case "GO" -> load.start();
                case "MEASURE" -> load.beginMeasurement();
                case "STOP" -> {
                    DriverResult result = load.finish();
                    System.out.println(result.encode());
                    if (load.firstFailure() != null) {
                        System.out.println("FAILURE " + load.firstFailure().replace('\n', ' '));
                    }
                    System.out.flush();
                    System.exit(0);
                }
                default -> System.err.println("so-bench-clients driver: unknown command '" + line + "'");
            }
        }
        // The coordinator went away: nobody will read a result.
        System.exit(1);
    }
}
