package com.google.protobuf;

/**
 * Stand-in, for every {@code EmbeddedHBase} user, for hbase-protocol's class of the same name, which extends protobuf 2.5's
 * {@code LiteralByteString}. The build pins protobuf-java 3 (BookKeeper needs it), where that class is gone, so
 * HBase's {@code ByteStringer} failed to initialise with a {@code NoClassDefFoundError}, and with it the master's meta
 * update of a region split (MetaTableAccessor.multiMutate): {@code Admin.split} left the parent region closed for good.
 * {@code ByteStringer} catches exactly {@link IllegalAccessError} from {@link #wrap(byte[])} and then copies bytes
 * instead of wrapping them, so every method here throws it. This module comes before hbase-protocol on the class
 * path of the modules that use it (a direct dependency before a transitive one), so this class shadows the original
 * in the minicluster they run. Region servers of a real cluster have their own class path and never see it.
 */
public final class HBaseZeroCopyByteString {
    private HBaseZeroCopyByteString() {
    }

    public static ByteString wrap(byte[] array) {
        throw noZeroCopy();
    }

    public static ByteString wrap(byte[] array, int offset, int length) {
        throw noZeroCopy();
    }

    public static byte[] zeroCopyGetBytes(ByteString buf) {
        throw noZeroCopy();
    }

    private static IllegalAccessError noZeroCopy() {
        return new IllegalAccessError("zero-copy ByteString needs protobuf 2.5 (protobuf-java 3 is on the class path):"
                + " HBase copies the bytes instead");
    }
}
