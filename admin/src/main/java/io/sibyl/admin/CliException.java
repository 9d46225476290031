package io.sibyl.admin;

/**
 * A failure the operator can act on: the message says what went wrong and what to do, and is printed as it is (no
 * stack trace); {@code bin/sibyl} then exits with {@link #exitCode}.
 */
final class CliException extends RuntimeException {
    /** Exit status of a command that could not do its work. */
    static final int FAILED = 1;
    /** Exit status of a command given wrong or missing options. */
    static final int USAGE = 2;

    private final int exitCode;

    CliException(String message) {
        this(message, FAILED);
    }

    CliException(String message, int exitCode) {
        super(message);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }
}
