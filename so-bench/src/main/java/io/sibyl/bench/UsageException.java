package io.sibyl.bench;

/** A command-line argument so-bench cannot use; the message says which and why. */
final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
        super(message, null, false, false);
    }
}
