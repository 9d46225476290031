package io.sibyl.client;

/**
 * A read of the past ({@link TransactionManager#beginAt}) that the oracle cannot serve: reads of the past are off on it,
 * the time or timestamp is older than the history it keeps (garbage collection may have removed what was visible
 * then), or it lies in the future. The message is the oracle's, with the setting to change.
 */
public class HistoryUnavailableException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public HistoryUnavailableException(String message) {
        super(message);
    }
}
