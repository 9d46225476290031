package io.sibyl.protocol;

import java.util.function.LongConsumer;

/**
 * Set of positive {@code long}s without boxing: a {@link SingleWriterLongLongMap} whose values are unused, so it has
 * exactly the map's threading contract (one writer; concurrent {@link #contains} under an external sequence lock
 * never throws, never indexes out of bounds, never loops forever), sizing and shrinking.
 */
public final class SingleWriterLongSet {
    private final SingleWriterLongLongMap map;

    /** A set sized so that {@code expected} keys fit without resizing (and it never shrinks below that). */
    public SingleWriterLongSet(int expected) {
        map = new SingleWriterLongLongMap(expected);
    }

    public boolean contains(long key) {
        return map.containsKey(key);
    }

    public int size() {
        return map.size();
    }

    public boolean isEmpty() {
        return map.isEmpty();
    }

    /** Slots in the current table (for tests of the sizing policy). */
    public int slots() {
        return map.slots();
    }

    /** Adds {@code key}; returns false if it was present. Writer thread only. */
    public boolean add(long key) {
        return map.putIfAbsent(key, 1);
    }

    /** Removes {@code key}; returns false if it was absent. Writer thread only. */
    public boolean remove(long key) {
        return map.remove(key);
    }

    /** Shrinks the table if it stayed sparse since the last call; returns true if it did. Writer thread only. */
    public boolean shrinkIfSparse() {
        return map.shrinkIfSparse();
    }

    /**
     * Calls {@code action} with every key. Writer thread; or a reader under the external sequence lock, which must
     * retry when the lock says the set changed (it walks one table array, so it never fails, only may be stale).
     */
    public void forEach(LongConsumer action) {
        map.forEach((k, v) -> action.accept(k));
    }
}
