import Foundation
public import SwiftDALConnection

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension Database {
    /// Copies the database file `template` to `path` when `path` does not exist yet (the
    /// classic "ship a prepared database" pattern); returns whether it copied.
    ///
    /// The template is only ever read: its bytes are copied (a symbolic link is followed
    /// to the file it names, never copied as a link), so the database is always a file
    /// of its own, and writes never reach the template. The copy is made under a
    /// temporary name and linked into place, so two processes racing never see a
    /// half-written file, and an existing database is never overwritten. A `path` that
    /// is a symbolic link to nothing (dangling) is refused rather than followed.
    ///
    /// For example, `try Database.copyTemplateIfMissing("Fixtures/sample.sqlite", to: "var/app.sqlite")`.
    @discardableResult
    public static func copyTemplateIfMissing(_ template: String, to path: String) throws -> Bool {
        try checkNoNUL(template, "template path")
        try checkNoNUL(path, "database path")
        var status = stat()
        if lstat(path, &status) == 0 {
            // Something is there: a database (or a link to one) is used as it is.
            guard (status.st_mode & S_IFMT) == S_IFLNK, stat(path, &status) != 0 else { return false }
            throw DALError(
                .fileSystem, "cannot create \(path): it is a symbolic link to a file that does not exist")
        }
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        if !directory.isEmpty,
            !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue
        {
            throw DALError(.fileSystem, "cannot create \(path): the directory \(directory) does not exist")
        }
        let temporary = path + ".swiftdal-\(UUID().uuidString).tmp"
        try copyFileContents(from: template, to: temporary)
        defer { unlink(temporary) }
        if link(temporary, path) != 0 {
            let code = errno
            if code == EEXIST { return false }
            throw DALError(.fileSystem, "cannot create \(path): \(String(cString: strerror(code)))")
        }
        return true
    }
}

/// Copies the bytes of the regular file `source` (symbolic links followed) into a new
/// file `destination`, synced to disk; `destination` must not exist. (A free function:
/// inside `Database`, `close` would name the connection's method.)
private func copyFileContents(from source: String, to destination: String) throws {
    let input = open(source, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else {
        throw fileSystemError("cannot read the template database \(source)")
    }
    defer { close(input) }
    var status = stat()
    guard fstat(input, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
        throw DALError(.fileSystem, "the template database \(source) is not a regular file")
    }
    let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard output >= 0 else {
        throw fileSystemError("cannot create \(destination)")
    }
    var failure: DALError?
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 16)
    defer { buffer.deallocate() }
    copying: while true {
        let count = read(input, buffer, 1 << 16)
        if count == 0 { break }
        if count < 0 {
            if errno == EINTR { continue }
            failure = fileSystemError("cannot read the template database \(source)")
            break
        }
        var written = 0
        while written < count {
            let result = write(output, buffer + written, count - written)
            if result < 0 {
                if errno == EINTR { continue }
                failure = fileSystemError("cannot write \(destination)")
                break copying
            }
            written += result
        }
    }
    if failure == nil && fsync(output) != 0 { failure = fileSystemError("cannot sync \(destination)") }
    close(output)
    if let failure {
        unlink(destination)
        throw failure
    }
}

private func fileSystemError(_ what: String) -> DALError {
    DALError(.fileSystem, "\(what): \(String(cString: strerror(errno)))")
}
