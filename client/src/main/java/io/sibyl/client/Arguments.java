package io.sibyl.client;

import java.util.List;

/**
 * Refuses null arguments of the public API with a message that says which one and what to pass instead: the
 * package's short name for {@link io.sibyl.protocol.Arguments}, which the oracle package's public classes use too.
 */
final class Arguments {
    private Arguments() {
    }

    /** As {@link io.sibyl.protocol.Arguments#required}. */
    static <T> T required(T value, String name, String fix) {
        return io.sibyl.protocol.Arguments.required(value, name, fix);
    }

    /** As {@link io.sibyl.protocol.Arguments#requiredElements}. */
    static <T, L extends List<T>> L requiredElements(L values, String name, String fix) {
        return io.sibyl.protocol.Arguments.requiredElements(values, name, fix);
    }
}
