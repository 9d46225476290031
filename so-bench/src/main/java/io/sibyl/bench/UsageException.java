package io.sibyl.bench;

/** A command-line argument a so-bench tool cannot use; the message says which and why. */
public final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    /** {@code message} names the argument and what is wrong with it. */
    public UsageException(String message) {
        super(message, null, false, false);
    }
}
