import Foundation
import SampleDAL

// The main job: a tour of every SwiftDAL operation on an embedded database, created
// from Fixtures/sample.sqlite on the first run and reused (with its data) afterwards.
do {
    guard let options = try Options.parse(Array(CommandLine.arguments.dropFirst())) else { exit(0) }
    if let directory = options.fixturesDirectory {
        try SampleFixtures.build(in: directory)
        print("rebuilt the fixtures in \(directory) from \(SampleSchema.versions.count) migrations")
        exit(0)
    }
    if options.postgresURL != nil && options.mysqlURL != nil {
        throw OptionError("give one of --postgres and --mysql")
    }
    if let url = options.postgresURL {
        try await runOnPostgres(url: url, fixture: options.resolvedTemplate())
        exit(0)
    }
    if let url = options.mysqlURL {
        try await runOnMariaDB(url: url, fixture: options.resolvedTemplate())
        exit(0)
    }
    let directory = (options.databasePath as NSString).deletingLastPathComponent
    if !directory.isEmpty {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
    let existed = FileManager.default.fileExists(atPath: options.databasePath)
    let template = options.resolvedTemplate()
    let pool = try DatabasePool(path: options.databasePath, template: template)
    print("SwiftDAL tour — database \(options.databasePath)")
    print(
        existed
            ? "  reusing the existing database: its data persisted from earlier runs"
            : "  created from the template \(template)")
    // The schema is created and upgraded by the migrations, then checked against the entities.
    let applied = try SampleSchema.migrator.migrate(pool)
    print(
        applied.isEmpty
            ? "  schema is up to date (\(SampleSchema.versions.last ?? ""))"
            : "  applied migrations: \(applied.joined(separator: ", "))")
    try await Tour(pool: pool).takeEveryStop()
    print("Run it again: the visitor rows and their orders are still there.")
    try pool.close()
} catch {
    FileHandle.standardError.write(Data("swiftdal-demo failed: \(error)\n".utf8))
    exit(1)
}
