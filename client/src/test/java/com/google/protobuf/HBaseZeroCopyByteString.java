package com.google.protobuf;

/**
 * Test-classpath stand-in for hbase-protocol's class of the same name, which extends protobuf 2.5's
 * {@code LiteralByteString}. The build pins protobuf-java 3 (BookKeeper needs it), where that class is gone, so
 * HBase's {@code ByteStringer} failed to initialise with a {@code NoClassDefFoundError}, and with it the master's meta
 * update of a region split (MetaTableAccessor.multiMutate): {@code Admin.split} left the parent region closed for good.
 * {@code ByteStringer} catches exactly {@link IllegalAccessError} from {@link #wrap(byte[])} and then copies bytes
 * instead of wrapping them, so every method here throws it. Test classes come first on the class path, so this one
 * shadows the original in the minicluster the tests run.
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
