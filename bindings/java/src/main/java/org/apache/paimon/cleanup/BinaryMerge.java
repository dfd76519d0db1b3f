package org.apache.paimon.cleanup;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BinaryOperator;

/**
 * Merges partial results of units ({@link OrphanUnits#merge}, {@link ExpiryUnits#merge}) with a
 * binary counter: it keeps at most one partial per power of two of results merged into it, so
 * merging n results of S bytes in all costs O(S log n) bytes decoded and encoded. A running merge
 * ({@code acc = merge(acc, next)}, as an engine's reduce does) decodes and encodes the growing
 * accumulation once per result, O(S n): with 1,000 results that is 500 passes over the merged
 * bytes instead of 10. An engine task that executes many units merges their results through one
 * instance; a driver or a shuffle's reduce side merges received results the same way.
 *
 * <p>Both merges are associative and commutative byte for byte, so the result is the same
 * whatever order the results come in. Not thread-safe: one instance per task or thread.
 */
public final class BinaryMerge {
    private final BinaryOperator<byte[]> merge;
    private final List<byte[]> stack = new ArrayList<>();
    private final List<Long> sizes = new ArrayList<>();

    /**
     * A counter merging with {@code merge}, whose neutral element is the empty byte string.
     *
     * @param merge the units' merge, e.g. {@code OrphanUnits::merge}
     */
    public BinaryMerge(BinaryOperator<byte[]> merge) {
        this.merge = merge;
    }

    /**
     * Adds one partial result, merging equal-sized partials on the stack.
     *
     * @param partial a unit's result (or several merged)
     * @throws PaimonCleanupException what the merge throws (foreign or doubled results)
     */
    public void add(byte[] partial) {
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

    /** @return true when nothing was added since the counter was made or last cleared */
    public boolean isEmpty() {
        return stack.isEmpty();
    }

    /**
     * @return every partial added, merged (the empty byte string when none was added); the
     *     counter is unchanged
     * @throws PaimonCleanupException what the merge throws
     */
    public byte[] result() {
        byte[] merged = new byte[0];
        for (int i = stack.size() - 1; i >= 0; i--) {
            merged = merge.apply(stack.get(i), merged);
        }
        return merged;
    }

    /** Drops every partial added, freeing them for the garbage collector. */
    public void clear() {
        stack.clear();
        sizes.clear();
    }

    /**
     * @param parts partial results
     * @param merge the units' merge
     * @return {@code parts} merged through a binary counter (the empty byte string for none)
     */
    public static byte[] all(Iterable<byte[]> parts, BinaryOperator<byte[]> merge) {
        BinaryMerge m = new BinaryMerge(merge);
        for (byte[] p : parts) {
            m.add(p);
        }
        return m.result();
    }
}
