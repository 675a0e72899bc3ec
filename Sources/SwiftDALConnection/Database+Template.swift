import Foundation
import Glibc

extension Database {
    /// Copies the database file `template` to `path` when `path` does not exist yet (the
    /// classic "ship a prepared database" pattern); returns whether it copied. The copy
    /// is made under a temporary name and linked into place, so two processes racing
    /// never see a half-written file, and an existing database is never overwritten.
    ///
    /// For example, `try Database.copyTemplateIfMissing("Fixtures/sample.sqlite", to: "var/app.sqlite")`.
    @discardableResult
    public static func copyTemplateIfMissing(_ template: String, to path: String) throws -> Bool {
        let files = FileManager.default
        if files.fileExists(atPath: path) { return false }
        guard files.fileExists(atPath: template) else {
            throw DALError(.fileSystem, "the template database \(template) does not exist")
        }
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        if !directory.isEmpty, !files.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue {
            throw DALError(.fileSystem, "cannot create \(path): the directory \(directory) does not exist")
        }
        let temporary = path + ".swiftdal-\(UUID().uuidString).tmp"
        do {
            try files.copyItem(atPath: template, toPath: temporary)
        } catch {
            throw DALError(.fileSystem, "cannot copy \(template) to \(temporary): \(error)", underlying: error)
        }
        defer { unlink(temporary) }
        if link(temporary, path) != 0 {
            let code = errno
            if code == EEXIST { return false }
            throw DALError(.fileSystem, "cannot create \(path): \(String(cString: strerror(code)))")
        }
        return true
    }
}
