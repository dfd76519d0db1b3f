package org.paimoncleanup.ref;

import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.fs.FileIO;
import org.apache.paimon.fs.FileStatus;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.PositionOutputStream;
import org.apache.paimon.fs.RemoteIterator;
import org.apache.paimon.fs.SeekableInputStream;
import org.apache.paimon.fs.TwoPhaseOutputStream;

import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link FileIO} that forwards every call to another one (Paimon's S3 file IO for s3://
 * tables) and counts the successful deletes per kind of file ({@link BenchMain#kind}).
 *
 * <p>Forwarded: the calls the wrapped file IO implements itself (every abstract one, {@code
 * listFilesIterative}, {@code newTwoPhaseOutputStream}, {@code isObjectStore}, {@code
 * configure}, {@code setRuntimeContext}, {@code close}). The interface's default methods
 * ({@code deleteQuietly}, {@code deleteFilesQuietly}, {@code listFiles}, {@code exists}-based
 * helpers, ...) are left to the interface, so they run the same steps as on the wrapped file IO
 * (which does not override them) and their deletes pass through {@link #delete} and are counted.
 */
public final class CountingDelegateFileIO implements FileIO {

    private static final long serialVersionUID = 1L;

    private final FileIO delegate;
    private final transient Map<String, AtomicLong> deleted = new ConcurrentHashMap<>();

    /** Wraps {@code delegate}. */
    public CountingDelegateFileIO(FileIO delegate) {
        this.delegate = delegate;
    }

    /** Successful deletes so far per kind. */
    public Map<String, Long> counts() {
        Map<String, Long> out = new TreeMap<>();
        deleted.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    @Override
    public boolean delete(Path path, boolean recursive) throws IOException {
        boolean ok = delegate.delete(path, recursive);
        if (ok) {
            deleted.computeIfAbsent(BenchMain.kind(path), k -> new AtomicLong()).incrementAndGet();
        }
        return ok;
    }

    @Override
    public boolean isObjectStore() {
        return delegate.isObjectStore();
    }

    @Override
    public void configure(CatalogContext context) {
        delegate.configure(context);
    }

    @Override
    public void setRuntimeContext(Map<String, String> options) {
        delegate.setRuntimeContext(options);
    }

    @Override
    public SeekableInputStream newInputStream(Path path) throws IOException {
        return delegate.newInputStream(path);
    }

    @Override
    public PositionOutputStream newOutputStream(Path path, boolean overwrite) throws IOException {
        return delegate.newOutputStream(path, overwrite);
    }

    @Override
    public TwoPhaseOutputStream newTwoPhaseOutputStream(Path path, boolean overwrite)
            throws IOException {
        return delegate.newTwoPhaseOutputStream(path, overwrite);
    }

    @Override
    public FileStatus getFileStatus(Path path) throws IOException {
        return delegate.getFileStatus(path);
    }

    @Override
    public FileStatus[] listStatus(Path path) throws IOException {
        return delegate.listStatus(path);
    }

    @Override
    public RemoteIterator<FileStatus> listFilesIterative(Path path, boolean recursive)
            throws IOException {
        return delegate.listFilesIterative(path, recursive);
    }

    @Override
    public boolean exists(Path path) throws IOException {
        return delegate.exists(path);
    }

    @Override
    public boolean mkdirs(Path path) throws IOException {
        return delegate.mkdirs(path);
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        return delegate.rename(src, dst);
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }
}
