package io.sibyl.protocol;

import java.util.List;

/**
 * Refuses null arguments of a public API with a message that says which one and what to pass instead, in place of the
 * JDK's bare NullPointerException somewhere inside.
 */
public final class Arguments {
    private Arguments() {
    }

    /**
     * {@code value}, unless it is null.
     *
     * @param name what the argument is, as the message starts ("put")
     * @param fix  what to pass instead ("pass the Put to write")
     * @throws NullPointerException "NAME is null: FIX"
     */
    public static <T> T required(T value, String name, String fix) {
        if (value == null) {
            throw new NullPointerException(name + " is null: " + fix);
        }
        return value;
    }

    /** {@code values}, unless the list or one of its elements is null (the message names the element's index). */
    public static <T, L extends List<T>> L requiredElements(L values, String name, String fix) {
        required(values, name, fix);
        for (int i = 0; i < values.size(); i++) {
            if (values.get(i) == null) {
                throw new NullPointerException(name + "[" + i + "] is null: " + fix);
            }
        }
        return values;
    }
}
