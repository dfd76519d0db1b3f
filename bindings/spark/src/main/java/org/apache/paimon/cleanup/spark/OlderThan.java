package org.apache.paimon.cleanup.spark;

import java.math.BigInteger;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneRules;
import java.util.Locale;

/**
 * The {@code --older-than} cut-off in the forms the CLI's {@code remove-orphan-files} takes (the
 * library's {@code spec::time_text::parse_older_than}): a timestamp as Paimon Java's {@code
 * older_than} ({@code 2024-01-01}, {@code 2024-01-01 12:00:00[.fff]}, {@code 2024-01-01T12:00[:00]},
 * month/day/hour/minute/second with one or two digits) read in the JVM's default time zone unless
 * it ends with a zone ({@code Z}, {@code UTC}, {@code +08:00}, {@code -0530}); or a Paimon duration
 * back from now ({@code 1 d}, {@code 30 min}, {@code 12h}). A bare number is refused (it could be
 * milliseconds or an epoch time: use {@code --older-than-ms}); a cut-off in the future is refused.
 *
 * <p>The library's C ABI takes the cut-off in epoch milliseconds only, so the text is read here;
 * {@code scripts/test-spark.sh} checks that the job and the CLI report the same cut-off for the
 * same timestamp text.
 */
final class OlderThan {
    private OlderThan() {}

    /** Parse position over an ASCII text. */
    private static final class Cursor {
        final String s;
        int pos;

        Cursor(String s) {
            this.s = s;
        }

        boolean at(char c) {
            return pos < s.length() && s.charAt(pos) == c;
        }

        boolean digitAt(int i) {
            return i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9';
        }

        /** {@code min..max} digits as a number, or -1. */
        int digits(int min, int max) {
            int start = pos;
            int value = 0;
            while (pos - start < max && digitAt(pos)) {
                value = value * 10 + (s.charAt(pos) - '0');
                pos++;
            }
            return pos - start >= min ? value : -1;
        }

        boolean expect(char c) {
            if (at(c)) {
                pos++;
                return true;
            }
            return false;
        }

        /** An optional {@code .} and 0 to 9 digits, as nanoseconds; -1 when malformed. */
        int fraction() {
            if (!at('.')) {
                return 0;
            }
            pos++;
            int start = pos;
            int value = digits(0, 9);
            int width = pos - start;
            for (int i = width; i < 9; i++) {
                value *= 10;
            }
            return value;
        }
    }

    /** The longest prefix Java's default timestamp formatter reads, or null; sets {@code c.pos}. */
    static LocalDateTime timestampPrefix(Cursor c) {
        int year = c.digits(4, 4);
        if (year < 0 || !c.expect('-')) {
            return null;
        }
        int month = c.digits(1, 2);
        if (month < 0 || !c.expect('-')) {
            return null;
        }
        int day = c.digits(1, 2);
        if (day < 0) {
            return null;
        }
        int h = 0;
        int m = 0;
        int sec = 0;
        int nano = 0;
        if (c.at(' ') && c.digitAt(c.pos + 1)) {
            c.pos++;
            h = c.digits(1, 2);
            if (h < 0 || !c.expect(':')) {
                return null;
            }
            m = c.digits(1, 2);
            if (m < 0 || !c.expect(':')) {
                return null;
            }
            sec = c.digits(1, 2);
            if (sec < 0) {
                return null;
            }
            nano = c.fraction();
        } else if (c.at('T')) {
            c.pos++;
            h = c.digits(1, 2);
            if (h < 0 || !c.expect(':')) {
                return null;
            }
            m = c.digits(1, 2);
            if (m < 0) {
                return null;
            }
            if (c.expect(':')) {
                sec = c.digits(1, 2);
                if (sec < 0) {
                    return null;
                }
                nano = c.fraction();
            }
        }
        if (nano < 0) {
            return null;
        }
        try {
            return LocalDateTime.of(LocalDate.of(year, month, day), LocalTime.of(h, m, sec, nano));
        } catch (DateTimeException e) {
            return null;
        }
    }

    /** A zone suffix ({@code Z}, {@code UTC}, {@code +HH}, {@code +HH:MM}, {@code +HHMM}), or null. */
    static ZoneOffset zoneSuffix(String rest) {
        String z = rest.stripLeading();
        if (z.equals("Z") || z.equalsIgnoreCase("UTC")) {
            return ZoneOffset.UTC;
        }
        if (z.isEmpty() || (z.charAt(0) != '+' && z.charAt(0) != '-')) {
            return null;
        }
        int sign = z.charAt(0) == '+' ? 1 : -1;
        Cursor c = new Cursor(z.substring(1));
        int h = c.digits(2, 2);
        if (h < 0) {
            return null;
        }
        c.expect(':');
        int m = 0;
        if (c.pos < c.s.length()) {
            m = c.digits(2, 2);
            if (m < 0) {
                return null;
            }
        }
        if (c.pos != c.s.length() || h > 18 || m > 59) {
            return null;
        }
        try {
            return ZoneOffset.ofTotalSeconds(sign * (h * 3600 + m * 60));
        } catch (DateTimeException e) {
            return null;
        }
    }

    /** Epoch milliseconds of a timestamp text (local zone unless it names one). */
    static long timestampMillis(String text, ZoneId local) {
        String t = text.strip();
        String bad = "'" + text + "' is not a timestamp (yyyy-MM-dd[ HH:mm:ss[.fff]] or "
                + "yyyy-MM-ddTHH:mm[:ss[.fff]], optionally followed by a zone such as Z or +08:00)";
        Cursor c = new Cursor(t);
        LocalDateTime ldt = timestampPrefix(c);
        if (ldt == null) {
            throw new IllegalArgumentException(bad);
        }
        String rest = t.substring(c.pos);
        if (rest.isEmpty()) {
            ZoneRules rules = local.getRules();
            if (rules.getValidOffsets(ldt).isEmpty()) {
                throw new IllegalArgumentException("'" + text + "' does not exist in the local "
                        + "time zone (a daylight-saving gap); give a zone such as +01:00");
            }
            // The earlier instant of a local time that exists twice, as the library.
            ZoneOffset earliest = rules.getValidOffsets(ldt).get(0);
            for (ZoneOffset o : rules.getValidOffsets(ldt)) {
                if (o.getTotalSeconds() > earliest.getTotalSeconds()) {
                    earliest = o;
                }
            }
            return ldt.toInstant(earliest).toEpochMilli();
        }
        ZoneOffset zone = zoneSuffix(rest);
        if (zone == null) {
            throw new IllegalArgumentException(bad);
        }
        return ldt.toInstant(zone).toEpochMilli();
    }

    /** A Paimon duration ({@code 1 d}, {@code 30 min}, {@code 500 ms}) in milliseconds. */
    static long durationMillis(String text) {
        String t = text.strip();
        int end = 0;
        while (end < t.length() && t.charAt(end) >= '0' && t.charAt(end) <= '9') {
            end++;
        }
        if (end == 0) {
            throw new IllegalArgumentException("duration '" + text + "' does not start with a number");
        }
        BigInteger n = new BigInteger(t.substring(0, end));
        if (n.bitLength() > 64) {
            throw new IllegalArgumentException("duration '" + text + "' is out of range");
        }
        String unit = t.substring(end).strip().toLowerCase(Locale.ROOT);
        long nanosPer;
        switch (unit) {
            case "": case "ms": case "milli": case "millis": case "millisecond": case "milliseconds":
                nanosPer = 1_000_000L;
                break;
            case "d": case "day": case "days":
                nanosPer = 86_400_000_000_000L;
                break;
            case "h": case "hour": case "hours":
                nanosPer = 3_600_000_000_000L;
                break;
            case "min": case "m": case "minute": case "minutes":
                nanosPer = 60_000_000_000L;
                break;
            case "s": case "sec": case "secs": case "second": case "seconds":
                nanosPer = 1_000_000_000L;
                break;
            case "\u00b5s": case "us": case "micro": case "micros": case "microsecond":
            case "microseconds":
                nanosPer = 1_000L;
                break;
            case "ns": case "nano": case "nanos": case "nanosecond": case "nanoseconds":
                nanosPer = 1L;
                break;
            default:
                throw new IllegalArgumentException(
                        "duration '" + text + "' has unknown unit '" + unit + "'");
        }
        BigInteger millis =
                n.multiply(BigInteger.valueOf(nanosPer)).divide(BigInteger.valueOf(1_000_000L));
        return millis.bitLength() < 63 ? millis.longValue() : Long.MAX_VALUE;
    }

    /**
     * The cut-off of {@code --older-than TEXT} in epoch milliseconds.
     *
     * @param text a timestamp or a duration
     * @param nowMs the current time
     * @param local the zone of a timestamp without one
     * @throws IllegalArgumentException with the CLI's message for a malformed text or a cut-off in
     *     the future
     */
    static long parse(String text, long nowMs, ZoneId local) {
        String t = text.strip();
        if (t.isEmpty()) {
            throw new IllegalArgumentException("older-than is empty");
        }
        if (t.chars().allMatch(ch -> ch >= '0' && ch <= '9')) {
            throw new IllegalArgumentException("older-than '" + text + "' is a bare number: give a "
                    + "timestamp ('2024-01-01 12:00:00'), a duration with a unit ('1 d'), or epoch "
                    + "milliseconds with --older-than-ms");
        }
        long cutoff;
        if (timestampPrefix(new Cursor(t)) != null) {
            cutoff = timestampMillis(t, local);
        } else {
            long d;
            try {
                d = durationMillis(t);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("older-than '" + text + "' is neither a timestamp "
                        + "('2024-01-01 12:00:00') nor a duration ('1 d', '30 min')");
            }
            cutoff = nowMs - d; // d >= 0 and nowMs >= 0: no overflow
        }
        if (cutoff > nowMs) {
            throw new IllegalArgumentException("older-than '" + text + "' (" + cutoff
                    + " ms) is in the future (now is " + nowMs + " ms)");
        }
        return cutoff;
    }
}
