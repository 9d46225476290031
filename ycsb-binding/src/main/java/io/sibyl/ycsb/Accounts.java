package io.sibyl.ycsb;

/**
 * The accounts of the closed economy: row keys that sort in account order (so one scan from the first key reads
 * every account) and opening balances that add up exactly to the configured total.
 */
public record Accounts(long count, long total) {
    /** The field holding an account's balance, as a decimal string. */
    public static final String BALANCE = "balance";

    public Accounts {
        if (count <= 0) {
            throw new IllegalArgumentException("the closed economy needs at least one account, not " + count);
        }
        if (total < 0) {
            throw new IllegalArgumentException("the total cash cannot be negative: " + total);
        }
    }

    /** The row key of account {@code i} (0-based). */
    public String key(long i) {
        return String.format("account%010d", i);
    }

    /** The first row key, where an audit's scan starts. */
    public String firstKey() {
        return key(0);
    }

    /** The opening balance of account {@code i}: the total split evenly, the remainder one unit each to the first. */
    public long openingBalance(long i) {
        return total / count + (i < total % count ? 1 : 0);
    }
}
