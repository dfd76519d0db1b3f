package org.apache.paimon.cleanup.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BinaryOperator;

/**
 * Merges partial results with a binary counter: it keeps at most one partial per power of two of
 * results merged into it, so merging n results of S bytes in all costs O(S log n) bytes decoded
 * and encoded. A running merge ({@code acc = merge(acc, next)}, as Spark's {@code reduceByKey}
 * does on the reduce side) decodes and encodes the growing accumulation once per result, O(S n):
 * with 1,000 stage-1 partitions that is 500 passes over each shard instead of 10.
 *
 * <p>The merges of both unit kinds are associative and commutative byte for byte, so the result
 * is the same whatever order the results come in. Not thread-safe: one instance per task.
 */
final class BinaryMerge {
    private final BinaryOperator<byte[]> merge;
    private final List<byte[]> stack = new ArrayList<>();
    private final List<Long> sizes = new ArrayList<>();

    /** A counter merging with {@code merge} (an empty byte string is its neutral element). */
    BinaryMerge(BinaryOperator<byte[]> merge) {
        this.merge = merge;
    }

    /** Adds one partial result, merging equal-sized partials on the stack. */
    void add(byte[] partial) {
        long size = 1;
        while (!sizes.isEmpty() && sizes.get(sizes.size() - 1) == size) {
            byte[] top = stack.remove(stack.size() - 1);
            sizes.remove(sizes.size() - 1);
            partial = merge.apply(top, partial);
            size *= 2;
        }
        stack.add(partial);
        sizes.add(size);
    }

    /** Every partial added, merged (empty when none was added). */
    byte[] result() {
        byte[] merged = new byte[0];
        for (int i = stack.size() - 1; i >= 0; i--) {
            merged = merge.apply(stack.get(i), merged);
        }
        return merged;
    }

    /** {@code parts} merged with {@code merge} through a binary counter. */
    static byte[] all(Iterable<byte[]> parts, BinaryOperator<byte[]> merge) {
        BinaryMerge m = new BinaryMerge(merge);
        for (byte[] p : parts) {
            m.add(p);
        }
        return m.result();
    }
}
