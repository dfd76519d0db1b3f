package org.paimoncleanup.ref;

import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.fs.FileIO;
import org.apache.paimon.fs.FileStatus;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.PositionOutputStream;
import org.apache.paimon.fs.RemoteIterator;
import org.apache.paimon.fs.SeekableInputStream;
import org.apache.paimon.fs.TwoPhaseOutputStream;
import org.apache.paimon.fs.local.LocalFileIO;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link FileIO} that delegates every call to {@link LocalFileIO} and records each path a
 * delete call removed (files and directories), so that operations which return only a count
 * still tell which files Java deleted.
 */
public final class RecordingFileIO implements FileIO {

    private static final long serialVersionUID = 1L;

    private final LocalFileIO delegate = LocalFileIO.create();
    private final List<String[]> deleted = Collections.synchronizedList(new ArrayList<>());

    /** Every path removed so far, as {path, "file" | "dir"}. */
    public List<String[]> deleted() {
        synchronized (deleted) {
            return new ArrayList<>(deleted);
        }
    }

    private boolean recordDelete(Path path, boolean recursive) throws IOException {
        java.io.File f = new java.io.File(path.toUri().getPath());
        boolean existed = f.exists();
        boolean dir = f.isDirectory();
        if (dir && recursive) {
            // A recursive delete removes everything below: record the files too.
            List<String[]> below = new ArrayList<>();
            walk(f, below);
            boolean r = delegate.delete(path, true);
            for (String[] e : below) {
                if (!new java.io.File(e[0]).exists()) {
                    deleted.add(e);
                }
            }
            if (!f.exists()) {
                deleted.add(new String[] {f.getPath(), "dir"});
            }
            return r;
        }
        boolean r = delegate.delete(path, recursive);
        if (existed && !f.exists()) {
            deleted.add(new String[] {f.getPath(), dir ? "dir" : "file"});
        }
        return r;
    }

    private static void walk(java.io.File dir, List<String[]> out) {
        java.io.File[] children = dir.listFiles();
        if (children == null) {
            return;
        }
        for (java.io.File c : children) {
            if (c.isDirectory()) {
                walk(c, out);
                out.add(new String[] {c.getPath(), "dir"});
            } else {
                out.add(new String[] {c.getPath(), "file"});
            }
        }
    }

    @Override
    public boolean delete(Path path, boolean recursive) throws IOException {
        return recordDelete(path, recursive);
    }

    @Override
    public void deleteQuietly(Path file) {
        try {
            recordDelete(file, false);
        } catch (IOException ignored) {
            // quiet, as FileIO.deleteQuietly
        }
    }

    @Override
    public void deleteFilesQuietly(List<Path> files) {
        for (Path p : files) {
            deleteQuietly(p);
        }
    }

    @Override
    public void deleteDirectoryQuietly(Path directory) {
        try {
            recordDelete(directory, true);
        } catch (IOException ignored) {
            // quiet, as FileIO.deleteDirectoryQuietly
        }
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
    public FileStatus[] listFiles(Path path, boolean recursive) throws IOException {
        return delegate.listFiles(path, recursive);
    }

    @Override
    public RemoteIterator<FileStatus> listFilesIterative(Path path, boolean recursive)
            throws IOException {
        return delegate.listFilesIterative(path, recursive);
    }

    @Override
    public FileStatus[] listDirectories(Path path) throws IOException {
        return delegate.listDirectories(path);
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
    public long getFileSize(Path path) throws IOException {
        return delegate.getFileSize(path);
    }

    @Override
    public boolean isDir(Path path) throws IOException {
        return delegate.isDir(path);
    }

    @Override
    public void checkOrMkdirs(Path path) throws IOException {
        delegate.checkOrMkdirs(path);
    }

    @Override
    public String readFileUtf8(Path path) throws IOException {
        return delegate.readFileUtf8(path);
    }

    @Override
    public boolean tryToWriteAtomic(Path path, String content) throws IOException {
        return delegate.tryToWriteAtomic(path, content);
    }

    @Override
    public void writeFile(Path path, String content, boolean overwrite) throws IOException {
        delegate.writeFile(path, content, overwrite);
    }

    @Override
    public void overwriteFileUtf8(Path path, String content) throws IOException {
        delegate.overwriteFileUtf8(path, content);
    }

    @Override
    public void overwriteHintFile(Path path, String content) throws IOException {
        delegate.overwriteHintFile(path, content);
    }

    @Override
    public void copyFile(Path src, Path dst, boolean overwrite) throws IOException {
        delegate.copyFile(src, dst, overwrite);
    }

    @Override
    public void copyFiles(Path src, Path dst, boolean overwrite) throws IOException {
        delegate.copyFiles(src, dst, overwrite);
    }

    @Override
    public Optional<String> readOverwrittenFileUtf8(Path path) throws IOException {
        return delegate.readOverwrittenFileUtf8(path);
    }
}
